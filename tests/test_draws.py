"""Fresh splits' draws: every built-in family declares a valid grid for each constant, holding its
released variants, and questions drawn from those grids almost always pass the family check."""

from __future__ import annotations

import dataclasses
import random
from decimal import Decimal

import pytest

from mathbode.builder.families import EXTENDED, Variant, builtin_families
from mathbode.builder.families.check import check_family
from mathbode.builder.families.draws import Draw
from mathbode.builder.rows import family_table
from mathbode.core.hashing import content_hash

BUILTIN = builtin_families()
NAMES = list(BUILTIN)
#: Drawn families per family: 20 x 21 family checks take about 30 s on one core.
DRAWS_PER_FAMILY = 20
#: The share of drawn families that must pass every check but the pin.
MIN_PASS_RATE = 0.8


def _places(text: str) -> int:
    exponent = Decimal(text).as_tuple().exponent
    assert isinstance(exponent, int)
    return max(0, -exponent)


def _on_grid(draw: Draw, text: str) -> bool:
    value, low, high, step = (Decimal(x) for x in (text, draw.low, draw.high, draw.step))
    return low <= value <= high and (value - low) % step == 0


# -- (a) the declared grids ------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_every_constant_of_every_variant_has_a_draw(name):
    family = BUILTIN[name]
    for q, variant in enumerate(family.variants):
        assert set(family.draws) == set(variant.constants), f"{name} question {q}"
    assert all(isinstance(draw, Draw) for draw in family.draws.values())


@pytest.mark.parametrize("name", NAMES)
def test_each_grid_is_valid_and_holds_the_released_constants(name):
    family = BUILTIN[name]
    for constant, draw in family.draws.items():
        count = draw.values()  # raises on an invalid grid
        assert count >= 2, f"{name}.{constant}: {draw}"
        if name in EXTENDED:
            assert count >= 20, f"{name}.{constant}: only {count} values"
        for q, variant in enumerate(family.variants):
            value = str(variant.constants[constant])
            assert _on_grid(draw, value), f"{name} question {q}: {constant} = {value} is not on {draw}"


@pytest.mark.parametrize("name", NAMES)
def test_a_drawn_value_is_written_with_the_steps_decimals(name):
    for constant, draw in BUILTIN[name].draws.items():
        count, step = draw.values(), Decimal(draw.step)
        decimals = _places(str(step.normalize()))
        for index in sorted({0, 1, count // 2, count - 1}):
            text = draw.value(index)
            assert _places(text) == decimals, f"{name}.{constant}[{index}] = {text!r}"
            assert Decimal(text) == Decimal(draw.low) + index * step
        assert Decimal(draw.value(count - 1)) == Decimal(draw.high)


@pytest.mark.parametrize("name", NAMES)
def test_draws_are_not_rows_the_pinned_content_stays(name):
    family = BUILTIN[name]
    found = content_hash(family_table(family))
    assert found == family.pins[family.version]
    assert content_hash(family_table(dataclasses.replace(family, draws={}))) == found


def test_replacing_the_variants_gives_the_new_answers_not_the_cached_ones():
    family = EXTENDED["garden_width"]
    before = family.answer_function(0)
    drawn = dataclasses.replace(family, variants=tuple(Variant({"d": d}) for d in ("1.0", "2.0", "9.0")), pins={})
    assert drawn.answer_function(0) is not before
    assert drawn.answer_function(0).float_at(100) != before.float_at(100)


# -- (b) drawn questions pass the family check -------------------------------------------------
def _drawn(family, rng: random.Random):
    def variant() -> Variant:
        return Variant({c: d.value(rng.randrange(d.values())) for c, d in sorted(family.draws.items())})

    return dataclasses.replace(family, variants=(variant(), variant(), variant()), pins={})


def test_almost_every_drawn_family_passes_the_family_check():
    rates, first_failure = {}, {}
    for name, family in BUILTIN.items():
        rng = random.Random(0)
        passed = 0
        for _ in range(DRAWS_PER_FAMILY):
            drawn = _drawn(family, rng)
            # The draws' business: the family's own check (its surfaces are the variants' tests').
            problems = [p for p in check_family(drawn, surfaces=False).problems if p.code != "unpinned"]
            if problems:
                constants = [dict(v.constants) for v in drawn.variants]
                first_failure.setdefault(name, f"{constants}: {problems[0]}")
            else:
                passed += 1
        rates[name] = passed / DRAWS_PER_FAMILY
    table = "\n".join(
        f"  {name}: {rate:.0%}" + (f"  (e.g. {first_failure[name][:240]})" if name in first_failure else "")
        for name, rate in rates.items()
    )
    print(f"\ndrawn families passing the family check ({DRAWS_PER_FAMILY} draws each):\n{table}")
    low = [name for name, rate in rates.items() if rate < MIN_PASS_RATE]
    assert not low, f"under {MIN_PASS_RATE:.0%} of drawn families pass for {', '.join(low)}:\n{table}"
