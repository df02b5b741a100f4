"""Null models read with the presets' own row structure: how often each verdict and test claims
what is not there.

A null model is a model with a known answer: fresh noise on every request (1, 5 and 20 % of the
truth), a fixed per-prompt error (each distinct prompt answered exactly or 1 % off, half and half,
the same every time it is asked), answers rounded to 1-3 decimals, and the exact answers. None has
memory, none lags, none answers a GAP variant differently from its original; fresh noise adds
nothing that repeats across periods (no distortion, no per-prompt inconsistency).

What makes this calibration honest is the row structure: the answers are drawn exactly as `mathbode
run` asks (one draw per request: each row its own request, or, under --dedupe, each distinct prompt
once and its answer copied to the rows that ask it), over the rows a preset really selects
(repeated prompts, one question a family, a GAP variant's rows beside its original's), and read by
the real scorer (`mathbode.evaluator.scorer.scoring.score`, what `mathbode score` calls).
`tests/test_calibration.py` checks that a run through `mathbode run` and the stand-in server asks
the requests counted here.

Each claim is counted per reading it is made on (a family's verdict, a GAP pair's test, a
submission's interval), `repetitions` times with fresh draws.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from mathbode.evaluator.scorer import scoring
from mathbode.evaluator.scorer.multitone import INCONSISTENCY
from mathbode.evaluator.scorer.scoring import score
from mathbode.schema.answers import Prediction
from mathbode.schema.keys import row_key
from mathbode.schema.reference import Reference
from mathbode.schema.selection import select_rows

#: A model: (truth per row, request number per row, distinct-prompt number per row, rng) -> answers.
Model = Callable[[np.ndarray, np.ndarray, np.ndarray, np.random.Generator], np.ndarray]


def fresh_noise(level: float) -> Model:
    """The truth times 1 + level N(0, 1), drawn anew for every request."""

    def answer(truth: np.ndarray, request: np.ndarray, prompt: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        draws = rng.standard_normal(int(request.max()) + 1)
        return truth * (1 + level * draws[request])

    return answer


def fixed_error(truth: np.ndarray, request: np.ndarray, prompt: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each distinct prompt answered exactly or 1 % off (half and half), the same each time it is asked."""
    n = int(prompt.max()) + 1
    off = rng.random(n) < 0.5
    return np.where(off[prompt], truth * (1 + 0.01 * rng.standard_normal(n)[prompt]), truth)


