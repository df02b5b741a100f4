"""The intervals' Student t functions: scipy's own ufuncs, loaded without scipy.special's package
(`uncertainty.t_ufuncs`), give the very floats `scipy.special` gives, and leave scipy.special
whole for any later import.

Each check of the loading runs in a fresh interpreter: what is imported is per process."""

from __future__ import annotations

import json

import pytest

from mathbode.evaluator.scorer import uncertainty

from .conftest import fresh_python

#: Degrees of freedom the scorer asked for on the FULL exact file (Satterthwaite's: not integers),
#: small ones of cells of 2 to 4 sweeps, and large ones.
DFS = [1, 2, 3, 26, 26.004708066043037, 31.951630983442087, 51.94922913558024, 1234.5, 1e6]


def _fresh(code: str) -> dict:
    return json.loads(fresh_python(code).strip().splitlines()[-1])


def test_the_ufuncs_loaded_alone_are_scipy_specials_own_and_give_the_same_floats():
    found = _fresh(
        f"""
        import json, sys
        from mathbode.evaluator.scorer import uncertainty
        module = uncertainty.t_ufuncs()
        alone = module.__name__, "scipy.special" in sys.modules
        quantiles = [uncertainty.t_quantile(p, df).hex() for p in (0.975, 0.5, 0.999) for df in {DFS!r}]
        cdfs = [uncertainty.t_cdf(t, df).hex() for t in (0.0, 1.7, -12.0) for df in {DFS!r}]
        import scipy.special, scipy.stats  # the package, imported in full afterwards
        print(json.dumps({{
            "alone": alone,
            "same_ufuncs": scipy.special.stdtrit is module.stdtrit and scipy.special.stdtr is module.stdtr,
            "quantiles": quantiles == [float(scipy.special.stdtrit(df, p)).hex() for p in (0.975, 0.5, 0.999)
                                       for df in {DFS!r}],
            "cdfs": cdfs == [float(scipy.special.stdtr(df, t)).hex() for t in (0.0, 1.7, -12.0) for df in {DFS!r}],
            "package_whole": float(scipy.special.gamma(5.0)) == 24.0 and hasattr(scipy.special, "erf"),
            "stats": round(float(scipy.stats.binomtest(3, 10, 0.5).pvalue), 6),
        }}))
        """
    )
    assert found == {
        "alone": ["scipy.special._ufuncs", False],
        "same_ufuncs": True,
        "quantiles": True,
        "cdfs": True,
        "package_whole": True,
        "stats": 0.34375,
    }


def test_with_scipy_special_loaded_the_package_is_used():
    found = _fresh(
        """
        import json, scipy.special
        from mathbode.evaluator.scorer import uncertainty
        print(json.dumps({"module": uncertainty.t_ufuncs().__name__}))
        """
    )
    assert found == {"module": "scipy.special"}


def test_with_another_thread_running_the_package_is_imported_in_full():
    """Another thread could import scipy.special while the empty package stands in for it."""
    found = _fresh(
        """
        import json, sys, threading
        from mathbode.evaluator.scorer import uncertainty
        stop = threading.Event()
        other = threading.Thread(target=stop.wait)
        other.start()
        try:
            name = uncertainty.t_ufuncs().__name__
        finally:
            stop.set()
            other.join()
        print(json.dumps({"module": name, "package": "scipy.special" in sys.modules}))
        """
    )
    assert found == {"module": "scipy.special", "package": True}


def test_in_this_process_the_t_quantile_is_scipys():
    import scipy.special

    for df in DFS:
        assert uncertainty.t_quantile(0.975, df) == float(scipy.special.stdtrit(df, 0.975))
    assert uncertainty.t_quantile(0.975, 1) == pytest.approx(12.706204736174696, abs=1e-12)
