#!/usr/bin/env bash
# Remakes the traces of earlier builds kept in this folder (README.md here says what each one is). For each
# commit below: a git worktree of it, a Release build of that commit's tracer, simulated device, programs and
# analyzer, each program run under that build's tracer on that build's simulated device, and the trace kept
# with that build's own `gpumemtrace dump` of it (NAME.dump). Takes 15 to 30 minutes on 2 cores.
#   tests/data/traces/make.sh [WORKDIR]      (default: a new temporary folder, removed at the end)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
work="${1:-$(mktemp -d)}"
[ $# -ge 1 ] || trap 'git -C "$root" worktree prune; rm -rf "$work"' EXIT
mkdir -p "$work"

# commit: the programs run under its tracer (program[:arguments with commas]).
declare -A programs=(
  [67be820]="train_loop:--steps,3,--layers,2"
  [abedb46]="train_loop:--steps,3,--layers,2 capture_prog_pool_oom capture_prog_threads:3,4 capture_prog_killed:12"
  [49518fc]="train_loop:--steps,3,--layers,2 capture_prog_pool_oom capture_prog_threads:3,4 capture_prog_nvtx_phases"
  [d223328]="train_loop:--steps,3,--layers,2 capture_prog_pool_oom capture_prog_nvtx_phases"
)
# The commits whose analyzer packs (trace format version 2): these traces are kept packed too.
packs=(d223328)

for commit in "${!programs[@]}"; do
  tree="$work/$commit"
  [ -d "$tree" ] || git -C "$root" worktree add --detach "$tree" "$commit" >/dev/null
  targets=(gpumemtrace gpumemtrace_preload sim_cuda sim_cudart)
  for entry in ${programs[$commit]}; do targets+=("${entry%%:*}"); done
  echo "make.sh: building ${targets[*]} at $commit"
  cmake -S "$tree" -B "$tree/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  ninja -C "$tree/build" "${targets[@]}" >/dev/null
  for entry in ${programs[$commit]}; do
    program="${entry%%:*}"
    args=()
    [[ "$entry" == *:* ]] && IFS=, read -r -a args <<<"${entry#*:}"
    name="$commit-${program#capture_prog_}"
    trace="$work/$name.trace"
    rm -f "$trace"
    # Run from the tree, as its own tests did; a killed program's exit status is expected.
    (cd "$tree" && LD_LIBRARY_PATH=build/lib/sim LD_PRELOAD=build/lib/libgpumemtrace.so \
      GPUMEMTRACE_OUTPUT_ROOT="$trace" "build/bin/$program" "${args[@]}" >/dev/null 2>&1) || true
    # A killed process leaves a zero-filled tail: the written bytes are what is kept.
    python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); open(sys.argv[2],"wb").write(d.rstrip(b"\0"))' \
      "$trace" "$here/$name.trace"
    "$tree/build/bin/gpumemtrace" dump "$here/$name.trace" >"$here/$name.dump"
    if [[ " ${packs[*]} " == *" $commit "* ]]; then
      cp "$here/$name.trace" "$here/$name.packed.trace"
      "$tree/build/bin/gpumemtrace" pack "$here/$name.packed.trace" >/dev/null
      "$tree/build/bin/gpumemtrace" dump "$here/$name.packed.trace" >"$here/$name.packed.dump"
    fi
    echo "make.sh: $name"
  done
done
