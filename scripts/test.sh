#!/usr/bin/env bash
# Sets up a fresh machine, builds, and runs every test through CTest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GPUMEMTRACE_BUILD_DIR:-$root/build}"
echo "test: installing missing packages (scripts/setup.sh)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh" -DGPUMEMTRACE_WERROR=ON
echo "test: running the test suite (ctest)"
ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)" --timeout 300
