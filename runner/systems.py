"""Known systems applied to a release's exact answers: the models whose readings prove MathBode's.

One definition, shared by the stand-in server a user starts (`python -m mathbode.runner.stub_model`),
the tests' scripted server (`tests/fixtures/stub_openai.py`) and the benchmarks, so that what
the README and the docs say a system reads is what the stand-in serves under that name.

A model name is a pattern with its numbers filled in (`delay-2`, `anchor-0.5`, `poly-0.05-0.1`);
`PATTERNS` lists them. The numbers are written without a sign: a minus would read as a separator.

Each system sees what a model sees, the messages of one request: the user turns (each a row's
prompt, or its question with the answer instruction sent apart as the system message) and, in a
sequential conversation, its own earlier answers. Its values are the exact answers t of the
release; the static maps are written in the deviation u = (t - c) / s of a question's exact
answers from their centre c, s their scale (`deviations`: the mean, and the standard deviation
times sqrt 2, the amplitude of a sinusoid of that spread), so that one coefficient means the
same bend on every question.

The exact answers (`truth`, `delay-K`) are written truncated to six decimals, as
`mathbode-baseline` writes them; a computed answer is written rounded to six decimals.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Mapping

import numpy as np

from mathbode.schema.drives import MULTITONE_SIGNALS
from mathbode.schema.layout import layout
from mathbode.schema.parsing import truncate

#: What a prompt outside the release is answered with: text the strict parser finds no answer in.
UNKNOWN_PROMPT = "I do not know this question."

#: A parameter of a pattern: a number without a sign (0.5, 2, .25).
_NUMBER = r"(\d+(?:\.\d*)?|\.\d+)"


@dataclass(frozen=True)
class Pattern:
    """A family of models: its name as a pattern, its parameters' letters, what it answers."""

    #: `delay-K`: the kind, then one capital letter per number.
    pattern: str
    #: A model of the pattern the docs use (what `/v1/models` lists as its id).
    example: str
    #: What it answers, in one line (`--help`, `/v1/models`).
    about: str
    #: What each letter may be, said when a request gives a number out of range.
    rules: str = ""

    @property
    def kind(self) -> str:
        return self.pattern.split("-")[0]

    @property
    def arity(self) -> int:
        return self.pattern.count("-")


PATTERNS: tuple[Pattern, ...] = (
    Pattern("truth", "truth", "the exact answer, truncated to six decimals (MB-Core 1)"),
    Pattern("noisy", "noisy", "the exact answer times 1 + s N(0, 1), s the server's --noise, drawn afresh per request"),
    Pattern(
        "delay-K",
        "delay-2",
        "the exact answer of the question K user turns back in its conversation: a pure delay of K steps "
        "(sequential protocol; a stateless request answers its own question)",
        "K a whole number of steps, 0 to 64",
    ),
    Pattern(
        "anchor-A",
        "anchor-0.5",
        "a first-order low-pass over its conversation: y = p + A (t - p), p its own previous answer (t when "
        "it has none)",
        "0 < A <= 1",
    ),
    Pattern(
        "gain-G",
        "gain-0.8",
        "a linear gain error: the question's centre c plus G (t - c), the same map at every level",
        "G > 0",
    ),
    Pattern(
        "poly-E-O",
        "poly-0.05-0.1",
        "a static map of the exact answer t: t + s (E u^2 + O u^3), E even-order and O odd-order",
    ),
    Pattern(
        "wiener-A-E-O",
        "wiener-0.5-0-0.1",
        "the low-pass of anchor-A over its conversation's exact answers, then poly-E-O (a Wiener system)",
        "0 < A <= 1",
    ),
    Pattern(
        "hammerstein-A-E-O",
        "hammerstein-0.5-0-0.1",
        "poly-E-O of each exact answer of its conversation, then the low-pass of anchor-A (a Hammerstein system)",
        "0 < A <= 1",
    ),
    Pattern(
        "jitter-E",
        "jitter-0.01",
        "t + E s z(prompt): a fixed error per prompt in the question's own scale, the same on every request",
    ),
    Pattern(
        "fixed-E",
        "fixed-0.05",
        "t (1 + E z(prompt)): a fixed relative error per prompt, the same on every request (no dynamics at all)",
    ),
    Pattern(
        "numbers",
        "numbers",
        "from the prompt's numbers alone (blind to names): the exact answer for about half the prompts, "
        "t (1 + 0.001 N(0, 1)) for the others",
    ),
    Pattern(
        "gsgain-G",
        "gsgain-1.3",
        "numbers, times G whenever a garbled (GS) name of a paired release is in the prompt",
        "G > 0",
    ),
)
_BY_KIND = {p.kind: p for p in PATTERNS}


class UnknownModel(ValueError):
    """A model name no pattern serves, or a pattern with numbers it cannot take; the message says
    which, and what the server serves."""


