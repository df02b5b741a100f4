"""The presentation: everything a reader sees, rendered from results documents alone.

It owns the report folder (`report`: report.md, scores.json; `files`: its file names and CSV
tables), the Bode plot (`plots`) and the other figures (`figures`), the plot drawn in a second
process (`background`, `plot_worker`), the lines about neighbour tests (`comparison`) and the
leaderboard site (`site`, with its templates and scripts in `site_assets/`). It reads the
results document (`mathbode.evaluator.results`) and never imports the scorer, so a report or a
site can be made again from saved documents without scoring anything.
"""
