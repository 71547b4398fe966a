#!/usr/bin/env bash
# Remakes the seed corpus of tests/fuzz/corpus from a built tree (default build/): traces of the test
# programs run under the tracer on the simulated device, complete and cut at several points (what a killed
# process leaves), traces of bench_trace_generator, the crafted shapes of
# tests/reliability/programs/hostile_traces.cpp, the traces earlier builds wrote (tests/data/traces), the
# .eh_frame sections of the programs and libraries, and the baselines of those traces. Inputs kept by hand (regression-*: what a fuzzer once crashed on;
# hand-*) stay.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
traces="$root/tests/fuzz/corpus/fuzz_trace_reader"
tables="$root/tests/fuzz/corpus/fuzz_unwind_tables"
baselines="$root/tests/fuzz/corpus/fuzz_baseline"
snapshots="$root/tests/fuzz/corpus/fuzz_snapshot_reader"
mkdir -p "$traces" "$tables" "$baselines" "$snapshots"
# The inputs of fixed defects (regression-*) and the hand-made ones (hand-*) stay.
find "$traces" "$tables" "$baselines" "$snapshots" -type f ! -name 'regression-*' ! -name 'hand-*' -delete
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
# The shapes that once cost the analyzer the square of the trace, at a quarter of the reliability test's size.
mkdir "$work/hostile"
"$build/bin/reliability_prog_hostile_traces" "$work/hostile" 4 >/dev/null
for shape in "$work"/hostile/*.trace; do cp "$shape" "$traces/hostile-$(basename "$shape" .trace)"; done

for trace in "$work"/*.trace; do
  name="$(basename "$trace" .trace | sed 's/\.child\.[0-9]*/.child/')"  # no pids: the corpus stays the same
  # A killed process leaves a zero-filled tail: keep the written bytes only.
  size="$(python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); print(len(d.rstrip(b"\0")))' "$trace")"
  head -c "$size" "$trace" >"$traces/$name"
  for cut in 3 2; do head -c $((size * (cut - 1) / cut)) "$trace" >"$traces/$name.cut$cut"; done
done
# The traces earlier builds wrote (tests/data/traces), plain and packed, and the first layout that is refused.
for trace in "$root"/tests/data/traces/*.trace; do cp "$trace" "$traces/older-$(basename "$trace" .trace)"; done
# Packed traces (trace/packed): a few complete ones and a cut one, whole and cut.
for name in runtime threads pool_oom generated; do
  cp "$traces/$name" "$work/packed-$name" && "$build/bin/gpumemtrace" pack --level 3 "$work/packed-$name" >/dev/null
  cp "$work/packed-$name" "$traces/packed-$name"
  size="$(stat -c %s "$work/packed-$name")"
  head -c $((size / 2)) "$work/packed-$name" >"$traces/packed-$name.cut2"
done
cp "$traces/killed.cut2" "$work/packed-killed.cut2" && "$build/bin/gpumemtrace" pack --level 3 "$work/packed-killed.cut2" >/dev/null
cp "$work/packed-killed.cut2" "$traces/packed-killed.cut2"

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
# Small PyTorch snapshots: part of a real one (tests/data/pytorch-snapshots), a hand-made one with every
# action, the legacy form; each whole and cut.
python3 - "$root/tests/data/pytorch-snapshots/silmont_mem_snapshot.pickle" "$snapshots" <<'PY'
import pickle, sys
real = pickle.load(open(sys.argv[1], 'rb'))
real['segments'] = real['segments'][:2]
real['device_traces'] = [real['device_traces'][0][:12]]
frames = [{'filename': 'train.py', 'line': 7, 'name': 'step'}, {'filename': '??', 'line': 0, 'name': 'at::empty'}]
def entry(action, addr, size, t, **more):
    return dict(action=action, addr=addr, size=size, stream=0, time_us=1000 + t, frames=frames, **more)
made = {'segments': [{'device': 0, 'address': 1 << 20, 'total_size': 4 << 20, 'stream': 0, 'segment_type': 'large',
                      'is_expandable': True, 'frames': frames, 'blocks': [
                          {'address': 1 << 20, 'size': 1 << 20, 'requested_size': 1000, 'state': 'active_allocated', 'frames': frames},
                          {'address': 2 << 20, 'size': 1 << 20, 'requested_size': 2000, 'state': 'active_pending_free', 'frames': []},
                          {'address': 3 << 20, 'size': 2 << 20, 'requested_size': 0, 'state': 'inactive', 'frames': []}]}],
        'device_traces': [[entry('segment_map', 1 << 20, 2 << 20, 1), entry('alloc', 1 << 20, 1000, 2),
                           entry('segment_map', 3 << 20, 2 << 20, 3), entry('alloc', 2 << 20, 2000, 4),
                           entry('free_requested', 2 << 20, 2000, 5), entry('segment_unmap', 5 << 20, 1 << 20, 6),
                           {'action': 'oom', 'device_free': 5, 'size': 1 << 30, 'stream': 0, 'time_us': 1007},
                           entry('snapshot', 0, 0, 8)]]}
legacy = [{'device': 0, 'address': 1 << 30, 'total_size': 4096, 'allocated_size': 512, 'stream': 0,
           'segment_type': 'small', 'blocks': [
               {'size': 512, 'requested_size': 500, 'state': 'active_allocated',
                'history': [{'addr': 1 << 30, 'real_size': 500, 'frames': frames}]},
               {'size': 3584, 'requested_size': 0, 'state': 'inactive', 'history': []}]}]
for name, value in (('real', real), ('made', made), ('legacy', legacy)):
    data = pickle.dumps(value, protocol=4)
    for suffix, part in (('', data), ('.cut2', data[:len(data) // 2]), ('.cut3', data[:len(data) * 2 // 3])):
        open(f'{sys.argv[2]}/{name}{suffix}', 'wb').write(part)
PY
echo "corpus: $(ls "$traces" | wc -l) traces, $(ls "$snapshots" | wc -l) snapshots, $(ls "$tables" | wc -l) unwind tables, $(ls "$baselines" | wc -l) baselines"
