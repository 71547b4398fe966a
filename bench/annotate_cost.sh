#!/usr/bin/env bash
# What annotate.h and the Python module gpumemtrace cost in a process without the tracer (docs/benchmarks.md,
# "Annotations without the tracer"). Uses a built tree (default build/, or GPUMEMTRACE_BUILD_DIR).
#   bench/annotate_cost.sh [CALLS]        # default 100000000 C calls, 1000000 Python calls
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GPUMEMTRACE_BUILD_DIR:-$root/build}"
cmake --build "$build" --target bench_annotate_cost gpumemtrace_python_module >/dev/null
env -u LD_PRELOAD "$build/bin/bench_annotate_cost" "${1:-100000000}"
echo
env -u LD_PRELOAD PYTHONPATH="$build/python" python3 "$root/bench/annotate/annotate_cost.py" "$(( ${1:-100000000} / 100 ))"