def rounded(decimals: int) -> Model:
    """The truth rounded to `decimals` places (a quantizer: memoryless, the same for a variant)."""

    def answer(truth: np.ndarray, request: np.ndarray, prompt: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return np.round(truth, decimals)

    return answer


def exact(truth: np.ndarray, request: np.ndarray, prompt: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return truth.copy()


MODELS: dict[str, Model] = {
    "noise 1 %": fresh_noise(0.01),
    "noise 5 %": fresh_noise(0.05),
    "noise 20 %": fresh_noise(0.20),
    "fixed per-prompt error": fixed_error,
    "rounded to 1 decimal": rounded(1),
    "rounded to 2 decimals": rounded(2),
    "rounded to 3 decimals": rounded(3),
    "exact answers": exact,
}
#: A quantizer is a static nonlinearity and errors particular to each prompt: on these models a
#: distortion or inconsistency claim is true, not false.
NOT_NULL_FOR = {
    "distortion": {"rounded to 1 decimal", "rounded to 2 decimals", "rounded to 3 decimals", "fixed per-prompt error"},
    "inconsistency": {
        "rounded to 1 decimal",
        "rounded to 2 decimals",
        "rounded to 3 decimals",
        "fixed per-prompt error",
    },
}


@dataclass(frozen=True)
class Structure:
    """The rows one run asks and how: a release, a preset, the protocol, --dedupe."""

    name: str
    reference: Reference
    preset: str
    protocol: str = "stateless"
    dedupe: bool = False

    def rows(self) -> list[dict[str, Any]]:
        return select_rows(self.reference.table, self.preset, self.reference.universe)


@dataclass
class Prepared:
    """A structure's rows as arrays, made once: truth, each row's request and distinct prompt."""

    structure: Structure
    keys: list[Any]
    truth: np.ndarray
    request: np.ndarray
    prompt: np.ndarray

    @classmethod
    def of(cls, structure: Structure) -> "Prepared":
        rows = structure.rows()
        prompts: dict[str, int] = {}
        prompt = np.array([prompts.setdefault(r["prompt"], len(prompts)) for r in rows], dtype=np.int64)
        request = prompt if structure.dedupe else np.arange(len(rows), dtype=np.int64)
        truth = np.array([r["ground_truth"] for r in rows], dtype=float)
        return cls(structure, [row_key(r) for r in rows], truth, request, prompt)

    @property
    def requests(self) -> int:
        return int(self.request.max()) + 1 if len(self.request) else 0

    def read(self, model: Model, rng: np.random.Generator) -> Any:
        """One run of `model` on these rows, scored as `mathbode score` scores it (but for its
        repeatability, which no claim here reads: half of a multi-tone score's time)."""
        values = model(self.truth, self.request, self.prompt, rng)
        predictions = [
            Prediction(key, i + 1, None, float(v) if math.isfinite(v) else None, False)
            for i, (key, v) in enumerate(zip(self.keys, values.tolist(), strict=True))
        ]
        s = self.structure
        conditions = {"protocol": s.protocol, "dedupe": "yes" if s.dedupe else "no"}
        # A multi-tone release is scored whole, as `mathbode score` reads it without --preset.
        preset = None if s.preset == "ALL" else s.preset
        unread = scoring._repeatability
        scoring._repeatability = lambda *args, **kwargs: {"measured": False, "note": "not read"}
        try:
            return score(predictions, s.reference, "null", preset=preset, conditions=conditions, resamples=1)
        finally:
            scoring._repeatability = unread


def claims(result: Any) -> dict[str, list[bool]]:
    """Each claim the scored result makes, one entry per reading it is made on (True: claimed)."""
    extra = result.extra
    out: dict[str, list[bool]] = {}
    for d in (extra.get("dynamics") or {}).values():
        out.setdefault("lag", []).append(d.get("reading") in ("delay", "low-pass", "lag"))
    for m in ((extra.get("multitone") or {}).get("families") or {}).values():
        out.setdefault("distortion", []).append(m.get("distortion_detected") is True)
        out.setdefault("inconsistency", []).append(INCONSISTENCY in m["verdict"])
        if m["memory"].get("read"):
            out.setdefault("memory", []).append(m["memory"].get("found") is True)
    entries = [v for by_kind in (extra.get("variants") or {}).values() for v in by_kind.values()]
    for v in entries:
        out.setdefault("McNemar, one pair (raw p < 0.05)", []).append(v["mcnemar_p"] < 0.05)
        iv = v.get("mb_core_diff_interval")
        if iv:
            out.setdefault("paired MB-Core interval excludes 0", []).append(not iv[0] <= 0 <= iv[1])
    if entries:
        out.setdefault("McNemar, any pair of a submission (Holm p < 0.05)", []).append(
            any(v["mcnemar_p_holm"] < 0.05 for v in entries)
        )
    return out


#: Each claim's nominal false-claim rate (an interval's: its miss rate).
NOMINAL = {
    "lag": 0.001,
    "memory": 0.001,
    "distortion": 0.001,
    "inconsistency": 0.001,
    "McNemar, one pair (raw p < 0.05)": 0.05,
    "McNemar, any pair of a submission (Holm p < 0.05)": 0.05,
    "paired MB-Core interval excludes 0": 0.05,
    "Wilson interval misses the share of exact prompts": 0.05,
}


def wilson_miss(result: Any, share: float) -> list[bool]:
    """Whether the accuracy's Wilson interval (over distinct prompts) misses the population share."""
    interval = result.extra["accuracy"]["wilson_95"]
    return [] if interval is None else [not interval[0] <= share <= interval[1]]


def calibrate(
    prepared: Prepared, models: dict[str, Model], repetitions: int, seed: int = 20261204
) -> dict[str, dict[str, list[int]]]:
    """model -> claim -> [claimed, readings] over `repetitions` runs."""
    out: dict[str, dict[str, list[int]]] = {}
    for name, model in models.items():
        digest = hashlib.sha256(f"{seed}|{prepared.structure.name}|{name}".encode()).digest()
        rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
        counts: dict[str, list[int]] = {}
        for _ in range(repetitions):
            result = prepared.read(model, rng)
            found = claims(result)
            if model is fixed_error:
                # Half the distinct prompts exact, each drawn alone: the population share is 1/2.
                found["Wilson interval misses the share of exact prompts"] = wilson_miss(result, 0.5)
            for claim, flags in found.items():
                if name in NOT_NULL_FOR.get(claim, ()):
                    continue
                tally = counts.setdefault(claim, [0, 0])
                tally[0] += sum(flags)
                tally[1] += len(flags)
        out[name] = counts
    return out


def binomial_bound(rate: float, n: int, z: float = 3.0) -> float:
    """The upper edge a claim's count may reach by chance at its nominal `rate`: rate + z standard
    errors (with a floor of one standard error for rates near 0, so that 0 of n passes)."""
    return rate + z * math.sqrt(max(rate * (1 - rate), 1 / n) / n)
