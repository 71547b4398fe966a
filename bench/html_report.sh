#!/usr/bin/env bash
# The HTML report at scale (docs/benchmarks.md, "The HTML report"): for traces of N events in the mixed
# shape (bench_trace_generator), the time `gpumemtrace html` takes, the page's size, and the time headless
# Chromium takes to open it until the page is drawn (analyzer/html/tools/open_report.cjs: from goto to
# the page's ready flag, the timelines and the icicle drawn).
#
#   bench/html_report.sh [--build-dir DIR] [EVENTS...]     # default: 1M; e.g. 1M 100M
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build"
if [ "${1:-}" = "--build-dir" ]; then build="$(cd "$2" && pwd)"; shift 2; fi
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(1M)

for tool in "$build/bin/gpumemtrace" "$build/bin/bench_trace_generator"; do
  [ -x "$tool" ] || { echo "html_report: $tool is missing: build first (scripts/build.sh)" >&2; exit 1; }
done
command -v node >/dev/null && [ -x /usr/bin/chromium ] ||
  { echo "html_report: needs node and /usr/bin/chromium (scripts/setup.sh installs them)" >&2; exit 1; }

work="$build/bench-work/html"
mkdir -p "$work"
printf '| events | trace | gpumemtrace html | page | open in Chromium |\n|---|---|---|---|---|\n'
for count in "${counts[@]}"; do
  trace="$work/mixed-$count.trace" page="$work/mixed-$count.html"
  "$build/bin/bench_trace_generator" "$trace" "$count" >/dev/null
  start=$(date +%s%N)
  "$build/bin/gpumemtrace" html "$trace" -o "$page"
  html_ms=$(( ($(date +%s%N) - start) / 1000000 ))
  opened=$(NODE_PATH="$build/analyzer/html/node_modules" node "$root/analyzer/html/tools/open_report.cjs" "$page")
  open_ms=$(node -e 'const r = JSON.parse(process.argv[1]); if (r.console_errors.length) { console.error(r.console_errors); process.exit(1); } console.log(r.open_ms)' "$opened")
  printf '| %s | %s MB | %s ms | %s KB | %s ms |\n' "$count" "$(( $(stat -c %s "$trace") / 1000000 ))" "$html_ms" \
    "$(( $(stat -c %s "$page") / 1000 ))" "$open_ms"
  rm -f "$trace"
done
