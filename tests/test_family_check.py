"""`mathbode family check`: a sound family passes; each kind of broken family is refused with its
own code and a message that says what to change."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import textwrap

import pytest
import sympy as sp

from mathbode.builder.families import FAMILIES, Family, Variant
from mathbode.builder.families.check import check_family
from mathbode.builder.rows import family_table
from mathbode.core.hashing import content_hash

a, L = sp.symbols("a L")


def _ladder(**changes) -> Family:
    """A sound algebraic family: the height a ladder of length L reaches with its foot a metres out."""
    base = dict(
        name="ladder_height",
        version="1.0.0",
        title="Ladder Height",
        summary="The height sqrt(L**2 - a**2) a ladder reaches; the distance a of its foot is driven.",
        parameter=a,
        parameter_meaning="the distance a of the foot from the wall, in metres",
        answer=sp.sqrt(L**2 - a**2),
        p_range=("1", "3"),
        p0="2",
        decimals=3,
        variants=(Variant({"L": "5"}), Variant({"L": "6.5"}), Variant({"L": "8"})),
        template=(
            "A {L} m ladder leans on a wall with its foot {p} m from the wall. "
            "How high up the wall does it reach, in m?"
        ),
    )
    base.update(changes)
    family = Family(**base)
    if "pins" not in changes:
        family = dataclasses.replace(family, pins={family.version: content_hash(family_table(family))})
    return family


def test_a_sound_family_passes_and_says_its_facts():
    report = check_family(_ladder())
    assert report.passed, report.format_text()
    assert report.facts["answer kind"] == "algebraic"
    assert report.facts["answer formula"] == "sqrt(L**2 - a**2)"
    assert report.table is not None and report.table.num_rows == 9408
    assert "truth's harmonic distortion at amplitude 2.5" in report.facts


@pytest.mark.parametrize("family", list(FAMILIES.values()), ids=list(FAMILIES))
def test_the_canonical_families_pass(family):
    assert check_family(family).passed


x = sp.Symbol("x")
BROKEN = {
    "name": (dict(name="Ladder-Height"), "is not valid: lowercase letters"),
    "version": (dict(version="one"), "is not a version number"),
    "variants": (
        dict(variants=(Variant({"L": "5"}), Variant({"L": "6"}))),
        "the family has 2 variants; the layout asks 3",
    ),
    "constants": (
        dict(variants=(Variant({"L": "5"}), Variant({"L": "six"}), Variant({"L": "8"}))),
        "'six' is not an exact decimal",
    ),
    "template": (dict(template="A ladder's foot is {p} m out. How high does it reach?"), "the template never shows L"),
    "unfilled": (
        dict(template="A {L} m ladder, foot {p} m out, {M} m tall wall. How high?"),
        "the template has M, which no constant fills",
    ),
    "same variants": (
        dict(variants=(Variant({"L": "5"}), Variant({"L": "5.0"}), Variant({"L": "8"}))),
        "questions 0 and 1 have the same constants",
    ),
    "solutions": (dict(answer=None, unknowns=(x,), equations=(sp.Eq(x**2 + a**2, L**2),)), "sympy finds 2 solutions"),
    "root rule": (
        dict(answer=None, unknowns=(x,), equations=(sp.Eq((x - a) * (x - L), 0),), root="negative", pins={}),
        "the rule root='negative' picks none of them",
    ),
    "domain": (dict(answer=sp.sqrt(L**2 - 9 * a**2)), "is not proven real and finite for p in"),
    "pole": (
        dict(answer=L / (a - 2.5 + 0 * a) if False else L / (a - sp.Rational(5, 2))),
        "is not proven real and finite",
    ),
    "magnitude": (dict(answer=10**10 * sp.sqrt(L**2 - a**2)), "keeps |answer| <= 1e+9"),
    "swing": (dict(answer=L + a / 10**6), "under 0.001 (a thousand units"),
    "clipping": (dict(epsilon="0.5"), "the drive would clip"),
    "resolution": (
        dict(decimals=1, epsilon="0.1", p_range=("1", "3"), p0="2"),
        "fewer than 10 steps of its last digit",
    ),
    "decimals": (dict(p0="2.0005"), "more than decimals = 3 digits"),
    "float": (dict(answer=sp.Float("0.5") * L * a), "holds the float"),
    "stray symbol": (dict(answer=L * a * sp.Symbol("g")), "depends on g, which no constant fills"),
    "same answers": (dict(answer=sp.sqrt(25 - a**2)), "the variants give the same answer at p0"),
    "unpinned": (dict(pins={}), "version 1.0.0 is not pinned: add pins={'1.0.0': 'sha256:"),
    "changed": (dict(pins={"1.0.0": "sha256:" + "0" * 64}), "the rows changed but the version is still 1.0.0"),
}
CODES = {
    "unfilled": "template",
    "same variants": "variants",
    "root rule": "solutions",
    "pole": "domain",
    "float": "answer",
    "stray symbol": "answer",
    "same answers": "variants",
}


@pytest.mark.parametrize("case", list(BROKEN), ids=list(BROKEN))
def test_each_kind_of_broken_family_is_refused_with_its_own_message(case):
    changes, message = BROKEN[case]
    report = check_family(_ladder(**changes, **({} if "pins" in changes else {"pins": {"1.0.0": "x"}})))
    assert not report.passed
    codes = [f.code for f in report.problems]
    assert CODES.get(case, case) in codes, report.format_text()
    if message:
        assert any(message in f.message for f in report.problems), report.format_text()


def test_a_root_rule_that_picks_none_says_so():
    family = _ladder(answer=None, unknowns=(x,), equations=(sp.Eq(x**2 + a**2, L**2),), root="negative", pins={})
    assert sp.simplify(family.question_answer(0) + sp.sqrt(25 - a**2)) == 0  # the negative root, proven on [1, 3]
    good = _ladder(answer=None, unknowns=(x,), equations=(sp.Eq(x**2 + a**2, L**2),), root="positive")
    assert check_family(good).passed
    assert good.formula == "the positive of -sqrt(-(-L + a)*(L + a)), sqrt(-(-L + a)*(L + a))"


def test_the_command_checks_a_file_and_exits_1_naming_the_failure(tmp_path):
    source = textwrap.dedent(
        """
        import sympy as sp
        from mathbode.builder.families import Family, Variant

        a, L = sp.symbols("a L")
        FAMILY = Family(
            name="ladder_height", version="1.0.0", title="Ladder", summary="A ladder.", parameter=a,
            parameter_meaning="the foot's distance a", answer=sp.sqrt(L**2 - a**2), p_range=("1", "3"),
            p0="2", decimals=3, variants=(Variant({"L": "5"}), Variant({"L": "6.5"}), Variant({"L": "8"})),
            template="A {L} m ladder, foot {p} m out. How high?",
        )
        """
    )
    path = tmp_path / "ladder.py"
    path.write_text(source)
    proc = subprocess.run(
        [sys.executable, "-m", "mathbode", "family", "check", str(path)], capture_output=True, text=True
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("FAIL ladder_height\n")
    assert "error   [unpinned] version 1.0.0 is not pinned: add pins={'1.0.0': 'sha256:" in proc.stdout
    assert proc.stdout.rstrip().endswith("0 of 1 families passed; 1 failed")

    broken = tmp_path / "broken.py"
    broken.write_text("import nothing_of_the_kind\n")
    proc = subprocess.run(
        [sys.executable, "-m", "mathbode", "family", "check", str(broken)], capture_output=True, text=True
    )
    assert (
        proc.returncode == 2
        and "fails to import: ModuleNotFoundError" in proc.stderr
        and "Traceback" not in proc.stderr
    )


def test_the_command_checks_built_in_families_by_name():
    proc = subprocess.run(
        [sys.executable, "-m", "mathbode", "family", "check", "similar_triangles"], capture_output=True, text=True
    )
    assert proc.returncode == 0 and proc.stdout.rstrip().endswith("1 of 1 families passed.")
    proc = subprocess.run(
        [sys.executable, "-m", "mathbode", "family", "check", "similar_triangle"], capture_output=True, text=True
    )
    assert proc.returncode == 2 and "Did you mean 'similar_triangles'" in proc.stderr


def test_numbers_given_as_floats_mean_the_decimals_the_prompt_prints():
    as_text = _ladder(variants=(Variant({"L": "5"}), Variant({"L": "6.1"}), Variant({"L": "8"})), pins={})
    as_floats = _ladder(
        variants=(Variant({"L": 5}), Variant({"L": 6.1}), Variant({"L": 8})), p_range=(1, 3), p0=2, pins={}
    )
    assert as_floats.variants[1].exact()["L"] == sp.Rational(61, 10)  # not the binary float nearest 6.1
    assert content_hash(family_table(as_floats)) == content_hash(family_table(as_text))