@dataclass(frozen=True)
class System:
    """A model name read: its kind and its numbers."""

    kind: str
    #: The low-pass's coefficient (anchor, wiener, hammerstein).
    alpha: float = 1.0
    #: The static map's even (u^2) and odd (u^3) coefficients.
    even: float = 0.0
    odd: float = 0.0
    #: jitter's and fixed's error size, gain's and gsgain's gain.
    size: float = 0.0
    #: delay's steps.
    steps: int = 0

    def response(self, cycles: float, time_steps: int = 64) -> complex:
        """The frequency response at `cycles` per `time_steps` of a linear system (truth, delay,
        anchor): what the Bode plot of its answers reads, in steady state (ValueError for another)."""
        w = 2 * math.pi * cycles / time_steps
        if self.kind == "truth":
            return 1 + 0j
        if self.kind == "delay":
            return complex(math.cos(w * self.steps), -math.sin(w * self.steps))
        if self.kind == "anchor":
            return self.alpha / (1 - (1 - self.alpha) * complex(math.cos(w), -math.sin(w)))
        if self.kind == "gain":
            return complex(self.size)
        raise ValueError(f"{self.kind}: not a linear system; its reading has no closed form here")


def served() -> str:
    """The patterns, as a message lists them."""
    return ", ".join(p.pattern for p in PATTERNS)


def parse_system(name: Any) -> System:
    """The system a model name asks for; raises `UnknownModel` saying why not."""
    text = name if isinstance(name, str) else repr(name)
    # Short enough to be quoted whole by a client (mathbode run quotes up to 300 characters).
    listing = f"this stand-in serves {served()}, their capital letters filled in with numbers (delay-2, anchor-0.5)."
    kind, *values = text.split("-") if isinstance(name, str) else ("",)
    pattern = _BY_KIND.get(kind)
    if pattern is None:
        raise UnknownModel(f"The model `{text}` does not exist; {listing}")
    if len(values) != pattern.arity:
        wanted = f"{pattern.arity} number{'s' if pattern.arity != 1 else ''}" if pattern.arity else "no numbers"
        raise UnknownModel(f"The model `{text}` does not fit its pattern `{pattern.pattern}` ({wanted}); {listing}")
    if text == pattern.pattern and pattern.arity:
        raise UnknownModel(
            f"The model `{text}` is a pattern: fill in its numbers, e.g. `{pattern.example}`"
            f"{f' ({pattern.rules})' if pattern.rules else ''}. Patterns: {served()}."
        )
    if not all(re.fullmatch(_NUMBER, v) for v in values):
        raise UnknownModel(f"The model `{text}` does not exist: `{pattern.pattern}` takes numbers; {listing}")
    numbers = [float(v) for v in values]
    bad = f"The model `{text}` is out of range ({pattern.rules}); {listing}"
    if kind == "delay":
        if not (values[0].isdigit() and numbers[0] <= 64):
            raise UnknownModel(bad)
        return System(kind, steps=int(values[0]))
    if kind in ("anchor", "wiener", "hammerstein") and not 0 < numbers[0] <= 1:
        raise UnknownModel(bad)
    if kind == "anchor":
        return System(kind, alpha=numbers[0])
    if kind == "poly":
        return System(kind, even=numbers[0], odd=numbers[1])
    if kind in ("wiener", "hammerstein"):
        return System(kind, alpha=numbers[0], even=numbers[1], odd=numbers[2])
    if kind in ("gain", "gsgain") and numbers[0] <= 0:
        raise UnknownModel(bad)
    if kind in ("jitter", "fixed", "gain", "gsgain"):
        return System(kind, size=numbers[0])
    return System(kind)  # truth, noisy, numbers


@lru_cache(maxsize=1 << 16)
def prompt_normal(prompt: str) -> float:
    """A standard normal number fixed by the prompt's text (its sha256): the same prompt always
    draws the same number, on any machine (numpy's generator is stable for a seed)."""
    seed = int.from_bytes(hashlib.sha256(prompt.encode()).digest()[:8], "big")
    return float(np.random.default_rng(seed).standard_normal())


