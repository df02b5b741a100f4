"""The scorer: a submission's answers against the canonical rows -> a results document.

It owns what is computed: parsing and per-sweep fits (`metrics`, `calibration`, `angles`), the
reference's rows arranged for scoring (`reference_index`), frequency means and family scores
(`aggregate`), intervals and paired tests (`uncertainty`), equivalent delay and time constant
(`dynamics`), chirp and step measurements (`transients`, `diagnostics`), lag and inconsistency
(`phase_parts`), repeatability (`repeatability`), neighbour tests (`compare`), and the pipeline
that runs them (`scoring`). Pure numpy and scipy: it never imports matplotlib or the presentation.
"""
