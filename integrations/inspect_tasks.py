"""MathBode as inspect-ai tasks: `inspect eval mathbode/smoke --model PROVIDER/MODEL`.

One task per preset (`smoke`, `mvp`, `mvp_plus`, `full`, `chirp_step`, `all`), registered through
the `inspect_ai` entry point. Task options (`-T name=value`):

- `families`: `all` (default) or comma-separated family names;
- `reference`: the canonical rows: the ones shipped with mathbode (default), a release folder,
  or `hub:ORG/NAME[@REV]`, as `mathbode score --reference` takes them;
- `protocol`: `stateless` (the paper's: one sample per row) or `sequential` (one sample per
  sweep: its steps are one conversation in time order, the model's own answers in its context);
- `history`: sequential only, the earlier exchanges kept (default 8, or `all`);
- `run_in`: sequential only, steps asked before each sweep's step 0 and never scored (default 8;
  0 starts cold), as `mathbode run --run-in` asks them;
- `one_shot`: a worked example of the answer format before each prompt.

The scorer keeps each raw completion as the sample's answer (no NaN for a non-answer: inspect
drops NaN scores before its metrics); the `bode` metric scores every answer at once through
MathBode's scorer and reports MB-Core, MB-Plus (paper's and calibrated) and the mid-band gain and
phase. `mathbode convert` turns the log into a submission for `mathbode score`'s full report.
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
)
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Target,
    Value,
    accuracy,
    metric,
    scorer,
    stderr,
)
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver

from mathbode.core.version import __version__
from mathbode.hub.reference import resolve_reference
from mathbode.runner.config import DEFAULT_HISTORY, SEQUENTIAL, STATELESS, RunConfig
from mathbode.runner.run_in import RunInPlan, sweep_of

from .records import (
    RUN_IN,
    STEPS,
    TASK_PRESETS,
    check_protocol,
    headline,
    is_exact,
    key_of,
    parse_history,
    parse_run_in,
    request_config,
    sample_id,
    score_answers,
    sweeps,
    task_rows,
)

#: The runner's request defaults: greedy decoding, room for a short answer.
GENERATE_DEFAULTS = GenerateConfig(temperature=0.0, max_tokens=256)


@metric
def bode(
    families: list[str],
    reference: str | None = None,
    protocol: str = STATELESS,
    history: int | None = None,
    one_shot: bool = False,
    run_in: int = 0,
) -> Metric:
    """MB-Core, MB-Plus (paper's and calibrated), compliance, accuracy and the mid-band gain and
    phase error, from every answer of the eval at once (MathBode's scorer groups them into sweeps)."""

    def compute(scores: list[SampleScore]) -> Value:
        answers: list[tuple[dict[str, Any], str | None]] = []
        for sample_score in scores:
            steps = (sample_score.score.metadata or {}).get(STEPS)
            if steps is not None:  # a sequential sample: a whole sweep
                answers += [(step, step.get("response")) for step in steps]
            elif sample_score.sample_metadata:
                answers.append((sample_score.sample_metadata, sample_score.score.answer))
        how = request_config(protocol, history, one_shot, run_in).conditions()
        scored = score_answers(answers, resolve_reference(families, reference), families, "inspect", how)
        return headline(scored)

    return compute


@scorer(metrics=[accuracy(), stderr()])
def answers() -> Any:
    """Each row's raw completion as the answer, 1 when its number is the exact answer truncated to
    six decimals (a sequential sample: the share of its sweep's steps that are), else 0."""

    async def score(state: TaskState, target: Target) -> Score:
        steps = state.metadata.get(STEPS)
        if steps is not None:
            hits = [is_exact(step.get("response"), step["ground_truth"]) for step in steps]
            return Score(value=sum(hits) / len(hits), metadata={STEPS: steps})
        completion = state.output.completion if state.output else None
        return Score(value=1.0 if is_exact(completion, float(target.text)) else 0.0, answer=completion)

    return score


@scorer(metrics=[])
def recorded() -> Any:
    """A prompts-only release's scorer: each answer recorded, none judged (the truth is the keeper's:
    convert the log with `mathbode convert` and score it against the full split)."""

    async def score(state: TaskState, target: Target) -> Score:
        steps = state.metadata.get(STEPS)
        if steps is not None:
            return Score(value=0, explanation=UNSCORED, metadata={STEPS: steps})
        return Score(value=0, answer=state.output.completion if state.output else None, explanation=UNSCORED)

    return score


UNSCORED = "not scored: a prompts-only release holds no ground truth (score the converted log against the full split)"


def _messages(config: RunConfig, prompt: str, history: list[tuple[str, str]]) -> list[ChatMessage]:
    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}
    return [kinds[m["role"]](content=m["content"]) for m in config.messages(prompt, history)]


@solver
def prompt_format(one_shot: bool = False) -> Solver:
    """The prompt as `mathbode run` sends it: the row's prompt, after the one-shot example if asked."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        config = request_config(one_shot=one_shot)
        state.messages = _messages(config, state.input_text, [])
        return state

    return solve


@solver
def sweep_conversation(history: int | None = DEFAULT_HISTORY, one_shot: bool = False) -> Solver:
    """The sequential protocol: a sweep's steps asked in time order as one conversation, each user
    turn the step's whole prompt after the last `history` exchanges (None: all of them). The
    sample's run-in prompts (`RUN_IN`, see `mathbode.runner.run_in`) are asked first; their answers
    stay in the conversation and in the sample's metadata, and are never scored."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        config = request_config(SEQUENTIAL, history, one_shot)
        steps = state.metadata[STEPS]
        exchanges: list[tuple[str, str]] = []
        for lead in state.metadata.get(RUN_IN, []):
            state.messages = _messages(config, lead["prompt"], exchanges)
            state = await generate(state)
            lead["response"] = state.output.completion
            exchanges.append((lead["prompt"], lead["response"]))
        for step in steps:
            state.messages = _messages(config, step["prompt"], exchanges)
            state = await generate(state)
            step["response"] = state.output.completion
            exchanges.append((step["prompt"], step["response"]))
        return state

    return solve


def truth_text(row: dict[str, Any]) -> str:
    """A sample's target: the exact answer's float, or "" on a prompts-only release."""
    truth = row.get("ground_truth")
    return "" if truth is None else repr(truth)


def mathbode_task(
    preset: str,
    families: str | list[str] = "all",
    reference: str | None = None,
    protocol: str = STATELESS,
    history: int | str | None = DEFAULT_HISTORY,
    one_shot: bool = False,
    run_in: int | str | None = None,
) -> Task:
    """A preset of MathBode as an inspect Task (see the module's docstring for the options)."""
    protocol = check_protocol(protocol)
    window = parse_history(history) if protocol == SEQUENTIAL else None
    lead = parse_run_in(run_in, protocol)
    found = task_rows(preset, families, reference)
    truthless = found.reference.prompts_only
    plan = RunInPlan.of(found.reference.table.to_pylist(), lead) if lead else None
    if protocol == STATELESS:
        samples = [
            Sample(input=row["prompt"], target=truth_text(row), id=sample_id(row), metadata=key_of(row))
            for row in found.rows
        ]
        solvers: list[Solver] = [prompt_format(one_shot), generate()]
    else:
        samples = [
            Sample(
                input=steps[0]["prompt"],
                id=sample_id({k: v for k, v in key_of(steps[0]).items() if k != "time_step"}),
                metadata={
                    STEPS: [{**key_of(r), "prompt": r["prompt"], "ground_truth": r.get("ground_truth")} for r in steps],
                    RUN_IN: [
                        {"asked": key_of(r), "prompt": r["prompt"]}
                        for r in (plan.rows(sweep_of(steps[0])) if plan else [])
                    ],
                },
            )
            for steps in sweeps(found.rows)
        ]
        solvers = [sweep_conversation(window, one_shot)]
    name = next(n for n, p in TASK_PRESETS.items() if p == preset)
    return Task(
        dataset=MemoryDataset(samples, name=f"mathbode-{name}", shuffled=False),
        solver=solvers,
        scorer=recorded() if truthless else answers(),
        # The task's own metrics: inspect's accuracy of exact answers, and the Bode scores (none on
        # a prompts-only release: the answers are recorded for its keeper to score).
        metrics=[]
        if truthless
        else [accuracy(), stderr(), bode(found.families, reference, protocol, window, one_shot, lead)],
        config=GENERATE_DEFAULTS,
        name=f"mathbode_{name}",
        version=__version__,
        metadata={
            "preset": preset,
            "families": found.families,
            "reference": found.reference.provenance(),
            **request_config(protocol, window, one_shot, lead).conditions(),
            # The split the samples come from: `mathbode convert` records it on every line.
            **({"split": found.reference.split_hash} if found.reference.split_hash else {}),
        },
    )


def _preset_task(name: str, preset: str, summary: str) -> Any:
    """The inspect task `mathbode/<name>`: `preset`, with the options every MathBode task has."""

    def make(
        families: str | list[str] = "all",
        reference: str | None = None,
        protocol: str = STATELESS,
        history: int | str | None = DEFAULT_HISTORY,
        one_shot: bool = False,
        run_in: int | str | None = None,
    ) -> Task:
        return mathbode_task(preset, families, reference, protocol, history, one_shot, run_in)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = summary
    return task(name=name)(make)


smoke = _preset_task("smoke", "SMOKE", "SMOKE: frequencies 4 and 8, one phase, the first 2 question/amplitude pairs.")
mvp = _preset_task("mvp", "MVP", "MVP: frequencies 4, 8 and 16, one phase.")
mvp_plus = _preset_task("mvp_plus", "MVP_PLUS", "MVP_PLUS: all 5 frequencies, three phases at 4 and 8 cycles.")
full = _preset_task("full", "FULL", "FULL: all 5 frequencies x 3 phases (9,600 rows).")
chirp_step = _preset_task("chirp_step", "CHIRP_STEP", "CHIRP_STEP: the chirp and step sweeps of question 0.")
all_rows = _preset_task("all", "ALL", "ALL: every row of the release (47,040: sinusoid, chirp and step).")
