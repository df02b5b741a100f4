"""pyarrow's question about pandas is settled as "absent" by our commands (`core.pandas_probe`):
scoring and validating never import pandas, and pandas still works with pyarrow afterwards.

Each check runs in a fresh interpreter: the answer is per process, and this one has pandas."""

from __future__ import annotations

import pytest

from .conftest import fresh_python


def _python(code: str) -> str:
    return fresh_python(code).strip()


@pytest.fixture(scope="module")
def smoke_file(reference, tmp_path_factory):
    from mathbode.builder.oracle import baseline_lines
    from mathbode.core.atomic import write_jsonl
    from mathbode.schema.selection import select_rows

    path = tmp_path_factory.mktemp("probe") / "smoke.jsonl"
    write_jsonl(path, baseline_lines(select_rows(reference.table, "SMOKE")))
    return path


@pytest.mark.parametrize("command", ["score", "validate"])
def test_scoring_and_validating_a_file_never_import_pandas(smoke_file, tmp_path, command):
    argv = [command, str(smoke_file)]
    if command == "score":
        argv += ["--no-plots", "--out", str(tmp_path / "report")]
    found = _python(
        f"""
        import sys
        from mathbode.cli import launch
        sys.argv = ["mathbode", *{argv!r}]
        try:
            launch.mathbode()
        except SystemExit as stop:
            assert stop.code == 0, stop.code
        print("pandas" in sys.modules)
        """
    )
    assert found.splitlines()[-1] == "False"


def test_pandas_and_pyarrow_still_work_together_once_the_question_is_settled():
    found = _python(
        """
        import sys
        from mathbode.core.pandas_probe import answer_pyarrow_pandas_absent
        answer_pyarrow_pandas_absent()
        import pyarrow as pa
        pa.array([1.5, None]).to_numpy(zero_copy_only=False)
        assert "pandas" not in sys.modules
        frame = pa.table({"a": [1.5, 2.5]}).to_pandas()
        import pandas as pd
        assert pa.Table.from_pandas(frame).column("a").to_pylist() == [1.5, 2.5]
        assert pa.array(pd.Series([1, 2])).to_pylist() == [1, 2]
        assert pa.array(pd.Categorical(["x", "y", "x"])).type.value_type in (pa.string(), pa.large_string())
        print("ok")
        """
    )
    assert found == "ok"
