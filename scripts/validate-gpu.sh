#!/usr/bin/env bash
# Validate a GPU grading machine in one call, from the repository root:
#   bash scripts/validate-gpu.sh [--wheels DIR] [--report FILE]
# On a machine with an NVIDIA GPU, PyTorch 2.11 or newer and no package index. --wheels: the folder that
# scripts/gpu-wheelhouse.sh wrote (on a machine with an index) for this Python; its wheels are installed with
# --no-deps into .gpu-validation/venv, a venv with the system's site packages: the machine's own torch is never replaced.
# Then, within 8 minutes: `pytest -m gpu`, the checks' proofs with their CUDA cases (references, second solutions
# and mutants, in process and through the trusted grader), the demo with its gradebook, and the AMP and speed
# calibration benchmarks. It writes one markdown report (device, driver, PyTorch, every result, every calibration
# table) and exits non-zero on any miss. Without a GPU it says so in one line and exits 0.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
PYTHON="${PYTHON:-python3}"
WHEELS=""
REPORT=".gpu-validation/report.md"
BUDGET_S=480                      # 8 minutes for every step together
while [ $# -gt 0 ]; do
    case "$1" in
        --wheels) WHEELS="$2"; shift 2 ;;
        --report) REPORT="$2"; shift 2 ;;
        -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "validate-gpu: unknown option $1 (--wheels DIR, --report FILE)"; exit 2 ;;
    esac
done

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "validate-gpu: no NVIDIA GPU on this machine (nvidia-smi finds none): nothing to validate."
    exit 0
fi
if ! "$PYTHON" -c 'import sys, torch; v = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2]); sys.exit(0 if v >= (2, 11) and torch.cuda.is_available() else 1)' 2>/dev/null; then
    echo "validate-gpu: $PYTHON has no PyTorch 2.11 or newer that sees the GPU (pip install torch, the machine's CUDA build); nothing was run."
    exit 1
fi

STATE="$ROOT/.gpu-validation"
mkdir -p "$STATE"
if [ -n "$WHEELS" ]; then
    if [ ! -f "$WHEELS/requirements.txt" ]; then
        echo "validate-gpu: $WHEELS/requirements.txt is missing: write the folder with scripts/gpu-wheelhouse.sh --python $("$PYTHON" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
        exit 1
    fi
    # A venv that sees the machine's own packages (its torch) and adds the wheels before them: the sandboxed worker
    # is shown the interpreter's prefixes, so the wheels must live in one (not in a PYTHONPATH folder).
    VENV="$STATE/venv"
    echo "validate-gpu: installing $(grep -c . "$WHEELS/requirements.txt") wheels from $WHEELS into $VENV (--system-site-packages, --no-deps: torch stays the machine's)"
    rm -rf "$VENV"
    if ! "$PYTHON" -m venv --system-site-packages "$VENV" \
            || ! "$VENV/bin/python" -m pip install -q --no-index --no-deps --disable-pip-version-check \
                 --find-links "$WHEELS" -r "$WHEELS/requirements.txt"; then
        echo "validate-gpu: the wheels did not install (above; Debian and Ubuntu need python3-venv); nothing was run."
        exit 1
    fi
    PYTHON="$VENV/bin/python"
fi
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
missing="$("$PYTHON" -c 'import importlib.util as u; print(" ".join(m for m in ("nbgrader", "dask", "distributed", "cv2", "numpy", "pytest", "xdist", "hypothesis") if u.find_spec(m) is None))')"
if [ -n "$missing" ]; then
    echo "validate-gpu: missing here: $missing (run scripts/gpu-wheelhouse.sh on a machine with an index, then pass --wheels DIR)"
    exit 1
fi

STARTED=$(date +%s)
OUT="$STATE/steps"
rm -rf "$OUT"; mkdir -p "$OUT"
NAMES=(); RESULTS=(); SECONDS_TAKEN=()
left() { echo $(( BUDGET_S - ($(date +%s) - STARTED) )); }

