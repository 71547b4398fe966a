#!/usr/bin/env bash
# Builds the libFuzzer targets (the fuzz preset of CMakePresets.json, clang) and runs each on its corpus in
# tests/fuzz/corpus/<target>, one target after the other:
#   scripts/fuzz.sh --smoke                      40 s in all, shared among the targets (CI)
#   scripts/fuzz.sh --seconds N [TARGET...]      N s of wall time per target
#   scripts/fuzz.sh --cpu-seconds N [TARGET...]  until each target has had N s of CPU time
# libFuzzer's -max_total_time is wall time, which overstates the fuzzing done on a busy machine; with
# --cpu-seconds a target runs again on its grown corpus, for what is left of its CPU budget, until it has had
# it. The new inputs a target finds are kept in build-fuzz/corpus/<target>. A crash stops the run with the
# input in build-fuzz/crashes/ and a non-zero exit. docs/reliability.md has the figures of the long runs.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
usage() { echo "usage: scripts/fuzz.sh --smoke | --seconds N [TARGET...] | --cpu-seconds N [TARGET...]" >&2; exit 1; }
mode=smoke
seconds=40
case "${1:-}" in
  --smoke | "") shift $(($# > 0)) ;;
  --seconds | --cpu-seconds)
    mode="${1#--}"
    [[ "${2:-}" =~ ^[0-9]+$ ]] || usage
    seconds="$2"
    shift 2 ;;
  *) usage ;;
esac

targets=("$@")
echo "fuzz: configuring and building the fuzz preset${targets[*]:+ (${targets[*]})}"
source "$root/scripts/cuda_toolkit.sh"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --parallel "$(nproc)" ${targets[@]:+--target "${targets[@]}"}
if ((${#targets[@]} == 0)); then
  for binary in build-fuzz/bin/fuzz_*; do targets+=("$(basename "$binary")"); done
fi
[ "$mode" = smoke ] && seconds=$((seconds / ${#targets[@]}))
mkdir -p build-fuzz/crashes

# One libFuzzer run of $1 for $2 s of wall time, appended to its log; sets cpu (user + sys, s) and execs.
fuzz_once() {
  local target="$1" limit="$2" log="build-fuzz/$1.log" times status=0
  local work="build-fuzz/corpus/$target" dict=() TIMEFORMAT='%3U %3S'
  mkdir -p "$work"
  [ -f "tests/fuzz/$target.dict" ] && dict=(-dict="tests/fuzz/$target.dict")
  # The first directory receives new inputs; the checked-in corpus is only read.
  times="$({ time build-fuzz/bin/"$target" "$work" "tests/fuzz/corpus/$target" "${dict[@]}" -max_total_time="$limit" \
    -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="build-fuzz/crashes/$target-" 2>>"$log" || echo "failed $?"; } 2>&1)"
  if [[ "$times" == *failed* ]]; then
    tail -n 60 "$log"
    echo "fuzz: $target failed (exit ${times##*failed }); the input is in build-fuzz/crashes/" >&2
    exit 1
  fi
  cpu="$(awk 'NR == 1 { print $1 + $2 }' <<<"$times")"
  execs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -n 1 | grep -o '[0-9]*$')"
}

for target in "${targets[@]}"; do
  [ -x "build-fuzz/bin/$target" ] || { echo "fuzz: no target $target in build-fuzz/bin" >&2; exit 1; }
  : >"build-fuzz/$target.log"
  start=$SECONDS
  total_cpu=0 total_execs=0 runs=0
  left="$seconds"
  while :; do
    echo "fuzz: $target for $left s"
    fuzz_once "$target" "$left"
    runs=$((runs + 1))
    total_cpu="$(awk -v a="$total_cpu" -v b="$cpu" 'BEGIN { print a + b }')"
    total_execs=$((total_execs + execs))
    [ "$mode" = cpu-seconds ] || break
    # What is left of the CPU budget, rounded up: the target gets at least all of it. A run lasts at least a
    # minute, since each one first replays the whole corpus.
    left="$(awk -v n="$seconds" -v used="$total_cpu" 'BEGIN { l = n - used; print l <= 0 ? 0 : (l < 60 ? 60 : int(l) + 1) }')"
    ((left > 0)) || break
  done
  echo "fuzz: $target: $total_execs executions in $total_cpu s of CPU, $((SECONDS - start)) s of wall time, $runs run(s), no crash;" \
    "corpus $(find "build-fuzz/corpus/$target" "tests/fuzz/corpus/$target" -type f | wc -l) inputs"
done
echo "fuzz: ${#targets[@]} passed, 0 failed"
