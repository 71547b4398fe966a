#!/usr/bin/env bash
# The benchmarks of docs/benchmarks.md, side by side with heaptrack: builds a Release tree (build-bench/ by
# default) and prints the tables. Options of its own:
#   --build-dir DIR   the build tree to use (default: build-bench next to this folder)
#   --no-build        use the tree as it is (CTest's bench.quick runs against the test build this way)
# Everything else goes to bench_runner: --quick (seconds, for CI), --pairs N, --depth D, --threads T,
# --repeats R, --analyzer-events 1M,10M,100M, --analyzer-repeats R, --no-heaptrack,
# --only capture|python|analyzer, --python PYTHON (the interpreter of the Python table, e.g.
# ~/.pyenv/versions/3.12.1/bin/python3.12; default python3 on PATH), --python-pairs N (250K), --no-python,
# --tracer PATH (measure another build of libgpumemtrace.so, e.g. the last commit's,
# for before/after).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build-bench"
do_build=1
runner_args=()
while (($#)); do
  case "$1" in
    --build-dir) build="$2"; shift 2 ;;
    --no-build) do_build=0; shift ;;
    *) runner_args+=("$1"); shift ;;
  esac
done

if ((do_build)); then
  GPUMEMTRACE_BUILD_DIR="$build" "$root/scripts/build.sh" -DCMAKE_BUILD_TYPE=Release
fi

commit="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  commit="$commit + uncommitted changes"
fi
cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
heaptrack_version="$(heaptrack --version 2>/dev/null | head -n 1 || true)"
echo "## gpumemtrace benchmarks"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- machine: $(nproc) CPUs, ${cpu:-unknown CPU}, $(uname -sr)"
echo "- commit: $commit, build: $build ($(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt"))"
echo "- heaptrack: ${heaptrack_version:-not installed}"
echo "- command: bench/run.sh ${runner_args[*]:-}"
echo
exec "$build/bin/bench_runner" "${runner_args[@]}"
