#!/usr/bin/env bash
# Time, memory and output of every command on the crafted traces of about 100 KB that once made the
# analyzer's work grow with the square of the trace (docs/reliability.md, "Hostile inputs and files";
# tests/reliability/programs/hostile_traces.cpp writes them). Uses an existing build tree (default build/,
# or GPUMEMTRACE_BUILD_DIR) and prints a Markdown table, the slowest run of each shape last in its rows.
#   bench/hostile_inputs.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GPUMEMTRACE_BUILD_DIR:-$root/build}"
cmake --build "$build" --target gpumemtrace reliability_prog_hostile_traces >/dev/null
work="$build/bench-work/hostile"
rm -rf "$work"
mkdir -p "$work"
"$build/bin/reliability_prog_hostile_traces" "$work" >"$work/shapes.txt"

commands=("summary" "summary --json" "peak" "leaks" "growth" "phases" "phases --json" "oom" "fragmentation"
          "timeline" "dump" "html" "export --format folded" "export --format pprof" "export --format perfetto"
          "export --format csv" "export --format memory-viz")
echo "| shape | trace | slowest command | its time (s) | most memory (MiB) | most output (MiB) | exit codes |"
echo "|---|---|---|---|---|---|---|"
while read -r shape bytes; do
  trace="$work/$shape.trace"
  slowest="" slowest_s=0 most_rss=0 most_out=0 codes=""
  for command in "${commands[@]}"; do
    read -r -a args <<<"$command"
    out="$work/$shape.out"
    rm -f "$out" "$out".*
    case "$command" in
      html | export*) args+=(-o "$out") ;;
    esac
    /usr/bin/time -o "$work/time" -f "%e %M %x" "$build/bin/gpumemtrace" "${args[@]}" "$trace" >"$work/stdout" 2>/dev/null || true
    read -r seconds rss_kib code <"$work/time"
    written=$(cat "$work/stdout" "$out" "$out".* 2>/dev/null | wc -c || true)
    codes+="$code"
    if awk -v a="$seconds" -v b="$slowest_s" 'BEGIN { exit !(a > b) }'; then slowest="$command" slowest_s=$seconds; fi
    if ((rss_kib > most_rss)); then most_rss=$rss_kib; fi
    if ((written > most_out)); then most_out=$written; fi
  done
  printf '| %s | %s KiB | `%s` | %s | %.1f | %.1f | %s |\n' "$shape" "$((bytes / 1024))" "$slowest" "$slowest_s" \
    "$(awk -v k="$most_rss" 'BEGIN { print k / 1024 }')" "$(awk -v b="$most_out" 'BEGIN { print b / 1048576 }')" \
    "$(echo "$codes" | sed 's/0/ /g' | tr -s ' ' | sed 's/^ *$/all 0/')"
done <"$work/shapes.txt"
