#!/usr/bin/env bash
# Builds and runs the suite under the sanitizers of CMakePresets.json: AddressSanitizer + UBSan over every
# test (build-asan/), ThreadSanitizer over the thread, fork and reliability tests (build-tsan/).
# `scripts/sanitize.sh asan` or `scripts/sanitize.sh tsan` runs one. Each step prints how long it took.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
source "$root/scripts/cuda_toolkit.sh"
presets=("$@")
((${#presets[@]})) || presets=(asan tsan)
for preset in "${presets[@]}"; do
  start=$SECONDS
  # The tsan tests are about the tracer; the analyzer they run is the plain build's, build/bin/gpumemtrace
  # (CMakePresets.json), brought up to date here so that they never run a stale one (a no-op after test.sh).
  if [ "$preset" = tsan ]; then
    echo "sanitize: the tsan tests run the plain build's analyzer: building build/ (scripts/build.sh)"
    GPUMEMTRACE_BUILD_DIR="$root/build" scripts/build.sh
  fi
  echo "sanitize: configuring and building the $preset preset"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" --parallel "$(nproc)"
  built=$SECONDS
  echo "sanitize: running the $preset tests (ctest --preset $preset)"
  ctest --preset "$preset" --parallel "$(nproc)"
  echo "sanitize: $preset took $((built - start)) s to build, $((SECONDS - built)) s to test"
done
