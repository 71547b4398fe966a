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
echo "build: configuring $build"
cmake -S "$root" -B "$build" "${generator[@]}" "$@" >/dev/null
echo "build: compiling"
cmake --build "$build" --parallel "$(nproc)"
