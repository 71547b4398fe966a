#!/usr/bin/env bash
# Remakes the seed corpus of tests/fuzz/corpus from a built tree (default build/): traces of the test
# programs run under the tracer on the simulated device, complete and cut at several points (what a killed
# process leaves), traces of bench_trace_generator, the .eh_frame sections of the programs and libraries,
# and the baselines of those traces. Inputs kept by hand (regression-*: what a fuzzer once crashed on;
# hand-*) stay.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
traces="$root/tests/fuzz/corpus/fuzz_trace_reader"
tables="$root/tests/fuzz/corpus/fuzz_unwind_tables"
baselines="$root/tests/fuzz/corpus/fuzz_baseline"
mkdir -p "$traces" "$tables" "$baselines"
find "$traces" "$tables" "$baselines" -type f ! -name 'regression-*' ! -name 'hand-*' -delete
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

traced() {  # name program args...
  local name="$1"; shift
  LD_LIBRARY_PATH="$build/lib/sim" LD_PRELOAD="$build/lib/libgpumemtrace.so" GPUMEMTRACE_OUTPUT_ROOT="$work/$name.trace" \
    GPUMEMTRACE_OUTPUT="$work/$name.child.%p.trace" "$@" >/dev/null 2>&1 || true
}
traced runtime "$build/bin/capture_prog_runtime_shared"
traced threads "$build/bin/capture_prog_threads" 3 4
traced fork "$build/bin/capture_prog_fork"
traced killed "$build/bin/capture_prog_killed" 12 2>/dev/null
traced pool_oom "$build/bin/capture_prog_pool_oom"
traced nvtx "$build/bin/capture_prog_nvtx_phases"
traced annotate "$build/bin/capture_prog_annotate"
traced neighbour "$build/bin/reliability_prog_neighbour" 3
traced train_loop "$build/bin/train_loop" --steps 2 --layers 2
"$build/bin/bench_trace_generator" "$work/generated.trace" 300 >/dev/null

for trace in "$work"/*.trace; do
  name="$(basename "$trace" .trace | sed 's/\.child\.[0-9]*/.child/')"  # no pids: the corpus stays the same
  # A killed process leaves a zero-filled tail: keep the written bytes only.
  size="$(python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); print(len(d.rstrip(b"\0")))' "$trace")"
  head -c "$size" "$trace" >"$traces/$name"
  for cut in 3 2; do head -c $((size * (cut - 1) / cut)) "$trace" >"$traces/$name.cut$cut"; done
done

# The fuzz input: 4 bytes of pc (an offset into each FDE's function), then the .eh_frame section.
for object in "$build/bin/capture_prog_killed" "$build/bin/capture_prog_threads" "$build/lib/sim/libcuda.so.1"; do
  objcopy -O binary --only-section=.eh_frame "$object" "$work/eh_frame"
  for pc in 0 4 9; do
    { python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<i", int(sys.argv[1])))' "$pc"
      cat "$work/eh_frame"; } >"$tables/$(basename "$object").pc$pc"
  done
done

# The baselines of the complete traces, of an incomplete one and of a directory of two (a parent and its child).
for trace in "$traces"/* "$traces/generated.cut2"; do
  case "$(basename "$trace")" in generated.cut2) ;; *.cut* | regression-* | hand-*) continue ;; esac
  "$build/bin/gpumemtrace" baseline -o "$baselines/$(basename "$trace")" "$trace" >/dev/null 2>&1
done
mkdir "$work/ranks"
cp "$traces/fork" "$traces/fork.child" "$work/ranks/"
"$build/bin/gpumemtrace" baseline -o "$baselines/fork.directory" "$work/ranks" >/dev/null 2>&1
cp "$root/examples/ci/train_loop.baseline.json" "$baselines/example-train_loop"
echo "corpus: $(ls "$traces" | wc -l) traces, $(ls "$tables" | wc -l) unwind tables, $(ls "$baselines" | wc -l) baselines"
