#!/usr/bin/env bash
# Configures and builds into build/ (or $GPUMEMTRACE_BUILD_DIR). Extra arguments go to cmake's configure step.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GPUMEMTRACE_BUILD_DIR:-$root/build}"
generator=()
if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
# ccache makes rebuilds in fresh trees (CI, bench, other build directories) cheap.
if [ ! -f "$build/CMakeCache.txt" ] && command -v ccache >/dev/null; then
  generator+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
source "$root/scripts/cuda_toolkit.sh"
echo "build: configuring $build"
cmake -S "$root" -B "$build" "${generator[@]}" "$@" >/dev/null
# GPUMEMTRACE_BUILD_TARGETS="a b": only those targets and what they need (scripts/demo.sh), not the tests.
targets=()
[ -n "${GPUMEMTRACE_BUILD_TARGETS:-}" ] && read -r -a targets <<<"$GPUMEMTRACE_BUILD_TARGETS"
echo "build: compiling${targets[*]:+ ${targets[*]}}"
cmake --build "$build" --parallel "$(nproc)" ${targets[@]:+--target "${targets[@]}"}
