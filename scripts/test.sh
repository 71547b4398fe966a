#!/usr/bin/env bash
# Sets up a fresh machine, builds, and runs every test through CTest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GPUMEMTRACE_BUILD_DIR:-$root/build}"
echo "test: installing missing packages (scripts/setup.sh)"
"$root/scripts/setup.sh" --without-pytorch
# PyTorch's install (about 90 s of one processor on a fresh machine, unpacking 5.4 GB) runs beside the build,
# which nothing of it needs; only the tests do.
"$root/scripts/setup_pytorch.sh" &
pytorch_setup=$!
"$root/scripts/build.sh" -DGPUMEMTRACE_WERROR=ON
wait "$pytorch_setup"
echo "test: running the test suite (ctest)"
ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)" --timeout 300
