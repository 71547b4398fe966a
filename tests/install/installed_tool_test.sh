#!/usr/bin/env bash
# `cmake --install` gives a tree where gpumemtrace finds its tracer and the simulated device by itself, and the
# tracer finds the PyTorch hook (PREFIX/share/gpumemtrace/python). $2: tests/interpose/torch (the test double of
# torch and its workload).
set -euo pipefail
build="$1"
torch_tests="$2"
prefix="$(mktemp -d)"
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
"$prefix/bin/gpumemtrace" run -o "$prefix/train.trace" --sim --sim-memory 2GiB -- \
  "$prefix/share/gpumemtrace/examples/train_loop" --steps 3 --layers 2
"$prefix/bin/gpumemtrace" dump "$prefix/train.trace" | tail -n 1 | grep -q '^# complete trace'
echo "installed tool traced train_loop into a complete trace"
PYTHONPATH="$torch_tests/fake_torch" "$prefix/bin/gpumemtrace" run -o "$prefix/torch.trace" --sim -- \
  python3 -B "$torch_tests/torch_workload.py" train >/dev/null
test -s "$prefix/torch.trace.torch-exit.pickle"
echo "the installed tracer started the PyTorch hook: $prefix/torch.trace.torch-exit.pickle"
