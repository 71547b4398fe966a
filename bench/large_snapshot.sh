#!/usr/bin/env bash
# `gpumemtrace summary` of large PyTorch memory snapshots (docs/benchmarks.md, "Large PyTorch snapshots"):
# for each event count, a synthetic trace of bench_trace_generator exported with `export --format memory-viz`
# (a snapshot pickle whose history holds every event), then its summary timed once, printing a Markdown table.
# Uses an existing build tree (default build/, or GPUMEMTRACE_BUILD_DIR) and builds the two programs there.
#   bench/large_snapshot.sh [EVENTS...]      default: 300000 3000000
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GPUMEMTRACE_BUILD_DIR:-$root/build}"
counts=("$@")
((${#counts[@]})) || counts=(300000 3000000)

cmake --build "$build" --target gpumemtrace bench_trace_generator >/dev/null
work="$build/bench-work/large_snapshot"
mkdir -p "$work"

echo "| events | pickle | export time (s) | summary time (s) | summary peak RSS (MiB) | RSS / pickle |"
echo "|---|---|---|---|---|---|"
for events in "${counts[@]}"; do
  trace="$work/synthetic-$events.trace"
  pickle="$work/synthetic-$events.pickle"
  [ -f "$trace" ] || "$build/bin/bench_trace_generator" "$trace" "$events" >/dev/null
  export_seconds=$( { /usr/bin/time -f "%e" "$build/bin/gpumemtrace" export --format memory-viz -o "$pickle" "$trace"; } 2>&1 >/dev/null | tail -1)
  stats=$( { /usr/bin/time -f "%e %M" "$build/bin/gpumemtrace" summary "$pickle"; } 2>&1 >/dev/null | tail -1)
  read -r seconds rss_kib <<<"$stats"
  bytes=$(stat -c %s "$pickle")
  awk -v e="$events" -v b="$bytes" -v x="$export_seconds" -v s="$seconds" -v k="$rss_kib" 'BEGIN {
    printf "| %s | %.1f MiB | %s | %s | %.1f | %.2f |\n", e, b / 1048576, x, s, k / 1024, k * 1024 / b }'
done
