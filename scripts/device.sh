#!/usr/bin/env bash
# The one device runner: run on the GPU machine from the repository root, one or more named stages in one call.
#   bash scripts/device.sh STAGE [STAGE ...]        (default: env tests sanitize; logs and results under $OUT)
# Stages:
#   env       the GPU, driver, clocks, power and the Python packages (always run first)
#   tests     every GPU test (`pytest -m gpu`), in parallel workers sharing CuPy's kernel cache; TESTS narrows it
#             (e.g. TESTS="tests/gemm tests/bench"). The whole suite (~1840 tests) takes longer than one device call
#             allows (600 s), so it runs in two calls: `tests_wgmma` (the wgmma GEMM's three test files) and
#             `tests_rest` (every other GPU test)
#   sanitize  compute-sanitizer memcheck and racecheck over the probe kernels (mma.sync/ldmatrix, a WMMA capture),
#             memcheck over the WMMA GEMM's edge cases and the public GEMM road's GPU tests, memcheck/racecheck/
#             synccheck over the wgmma GEMM variants (benchmarks/wgmma_sanitize.py), the wgmma peak probes and the
#             DRAM readers of `peak --memory` (benchmarks/dram_read_sanitize.py)
#   probes    every mma.sync / ldmatrix / stmatrix / movmatrix entry with every method against the PTX model
#             (scripts/ptx_mma_device.py; JSON in $OUT), and `fraglab verify` (methods x model x atlas)
#   capture   `fraglab atlas capture` of every family, then `fraglab atlas diff` with the bundled atlas (gzip in $OUT)
#   bench     `fraglab peak` (burst and sustained; --memory, the DRAM read ceilings), `fraglab gemm --wgmma|--wmma|
#             --simt --bench` (JSON and plot in $OUT), the awkward shapes (benchmarks/wgmma_suite.py), the per-call
#             cost (benchmarks/gemm_call_cost.py)
#   copy_loader  the wgmma copy loader's GPU tests, memcheck/racecheck/synccheck over its launches, its timings
#             against the TMA path (benchmarks/wgmma_ragged.py --loaders; HEAD_KERNEL=FILE.cu times an older kernel beside)
#   sass      registers, spills and SASS counts of the GEMM kernels (benchmarks/wgmma_sass.py, scripts/wmma_sass.py)
#   skinny    the skinny GEMM's GPU tests (and the GEMM road's), compute-sanitizer memcheck/racecheck/synccheck
#             (benchmarks/skinny_sanitize.py), each block's timeline (benchmarks/skinny_timeline.py), the decode
#             shapes against wgmma and torch (benchmarks/skinny_decode.py)
# Environment: OUT (default /tmp/out), JOBS (pytest workers, default 12), SIZES (bench sizes, default
# 1024,2048,4096,8192), TESTS (test paths). A failing step is reported and the next one still runs; the exit status
# is 1 when any step failed.
# The per-run scripts this runner replaced (device_all.sh, device_gemm_final.sh, wmma_device_final.sh, ...), which
# older results in docs/ name as their command, are in git: `git show b18e098:scripts/<name>` (docs/reproduce.md).
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
JOBS=${JOBS:-12}
SIZES=${SIZES:-1024,2048,4096,8192}
SAN="compute-sanitizer --error-exitcode 9 --print-limit 5"
failed=()

# step NAME TIMEOUT_S CMD...: run one step, its output in $OUT/NAME.log, one summary line here
step() {
    local name=$1 limit=$2; shift 2
    local started=$SECONDS
    timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
    local rc=$?
    [ $rc -ne 0 ] && failed+=("$name")
    echo "[$name] exit $rc in $((SECONDS - started)) s: $(grep -E 'passed|failed|ERROR SUMMARY|error' "$OUT/$name.log" | tail -n 1)"
}

