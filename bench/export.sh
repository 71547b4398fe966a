#!/usr/bin/env bash
# The file size and time of each `gpumemtrace export` format on synthetic traces (docs/benchmarks.md,
# "Exports"). Uses an existing build tree (default build/, or GPUMEMTRACE_BUILD_DIR): builds the command and
# bench_trace_generator there, writes traces of the given event counts (default 1M and 10M) and exports
# each in every format, once, printing a Markdown table.
#   bench/export.sh [EVENTS...]      e.g. bench/export.sh 1000000 100000000
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GPUMEMTRACE_BUILD_DIR:-$root/build}"
counts=("$@")
((${#counts[@]})) || counts=(1000000 10000000)

cmake --build "$build" --target gpumemtrace bench_trace_generator >/dev/null
work="$build/bench-work/export"
mkdir -p "$work"

echo "| events | trace | format | file | export time (s) | peak RSS (MiB) |"
echo "|---|---|---|---|---|---|"
for events in "${counts[@]}"; do
  trace="$work/synthetic-$events.trace"
  [ -f "$trace" ] || "$build/bin/bench_trace_generator" "$trace" "$events" >/dev/null
  trace_mib=$(awk -v b="$(stat -c %s "$trace")" 'BEGIN { printf "%.1f MiB", b / 1048576 }')
  for format in folded pprof perfetto csv; do
    out="$work/synthetic-$events.$format"
    stats=$( { /usr/bin/time -f "%e %M" "$build/bin/gpumemtrace" export --format "$format" -o "$out" "$trace"; } 2>&1 >/dev/null | tail -1)
    read -r seconds rss_kib <<<"$stats"
    bytes=$(stat -c %s "$out")
    [ "$format" = csv ] && bytes=$((bytes + $(stat -c %s "${out%.*}.stacks.csv")))
    size=$(awk -v b="$bytes" 'BEGIN { if (b >= 1048576) printf "%.1f MiB", b / 1048576; else printf "%.1f KiB", b / 1024 }')
    rss=$(awk -v k="$rss_kib" 'BEGIN { printf "%.1f", k / 1024 }')
    echo "| $events | $trace_mib | $format | $size | $seconds | $rss |"
  done
done
