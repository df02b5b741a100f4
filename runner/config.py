"""How a run asks its model: the request parameters, declared as data and recorded with the run."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from typing import Any

from mathbode.core.errors import UsageError
from mathbode.schema.layout import layout

from .formats import MECHANISMS, one_shot_messages
from .run_in import MAX_RUN_IN

STATELESS, SEQUENTIAL = "stateless", "sequential"
PROTOCOLS = (STATELESS, SEQUENTIAL)
#: Earlier exchanges a sequential conversation keeps by default: a period at 8 cycles, and about
#: (8 + 1) x (prompt + answer) tokens, within a 2,048-token context for short answers.
DEFAULT_HISTORY = 8


def history_window(value: int | str) -> int | None:
    """A history given as `all` (None: every earlier exchange) or a number of exchanges, 1 or
    more (ValueError otherwise): `mathbode run --history` and the framework tasks' option."""
    if isinstance(value, str):
        text = value.strip()
        if text.lower() == "all":
            return None
        if not text.isdigit():
            raise ValueError(value)
        value = int(text)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(value)
    return value


@dataclass(frozen=True)
class RunConfig:
    """Everything that decides what the model is asked and how hard the runner pushes.

    The first group changes the answers (a resumed run must keep it); the second only the pace.
    """

    model: str
    #: The OpenAI-compatible endpoint; None = the client's default (OPENAI_BASE_URL, else OpenAI's).
    base_url: str | None = None
    temperature: float = 0.0
    max_tokens: int | None = 256
    seed: int | None = None
    #: Sent as a system message before each prompt, when given.
    system_prompt: str | None = None
    #: Ask the server to constrain completions to the answer format, by this mechanism (see `formats`).
    constrain_format: str | None = None
    #: Prepend a worked example of the answer format (a user/assistant pair).
    one_shot: bool = False
    #: Send the answer-format instruction as the system message instead of at the end of each
    #: prompt (the request style of the paper authors' own code, without sending it twice).
    instruction_as_system: bool = False
    #: stateless (the paper's: every row its own request) or sequential (a sweep is one
    #: conversation in time order, the model's earlier answers in its context).
    protocol: str = "stateless"
    #: Sequential only: the earlier exchanges kept in the conversation (None: all of them).
    history: int | None = None
    #: Stateless only: ask each distinct prompt once and write its answer to every row that has it.
    dedupe: bool = False
    #: Sequential only: steps asked before each sweep's step 0 and never scored, so the measured
    #: steps start in steady state (see `run_in`); 0 starts cold.
    run_in: int = 0
    #: The split the prompts come from (the reference's `prompts_hash`), recorded on every line so a
    #: submission is never scored against another split.
    split: str | None = None

    #: The environment variable holding the API key (its value is never recorded).
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = 8
    requests_per_minute: float | None = None
    max_retries: int = 6
    timeout: float = 120.0

    #: The fields a resumed run must share with the run it continues.
    ANSWER_FIELDS = (
        "model",
        "base_url",
        "temperature",
        "max_tokens",
        "seed",
        "system_prompt",
        "constrain_format",
        "one_shot",
        "instruction_as_system",
        "protocol",
        "history",
        "dedupe",
        "run_in",
    )

    def validate(self) -> "RunConfig":
        if self.concurrency < 1:
            raise UsageError("--concurrency must be at least 1.")
        if self.requests_per_minute is not None and self.requests_per_minute <= 0:
            raise UsageError("--requests-per-minute must be greater than 0.")
        if self.max_retries < 0:
            raise UsageError("--max-retries must be 0 or more.")
        if self.timeout <= 0:
            raise UsageError("--timeout must be greater than 0.")
        if self.constrain_format is not None and self.constrain_format not in MECHANISMS:
            raise UsageError(f"--constrain-format: one of {', '.join(MECHANISMS)}.")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise UsageError("--max-tokens must be at least 1.")
        if self.protocol not in PROTOCOLS:
            raise UsageError(f"--protocol: one of {', '.join(PROTOCOLS)}.")
        if self.history is not None and (self.protocol != SEQUENTIAL or self.history < 1):
            raise UsageError("--history N (1 or more) goes with --protocol sequential.")
        if self.run_in and self.protocol != SEQUENTIAL:
            raise UsageError("--run-in goes with --protocol sequential: a stateless request has no earlier steps.")
        if not 0 <= self.run_in <= MAX_RUN_IN:
            raise UsageError(f"--run-in must be 0 to {MAX_RUN_IN} steps (one period of the slowest sinusoid).")
        if self.dedupe and self.protocol == SEQUENTIAL:
            raise UsageError("--dedupe goes with the stateless protocol: a conversation's turns are never repeats.")
        key = self.api_key
        if key is not None and not (key.isascii() and key.isprintable()):
            # An HTTP header cannot carry it (a line break would even start a new header); the key
            # itself is never shown.
            raise UsageError(
                f"${self.api_key_env} holds a character an HTTP header cannot carry (a line break, a control "
                "character or a non-ASCII character). Check how the variable was set."
            )
        return self

    @property
    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) or None

    def answer_parameters(self) -> dict[str, Any]:
        """The parameters that change the answers (compared on resume)."""
        return {name: getattr(self, name) for name in self.ANSWER_FIELDS}

    def to_record(self) -> dict[str, Any]:
        """Every parameter, for the run record; the key's variable name, never its value."""
        return asdict(self)

    def messages(self, prompt: str, history: list[tuple[str, str]] | None = None) -> list[dict[str, str]]:
        """System message, one-shot example, the kept earlier exchanges (sequential), the prompt.

        Every user turn carries its row's prompt whole, answer instruction included: with a
        window of K exchanges the first turn leaves the context, and the instruction must not
        leave with it."""
        system_text = [self.system_prompt] if self.system_prompt else []
        if self.instruction_as_system:
            instruction = layout().answer_instruction()
            prompt = prompt.removesuffix(f"\n\n{instruction}")
            system_text.append(instruction)
        system = [{"role": "system", "content": "\n\n".join(system_text)}] if system_text else []
        example = one_shot_messages() if self.one_shot else []
        kept = (history or [])[-self.history :] if self.history else (history or [])
        turns = []
        for earlier, answer in kept:
            if self.instruction_as_system:
                earlier = earlier.removesuffix(f"\n\n{layout().answer_instruction()}")
            turns += [{"role": "user", "content": earlier}, {"role": "assistant", "content": answer}]
        return [*system, *example, *turns, {"role": "user", "content": prompt}]

    def conditions(self) -> dict[str, str]:
        """What every line's `meta` says about how it was asked (the scorer marks non-default ones)."""
        out = {
            "answer_format": f"constrained ({self.constrain_format})" if self.constrain_format else "free",
            "prompting": "one-shot" if self.one_shot else "zero-shot",
            "protocol": self.protocol,
        }
        if self.protocol == SEQUENTIAL:
            out["history"] = "all" if self.history is None else str(self.history)
            out["run_in"] = str(self.run_in)
        if self.dedupe:
            out["dedupe"] = "yes"  # repeats of a prompt share one answer: repeatability is not measured
        if self.split:
            out["split"] = self.split
        return out
