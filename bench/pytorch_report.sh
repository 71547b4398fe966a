#!/usr/bin/env bash
# The time of reports on a real PyTorch trace (docs/benchmarks.md, "Reports on a real PyTorch trace"): what a
# report costs is mostly symbolizing PyTorch's native frames, not reading the trace. Traces
# examples/pytorch/train.py --accumulate once under the tracer (the simulated device unless --real-gpu), then
# times each report with every analyzer given, in turns, and prints a Markdown table: median wall and CPU
# seconds and peak RSS of --repeats runs.
# Uses an existing build tree (default build/, or GPUMEMTRACE_BUILD_DIR) and the project's venv (.venv, or
# GPUMEMTRACE_VENV) with PyTorch in it (scripts/setup.sh installs it).
#   bench/pytorch_report.sh [--repeats N] [--real-gpu] [ANALYZER...]   default analyzer: the build's gpumemtrace
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GPUMEMTRACE_BUILD_DIR:-$root/build}"
venv="${GPUMEMTRACE_VENV:-$root/.venv}"
repeats=10
device=(--sim --sim-memory 1GiB)
analyzers=()
while (($#)); do
  case "$1" in
    --repeats) repeats="$2"; shift 2 ;;
    --real-gpu) device=(); shift ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "pytorch_report: unknown option $1" >&2; exit 2 ;;
    *) analyzers+=("$1"); shift ;;
  esac
done
((${#analyzers[@]})) || analyzers=("$build/bin/gpumemtrace")
if ! "$venv/bin/python" -c 'import torch' 2>/dev/null; then
  echo "pytorch_report: no PyTorch in $venv: run scripts/setup.sh" >&2
  exit 1
fi

cmake --build "$build" --target gpumemtrace gpumemtrace_preload sim_cuda sim_cudart gpumemtrace_python_module >/dev/null
work="$build/bench-work/pytorch_report"
mkdir -p "$work"
trace="$work/torch_accumulate.trace"
rm -f "$trace" "$trace".torch-*.pickle
echo "pytorch_report: tracing examples/pytorch/train.py --accumulate" >&2
PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" "$build/bin/gpumemtrace" run -o "$trace" "${device[@]}" -- \
  "$venv/bin/python" -W ignore "$root/examples/pytorch/train.py" --accumulate >/dev/null

reports=("summary" "leaks" "export --format folded --all-frames -o /dev/null")
# The median of a space-separated list of numbers.
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "| report | analyzer | wall, s | CPU, s | peak RSS, MiB |"
echo "|---|---|---:|---:|---:|"
for report in "${reports[@]}"; do
  read -r -a args <<<"$report"
  declare -A walls=() cpus=() rss=()
  for ((run = 0; run < repeats; ++run)); do
    for i in "${!analyzers[@]}"; do  # in turns, so that a slow spell of the machine falls on all of them
      stats=$( { /usr/bin/time -f "%e %U %S %M" "${analyzers[$i]}" "${args[@]}" "$trace"; } 2>&1 >/dev/null | tail -1)
      read -r wall user system kib <<<"$stats"
      walls[$i]+="$wall "
      cpus[$i]+="$(awk -v u="$user" -v s="$system" 'BEGIN { print u + s }') "
      rss[$i]+="$kib "
    done
  done
  for i in "${!analyzers[@]}"; do
    printf '| `%s` | %s | %.2f | %.2f | %.1f |\n' "$report" "${analyzers[$i]}" \
      "$(median "${walls[$i]}")" "$(median "${cpus[$i]}")" "$(median "${rss[$i]}" | awk '{ print $1 / 1024 }')"
  done
  unset walls cpus rss
done
