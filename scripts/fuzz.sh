#!/usr/bin/env bash
# Builds the libFuzzer targets (the fuzz preset of CMakePresets.json, clang) and runs each on its corpus in
# tests/fuzz/corpus/<target>.
#   scripts/fuzz.sh --smoke         30 s per target (CI)
#   scripts/fuzz.sh --seconds N     N s per target; the new inputs it finds are kept in build-fuzz/corpus/<target>
# A crash stops the run with the input in build-fuzz/crashes/ and a non-zero exit. docs/reliability.md has the
# figures of the long runs.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
seconds=30
case "${1:-}" in
  --smoke | "") ;;
  --seconds) seconds="$2" ;;
  *) echo "usage: scripts/fuzz.sh [--smoke | --seconds N]" >&2; exit 1 ;;
esac
echo "fuzz: configuring and building the fuzz preset"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --parallel "$(nproc)"
mkdir -p build-fuzz/crashes
for target in fuzz_trace_reader fuzz_snapshot_reader fuzz_unwind_tables; do
  work="build-fuzz/corpus/$target"
  mkdir -p "$work"
  echo "fuzz: $target for $seconds s"
  # The first directory receives new inputs; the checked-in corpus is only read.
  build-fuzz/bin/$target "$work" "tests/fuzz/corpus/$target" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 -artifact_prefix="build-fuzz/crashes/$target-" \
    2>"build-fuzz/$target.log" || { tail -n 60 "build-fuzz/$target.log"; exit 1; }
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "build-fuzz/$target.log" | sed "s/^/fuzz: $target /"
done
echo "fuzz: 3 passed, 0 failed"
