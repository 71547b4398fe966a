#!/usr/bin/env bash
# A GPU memory gate for CI: runs the bundled training loop under the tracer and checks its trace against
# the committed baseline (train_loop.baseline.json beside this script), 5% tolerance, no OOM allowed.
#
#   examples/ci/memory_budget.sh                      # check: exit 0 within budget, 1 over it, 2/3 broken
#   examples/ci/memory_budget.sh --update             # on purpose: record the baseline again (then commit it)
#   examples/ci/memory_budget.sh -- --batch 64        # arguments after -- go to train_loop
#
# Environment: GPUMEMTRACE (the gpumemtrace binary; default: build/bin/gpumemtrace, else the one on PATH),
# TRAIN_LOOP (the workload; default: build/bin/train_loop), OUT (where the trace and gpu-memory.xml go;
# default: a fresh temporary directory), BASELINE (default: train_loop.baseline.json here). It runs on
# the simulated device unless an NVIDIA GPU is present. The committed baseline was recorded on the
# simulated device; on a real GPU, record your own with --update.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

gpumemtrace="${GPUMEMTRACE:-$root/build/bin/gpumemtrace}"
[ -x "$gpumemtrace" ] || gpumemtrace="$(command -v gpumemtrace)"
workload="${TRAIN_LOOP:-$root/build/bin/train_loop}"
baseline="${BASELINE:-$here/train_loop.baseline.json}"
out="${OUT:-$(mktemp -d)}"

update=0
if [ "${1:-}" = "--update" ]; then update=1; shift; fi
if [ "${1:-}" = "--" ]; then shift; fi

device=(--sim --sim-memory 4GiB)
if [ -e /dev/nvidia0 ] && ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then device=(); fi

# A fixed number of steps: the same run gives the same figures, to the byte.
"$gpumemtrace" run -o "$out/train_loop.trace" "${device[@]}" -- "$workload" --steps 10 "$@"

if [ "$update" = 1 ]; then
  "$gpumemtrace" baseline -o "$baseline" "$out/train_loop.trace"
  echo "memory_budget: baseline updated: review and commit $baseline"
  exit 0
fi
"$gpumemtrace" check "$out/train_loop.trace" --baseline "$baseline" --tolerance 5% --max-ooms 0 \
  --junit "$out/gpu-memory.xml"