stage_env() {
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu \
        --format=csv | tee "$OUT/gpu.txt"
    date -u | tee -a "$OUT/gpu.txt"
    python3 -c "import cupy, numpy, sys; print('python', sys.version.split()[0], 'cupy', cupy.__version__, 'numpy', numpy.__version__)" \
        | tee -a "$OUT/gpu.txt"
}

stage_tests() {
    # NVRTC compiles dominate the suite's time, so the tests run in parallel workers sharing CuPy's kernel cache
    step pytest_gpu 540 python3 -m pytest -q -m gpu -p no:cacheprovider -n "$JOBS" --timeout 240 -rfE --tb=short \
        --durations=10 ${TESTS:-}
    tail -n 15 "$OUT/pytest_gpu.log"
}

WGMMA_TEST_FILES="tests/gemm/test_wgmma_gpu.py tests/gemm/test_wgmma_layouts_gpu.py tests/gemm/test_block_scales_gpu.py tests/gemm/test_wgmma_swapped_gpu.py"
stage_tests_wgmma() { TESTS="$WGMMA_TEST_FILES" stage_tests; }
stage_tests_rest() { TESTS="${WGMMA_TEST_FILES//tests\//--ignore=tests/}" stage_tests; }

stage_sanitize() {
    step memcheck_ptx_probes 240 $SAN --tool memcheck python3 scripts/ptx_mma_device.py --sanitize
    step racecheck_ptx_probes 240 $SAN --tool racecheck python3 scripts/ptx_mma_device.py --sanitize
    step memcheck_wmma_gemm 240 $SAN --tool memcheck python3 scripts/wmma_sanitize.py
    step racecheck_wmma_gemm 240 $SAN --tool racecheck python3 scripts/wmma_sanitize.py
    step memcheck_gemm_road 400 $SAN --tool memcheck --report-api-errors no python3 -m pytest -q -m gpu \
        -p no:cacheprovider tests/gemm/test_gemm_api_gpu.py tests/gemm/test_activation_accuracy_gpu.py
    local probes
    probes=$(python3 -c "from fraglab.bench import peak; print(' '.join('--probe ' + p for p in peak.WGMMA_PROBE_NAMES))")
    for tool in memcheck racecheck synccheck; do
        step "${tool}_wgmma_gemm" 200 $SAN --tool "$tool" --report-api-errors no python3 benchmarks/wgmma_sanitize.py
        step "${tool}_peak" 200 $SAN --tool "$tool" python3 -m fraglab peak $probes --iters 8 --no-sass
        step "${tool}_dram_read" 120 $SAN --tool "$tool" python3 benchmarks/dram_read_sanitize.py
    done
}

stage_copy_loader() {
    # the wgmma copy loader (issue 25 item 1; asked for by name only): its GPU tests, the three sanitizers over its
    # launches, its timings against the TMA path (HEAD_KERNEL: an older kernels/gemm/wgmma.cu timed beside)
    step pytest_copy_loader 240 python3 -m pytest -q -m gpu -p no:cacheprovider -n "$JOBS" --timeout 200 -rfE \
        --tb=short tests/gemm/test_wgmma_copy_loader_gpu.py
    for tool in memcheck racecheck synccheck; do
        step "${tool}_copy_loader" 120 $SAN --tool "$tool" --report-api-errors no python3 benchmarks/wgmma_sanitize.py \
            --copy-only
    done
    step bench_copy_loader 200 python3 benchmarks/wgmma_ragged.py --loaders "$OUT/loaders.json" \
        ${HEAD_KERNEL:+--head "$HEAD_KERNEL"}
}

stage_probes() {
    step ptx_mma_probes 300 python3 scripts/ptx_mma_device.py --out "$OUT/ptx_mma.json"
    step verify 300 python3 -m fraglab verify
}

