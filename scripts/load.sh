#!/usr/bin/env bash
# The load test (docs/reliability.md): steady allocation as fast as the simulated device answers, under the
# tracer, for --minutes N (default 60): tests/reliability/programs/steady_workload.cpp, cudaMalloc/cudaFree
# from 4 call sites with about 4096 allocations live. Every --every S seconds (default 60) it prints the
# trace's size and the traced process's resident set; at the start and at the end, the analyzer's peak
# resident set and time for `gpumemtrace summary` of the trace. The build is build/ (or
# $GPUMEMTRACE_BUILD_DIR); the trace goes to a fresh directory under $TMPDIR (or --dir DIR) and is removed at
# the end unless --keep. The trace takes about 8 bytes per event (up to 25 MB/s on one idle core): when the
# free space there falls below --min-free GiB (default 16), the workload is told to stop (SIGUSR1) and ends
# early, normally, and the figures are those of the shorter run.
#   scripts/load.sh [--minutes N] [--every S] [--dir DIR] [--keep] [--min-free GIB]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GPUMEMTRACE_BUILD_DIR:-$root/build}"
minutes=60 every=60 dir="" keep=0 min_free=16
usage() { echo "usage: scripts/load.sh [--minutes N] [--every S] [--dir DIR] [--keep] [--min-free GIB]" >&2; exit 1; }
while (($#)); do
  case "$1" in
    --minutes) [[ "${2:-}" =~ ^[0-9]+$ ]] || usage; minutes="$2"; shift 2 ;;
    --every) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || usage; every="$2"; shift 2 ;;
    --dir) [ -n "${2:-}" ] || usage; dir="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    --min-free) [[ "${2:-}" =~ ^[0-9]+$ ]] || usage; min_free="$2"; shift 2 ;;
    *) usage ;;
  esac
done
[ -f "$build/CMakeCache.txt" ] || { echo "load: no build in $build: run scripts/build.sh first" >&2; exit 1; }
cmake --build "$build" --target gpumemtrace gpumemtrace_preload sim_cuda sim_cudart reliability_prog_steady >/dev/null
if [ -z "$dir" ]; then dir="$(mktemp -d "${TMPDIR:-/tmp}/gpumemtrace-load.XXXXXX")"; else mkdir -p "$dir"; fi
trace="$dir/load.trace"
((keep)) || trap 'rm -f "$trace"' EXIT

mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
status_kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
# `gpumemtrace summary` of the trace as it is now (a trace being written reads as incomplete).
analyze() {
  local max_kib seconds
  /usr/bin/time -f "%M %e" -o "$dir/summary.time" "$build/bin/gpumemtrace" summary "$trace" >/dev/null 2>"$dir/summary.err"
  read -r max_kib seconds <"$dir/summary.time"
  echo "load: analyzer ($1): peak RSS $(mib $((max_kib * 1024))) MiB, $seconds s for $(mib "$(stat -c %s "$trace")") MiB of trace"
}

echo "load: $minutes min of steady allocation under the tracer; trace $trace"
LD_LIBRARY_PATH="$build/lib/sim" LD_PRELOAD="$build/lib/libgpumemtrace.so" GPUMEMTRACE_OUTPUT_ROOT="$trace" \
  "$build/bin/reliability_prog_steady" $((minutes * 60)) >"$dir/steady.out" &
pid=$!
start=$SECONDS
printf "load: %8s %12s %10s %12s %12s %10s\n" minute "trace MiB" "MiB/min" "RssAnon MiB" "RssFile MiB" "VmPTE KiB"
last_size=0 analyzed=0
while sleep "$every"; kill -0 "$pid" 2>/dev/null; do
  size="$(stat -c %s "$trace")"
  printf "load: %8.1f %12s %10s %12s %12s %10s\n" "$(awk -v s=$((SECONDS - start)) 'BEGIN { print s / 60 }')" "$(mib "$size")" \
    "$(mib $(((size - last_size) * 60 / every)))" "$(mib $(($(status_kib "$pid" RssAnon) * 1024)))" \
    "$(mib $(($(status_kib "$pid" RssFile) * 1024)))" "$(status_kib "$pid" VmPTE)"
  last_size="$size"
  if ((!analyzed)); then analyze start; analyzed=1; fi
  if (($(df --output=avail -k "$dir" | tail -n 1) < min_free * 1024 * 1024)); then
    echo "load: less than $min_free GiB free in $dir: stopping the workload early"
    kill -USR1 "$pid" 2>/dev/null || true
  fi
done
wait "$pid" || { echo "load: the workload failed (exit $?)" >&2; cat "$dir/steady.out" >&2; exit 1; }
read -r _ pairs < <(grep '^pairs' "$dir/steady.out")
read -r _ anon_start anon_end < <(grep '^rss_anon_kib' "$dir/steady.out")
read -r _ file_start file_end < <(grep '^rss_file_kib' "$dir/steady.out")
read -r _ peak < <(grep '^rss_peak_kib' "$dir/steady.out")
read -r _ cpu < <(grep '^cpu_seconds' "$dir/steady.out")
size="$(stat -c %s "$trace")"
echo "load: $((2 * pairs)) events ($pairs allocations and as many frees) in $((SECONDS - start)) s," \
  "$(awk -v e=$((2 * pairs)) -v c="$cpu" 'BEGIN { printf "%.2f", e / c / 1e6 }') M events per CPU second ($cpu s of CPU)"
echo "load: trace $(mib "$size") MiB, $(awk -v s="$size" -v e=$((2 * pairs)) 'BEGIN { printf "%.2f", s / e }') bytes per event"
echo "load: traced process: RssAnon $(mib $((anon_start * 1024))) -> $(mib $((anon_end * 1024))) MiB," \
  "RssFile $(mib $((file_start * 1024))) -> $(mib $((file_end * 1024))) MiB, peak RSS $(mib $((peak * 1024))) MiB"
analyze end
# Every event is in the trace: as many allocations and frees as the program made, and the trace complete.
"$build/bin/gpumemtrace" summary --json "$trace" | python3 -c '
import json, sys
summary, pairs = json.load(sys.stdin), int(sys.argv[1])
device = summary["devices"][0]
ok = summary["trace"]["complete"] and device["allocations"] == pairs and device["frees"] == pairs
print("load: trace %s: %d allocations, %d frees: %s" % ("complete" if summary["trace"]["complete"] else "INCOMPLETE",
      device["allocations"], device["frees"], "none lost" if ok else "EVENTS LOST"))
sys.exit(0 if ok else 1)' "$pairs"
