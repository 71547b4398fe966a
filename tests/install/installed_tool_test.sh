#!/usr/bin/env bash
# `cmake --install` gives a tree where gpumemtrace finds its tracer and the simulated device by itself.
set -euo pipefail
build="$1"
prefix="$(mktemp -d)"
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
"$prefix/bin/gpumemtrace" run -o "$prefix/train.trace" --sim --sim-memory 2GiB -- \
  "$prefix/share/gpumemtrace/examples/train_loop" --steps 3 --layers 2
"$prefix/bin/gpumemtrace" dump "$prefix/train.trace" | tail -n 1 | grep -q '^# complete trace'
echo "installed tool traced train_loop into a complete trace"