# step NAME SHARE COMMAND...: run COMMAND with at most SHARE seconds (less when the budget is nearly spent).
step() {
    local name="$1" share="$2"; shift 2
    local limit; limit=$(left)
    [ "$share" -lt "$limit" ] && limit="$share"
    local log="$OUT/${#NAMES[@]}.log" begun; begun=$(date +%s)
    if [ "$limit" -le 5 ]; then
        echo "not run: the 8-minute budget was spent" > "$log"; NAMES+=("$name"); RESULTS+=("not run (no time left)")
        SECONDS_TAKEN+=(0); return
    fi
    echo "validate-gpu: $name (at most ${limit} s)"
    timeout --kill-after=10 "$limit" "$@" > "$log" 2>&1
    local rc=$?
    NAMES+=("$name"); SECONDS_TAKEN+=($(( $(date +%s) - begun )))
    if [ $rc -eq 0 ]; then RESULTS+=("passed"); elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        RESULTS+=("MISSED: ran past ${limit} s"); else RESULTS+=("MISSED: exit $rc"); fi
    echo "validate-gpu: $name: ${RESULTS[-1]} ($(( $(date +%s) - begun )) s)"
}

# Options a benchmark takes, read from its --help (the benchmarks' options change with their calibration).
bench_options() {
    local help; help="$("$PYTHON" "$1" --help 2>/dev/null)"
    local options=()
    grep -q -- "--device" <<<"$help" && options+=(--device cuda)
    grep -q -- "--markdown" <<<"$help" && options+=(--markdown)
    grep -q -- "--runs" <<<"$help" && options+=(--runs "$2")
    echo "${options[@]}"
}

WORKERS=$(( $(nproc) / 2 )); [ "$WORKERS" -lt 1 ] && WORKERS=1; [ "$WORKERS" -gt 8 ] && WORKERS=8
PYTEST=("$PYTHON" -m pytest -q -p no:cacheprovider -p no:randomly -o addopts="" --strict-markers)
step "pytest -m gpu" 150 "${PYTEST[@]}" -m gpu tests
step "the proofs with CUDA cases (in process and through the trusted grader)" 200 \
    "${PYTEST[@]}" -n "$WORKERS" tests/checks/test_proofs.py tests/trusted/test_trusted_proofs.py
step "the demo and its gradebook (python -m autograder demo)" 150 "$PYTHON" -m autograder demo
# shellcheck disable=SC2046
step "AMP calibration (benchmarks/amp.py)" 60 "$PYTHON" benchmarks/amp.py $(bench_options benchmarks/amp.py 3)
# shellcheck disable=SC2046
step "speed calibration (benchmarks/speed.py)" 60 "$PYTHON" benchmarks/speed.py $(bench_options benchmarks/speed.py 5)

{
    echo "# GPU validation, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo "| | |"
    echo "| --- | --- |"
    echo "| device | $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | paste -sd ';' -) |"
    echo "| driver | $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1) |"
    echo "| PyTorch | $("$PYTHON" -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda)') |"
    echo "| Python | $("$PYTHON" -c 'import sys; print(sys.version.split()[0])') |"
    echo "| cores | $(nproc) |"
    echo "| commit | $(git rev-parse --short HEAD 2>/dev/null || echo unknown) |"
    echo "| wheels | ${WHEELS:-those of this machine} |"
    echo "| total | $(( $(date +%s) - STARTED )) s of the ${BUDGET_S} s budget |"
    echo
    echo "| step | result | seconds |"
    echo "| --- | --- | --- |"
    for i in "${!NAMES[@]}"; do echo "| ${NAMES[$i]} | ${RESULTS[$i]} | ${SECONDS_TAKEN[$i]} |"; done
    for i in "${!NAMES[@]}"; do
        echo
        echo "## ${NAMES[$i]}: ${RESULTS[$i]}"
        echo
        if [[ "${NAMES[$i]}" == *calibration* ]]; then
            cat "$OUT/$i.log"             # the benchmark's own tables (markdown), whole
        else
            echo '```'; tail -n 120 "$OUT/$i.log"; echo '```'
        fi
    done
} > "$REPORT"

misses=0
for result in "${RESULTS[@]}"; do [ "$result" = passed ] || misses=$((misses + 1)); done
echo "validate-gpu: $(( ${#RESULTS[@]} - misses )) of ${#RESULTS[@]} steps passed; the report: $REPORT"
[ "$misses" -eq 0 ]