def deviations(rows: Iterable[dict[str, Any]]) -> dict[str, tuple[float, float]]:
    """prompt -> (centre, scale) of its question's exact answers (per family and question): the
    mean, and the standard deviation times sqrt 2.

    A multi-tone release is driven at one level (`mathbode-build --rms-level L`); its scale is its
    spread divided by L, the spread at level 1, so a static map (poly, wiener, hammerstein) is one
    map of the answer whatever the level: a release of another level drives the same map harder
    or softer, and its BLA moves as a nonlinearity's does (level 1: the spread itself)."""
    by_question: dict[tuple[Any, Any], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_question[(row.get("family"), row["question_id"])].append(row)
    out: dict[str, tuple[float, float]] = {}
    for members in by_question.values():
        truths = [float(r["ground_truth"]) for r in members]
        centre = math.fsum(truths) / len(truths)
        spread = math.sqrt(math.fsum((t - centre) ** 2 for t in truths) / len(truths))
        levels = {r.get("amplitude_scale") for r in members}
        multitone = all(r.get("signal_type") in MULTITONE_SIGNALS for r in members) and len(levels) == 1
        level = float(levels.pop() or 1.0) if multitone else 1.0  # a validated release's: 0.01 to 10
        out.update({r["prompt"]: (centre, spread * math.sqrt(2) / level) for r in members})
    return out


def written(value: float) -> str:
    """A computed answer in the answer format, rounded to six decimals."""
    lay = layout()
    return f"{lay.answer_start} {value:.{lay.answer_decimals}f} {lay.answer_end}"


def exact(value: float) -> str:
    """An exact answer in the answer format, truncated toward zero to six decimals (the baseline's)."""
    lay = layout()
    return f"{lay.answer_start} {truncate(value):.{lay.answer_decimals}f} {lay.answer_end}"


def _number(text: Any) -> float | None:
    """The number between the answer tags of a text (an earlier answer sent back), or None."""
    lay = layout()
    inside = str(text or "").split(lay.answer_start)[-1].split(lay.answer_end)[0].strip()
    try:
        value = float(inside)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


@dataclass
class KnownSystems:
    """The systems of `PATTERNS` over one release's exact answers."""

    #: prompt -> its exact answer.
    truth: Mapping[str, float]
    #: prompt -> (centre, scale) of its question's exact answers (the static maps need them).
    deviations: dict[str, tuple[float, float]] = field(default_factory=dict)
    #: The garbled (GS) names of a paired release, for `gsgain-G`.
    gs_names: tuple[str, ...] = ()
    #: `noisy`'s relative spread, and the seed of its draws.
    noise: float = 0.01
    seed: int = 0
    #: The answer to a prompt the release does not hold.
    unknown: str = UNKNOWN_PROMPT
    _random: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)
        self._gs = re.compile("|".join(rf"\b{re.escape(n)}\b" for n in self.gs_names)) if self.gs_names else None

    def resolve(self, content: Any, system: str | None) -> str | None:
        """The release prompt a user turn asks: the turn itself, or its question with the answer
        instruction (or the system message) sent apart (`--instruction-as-system`); None if neither."""
        text = str(content)
        if text in self.truth:
            return text
        for apart in (layout().answer_instruction(), system):
            if apart and f"{text}\n\n{apart}" in self.truth:
                return f"{text}\n\n{apart}"
        return None

    def conversation(self, messages: list[dict[str, Any]]) -> tuple[list[str | None], float | None]:
        """The prompts of the request's user turns (None for a turn that is not one of the
        release's: a one-shot example), and its own answer to the last such prompt before the
        current turn (None when it has given none)."""
        system = next((str(m.get("content")) for m in messages if m.get("role") == "system"), None)
        turns: list[str | None] = []
        previous: float | None = None
        for m in messages:
            if m.get("role") == "user":
                turns.append(self.resolve(m.get("content"), system))
            elif m.get("role") == "assistant" and turns and turns[-1] is not None:
                previous = _number(m.get("content"))
        return turns, previous

    def answer(self, system: System, messages: list[dict[str, Any]]) -> str:
        """The completion text `system` gives to one request."""
        turns, previous = self.conversation(messages)
        prompt = turns[-1] if turns else None
        if prompt is None:
            return self.unknown
        t = self.truth[prompt]
        kind = system.kind
        if kind == "truth":
            return exact(t)
        if kind == "delay":
            asked = [p for p in turns if p is not None]
            return exact(self.truth[asked[max(0, len(asked) - 1 - system.steps)]])
        if kind == "noisy":
            return written(t * (1 + self.noise * self._random.gauss(0, 1)))
        if kind == "anchor":
            return written(t if previous is None else previous + system.alpha * (t - previous))
        if kind == "fixed":
            return written(t * (1 + system.size * prompt_normal(prompt)))
        if kind in ("numbers", "gsgain"):
            return self._by_numbers(prompt, t, system.size if kind == "gsgain" else 1.0)
        if prompt not in self.deviations:
            return self.unknown
        centre, scale = self.deviations[prompt]
        if kind == "jitter":
            return written(t + system.size * scale * prompt_normal(prompt))
        if kind == "gain":
            return written(centre + system.size * (t - centre))

        def bend(value: float) -> float:
            u = (value - centre) / scale
            return value + scale * (system.even * u * u + system.odd * u**3)

        if kind == "poly":
            return written(bend(t))
        # A low-pass over the conversation's exact answers, after (Hammerstein) or before (Wiener) the map.
        values = [self.truth[p] for p in turns if p is not None]
        if kind == "hammerstein":
            values = [bend(v) for v in values]
        state = values[0]
        for v in values[1:]:
            state += system.alpha * (v - state)
        return written(bend(state) if kind == "wiener" else state)

    def _by_numbers(self, prompt: str, t: float, gain: float) -> str:
        # Drawn from the numbers of the question alone (not its names): a renamed prompt gets the same answer.
        rng = random.Random(" ".join(re.findall(r"\d+(?:\.\d+)?", prompt)))
        is_exact, noise = rng.random() < 0.5, rng.gauss(0, 1)
        if gain != 1.0 and self._gs is not None and self._gs.search(prompt):
            return written(gain * t * (1 + 0.001 * noise))
        return exact(t) if is_exact else written(t * (1 + 0.001 * noise))