stage_capture() {
    local gpu
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr -c 'A-Za-z0-9\n' '_')
    step capture 300 python3 -m fraglab atlas capture --out "$OUT/atlas_${gpu}.json"
    step atlas_diff 120 python3 -m fraglab atlas diff "$OUT/atlas_${gpu}.json"
    [ -f "$OUT/atlas_${gpu}.json" ] && gzip -9 -f "$OUT/atlas_${gpu}.json"
}

stage_bench() {
    step peak 200 python3 -m fraglab peak --sustain 3 --json "$OUT/peak.json"
    step peak_memory 120 python3 -m fraglab peak --memory --json "$OUT/peak_memory.json" --plot "$OUT/peak_memory.png"
    step bench_wgmma 300 python3 -m fraglab gemm --wgmma --bench --size "$SIZES" --act relu --bias per_n \
        --out-dtype f16 --json "$OUT/bench_wgmma.json" --plot "$OUT/bench_wgmma.png"
    step bench_wmma 300 python3 -m fraglab gemm --wmma --bench --check --size "$SIZES" --act relu --bias per_n \
        --json "$OUT/bench_wmma.json"
    step bench_simt 300 python3 -m fraglab gemm --simt --bench --check --size 4096 --json "$OUT/bench_simt.json"
    step bench_shapes 200 python3 benchmarks/wgmma_suite.py --skip-checks --json "$OUT/bench_shapes.json" \
        --variants 128x256:in:tma,128x256:f32:tma --sizes 8192x8192x1024,4096x14336x4096,1000x4096x4096
    step call_cost 120 python3 benchmarks/gemm_call_cost.py --json "$OUT/call_cost.json"
}

stage_skinny() {
    # the skinny GEMM (issue 25 item 2): GPU tests, the three sanitizers, the decode shapes against wgmma and torch
    step pytest_skinny 240 python3 -m pytest -q -m gpu -p no:cacheprovider -n 8 --timeout 200 -rfE --tb=short \
        tests/gemm/test_skinny.py tests/gemm/test_gemm_api_gpu.py tests/gemm/test_torch_gpu.py
    step sanitize_skinny 300 bash -c "for t in memcheck racecheck synccheck; do echo == \$t; $SAN --tool \$t \
        --report-api-errors no python3 benchmarks/skinny_sanitize.py || exit 9; done"
    step timeline_skinny 200 python3 benchmarks/skinny_timeline.py --json "$OUT/skinny_timeline.json"
    step bench_skinny 200 python3 benchmarks/skinny_decode.py
    step bench_skinny_b_load 200 python3 benchmarks/skinny_b_load.py
    step bench_skinny_bf16 120 python3 benchmarks/skinny_decode.py --dtype bf16 --orders F --m 1,16,32
    step shapes_decode_F 200 python3 -m fraglab gemm --bench --shapes decode --act relu --bias per_n --out-dtype f16 \
        --json "$OUT/shapes_decode_F.json"
    step shapes_decode_C 200 python3 -m fraglab gemm --bench --shapes decode --act relu --bias per_n --out-dtype f16 \
        --b-order C
}

stage_sass() {
    mkdir -p /tmp/sass
    step sass_wgmma 300 python3 benchmarks/wgmma_sass.py /tmp/sass --acts none,relu,gelu 128x256 128x128
    step sass_wmma 300 python3 scripts/wmma_sass.py --arch sm_90
}

stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(tests sanitize)
for name in "${stages[@]}"; do
    if ! declare -F "stage_$name" >/dev/null; then
        echo "device.sh: invalid stage '$name': valid stages are env, tests, tests_wgmma, tests_rest, sanitize, copy_loader, probes, capture, bench, sass, skinny" >&2
        exit 2
    fi
done
stage_env
for name in "${stages[@]}"; do
    [ "$name" = env ] && continue
    echo "== $name ($(date -u +%H:%M:%S) UTC)"
    "stage_$name"
done
echo "== done: ${#failed[@]} failed step(s)${failed[*]:+: ${failed[*]}}"
[ ${#failed[@]} -eq 0 ]
