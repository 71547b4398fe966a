// `gpumemtrace export --format memory-viz` (analyzer/export/memory_viz_format.cpp) on a hand-built trace with
// a heap over a cudaMalloc segment, a segment without a heap, a VMM mapping, an async allocation and an
// out-of-memory failure: Python's pickle loads the file; it has the keys and types PyTorch's MemoryViz.js
// reads and only the opcodes its unpickler knows; undoing its history from the segments, as MemoryViz.js does,
// never misses a block and ends with an empty device; and read back as a snapshot it gives the figures of
// the trace it came from. The same for real PyTorch snapshots read as traces and exported again.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <tuple>

#include "common/size_units.h"
#include "tests/analyzer/report_helpers.h"
#include "tests/support/subprocess.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {

using format::Api;
using Json = nlohmann::json;
constexpr uint64_t kA = 0x10000000, kB = 0x20000000, kMapped = 0x30000000, kAsync = 0x40000000;
constexpr uint64_t kStartWallNs = 1'700'000'000'000'000'000;

// Times in µs from the trace start (1 µs apart), with stack 1 a Python frame (train.py:42 in step) and stack 2
// a native frame.
TraceBuilder known_trace() {
  TraceBuilder b;
  b.process(7, 1, kStartWallNs, 64, -1, "host", "train", {"train"});
  b.thread_new(1, 7, "main").python_code("train.py", "step", 40);
  b.stack_node(0, format::python_frame(0, 42)).stack_node(0, 0xB000);
  b.alloc(Api::cudaMalloc, 0, kA, 2 * kMiB, 1, 1000);                                      // 1
  b.event(trace::HeapCreate{{}, 1, 0, kA, 2 * kMiB, "pool"}, 1000);                         // 2
  b.event(trace::SubAlloc{{}, 1, kA, 1000, 1024, 2}, 1000);                                 // 3
  b.event(trace::SubAlloc{{}, 1, kA + 1024, 3000, 3072, 2}, 1000);                          // 4
  b.event(trace::SubAlloc{{}, 1, kA + kMiB, 512 * kKiB, 512 * kKiB, 1}, 1000);              // 5: the heap's peak
  b.event(trace::SubFreeRequested{{}, 1, kA + 1024}, 1000);                                 // 6
  b.alloc(Api::cudaMalloc, 0, kB, kMiB, 1, 1000);                                           // 7
  b.alloc(Api::cuMemCreate, 0, 0x77, 4 * kMiB, 2, 1000);                                    // 8
  b.mem_map(kMapped, 4 * kMiB, 0x77, 0, 0);                                                 // 8
  b.alloc(Api::cudaMallocAsync, 0, kAsync, 256 * kKiB, 2, 1000, 5);                         // 9: the device's peak
  b.free(Api::cudaFreeAsync, kAsync, 1000, 5);                                              // 10
  b.alloc_failed(Api::cudaMalloc, 0, 1 << 30, 1, 2, 1000, 100 * kMiB, 16384 * kMiB);       // 11
  b.event(trace::SubFree{{}, 1, kA}, 1000);                                                 // 12
  b.end(14, 1000);
  return b;
}

Json report_json(const std::vector<std::string>& args) {
  ProcessResult r = run_gpumemtrace(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return Json::parse(r.out);
}

// What MemoryViz.js (torch/utils/viz/MemoryViz.js) reads of a snapshot, checked with Python's pickle: the
// opcodes of its own unpickler (protocol 2 to 4), the keys and types of annotate_snapshot, MemoryView and
// process_alloc_data, and simulate_memory's undoing of the trace from the segments, newest first: an alloc
// removes a block that must be there, free_requested marks one that must be there, free_completed puts one
// back; segment_alloc removes a segment, segment_free puts it back; every block must lie in a segment.
constexpr const char* kMemoryVizScript = R"(
import json, pickle, pickletools, sys
raw = open(sys.argv[1], 'rb').read()
ops = {op.name for op, _, _ in pickletools.genops(raw)}
known = {'PROTO', 'APPEND', 'APPENDS', 'LIST', 'TUPLE', 'NEWFALSE', 'NEWTRUE', 'NONE', 'BINGET', 'BININT', 'BININT1',
         'BININT2', 'EMPTY_DICT', 'EMPTY_LIST', 'FRAME', 'LONG1', 'LONG_BINGET', 'MARK', 'MEMOIZE', 'BINPUT',
         'LONG_BINPUT', 'SETITEMS', 'SETITEM', 'DICT', 'SHORT_BINUNICODE', 'BINUNICODE', 'STOP', 'EMPTY_TUPLE',
         'TUPLE1', 'TUPLE2', 'TUPLE3', 'BINFLOAT'}
problems = ['opcode ' + op for op in sorted(ops - known)] + (['protocol'] if not 2 <= raw[1] <= 4 else [])
s = pickle.loads(raw)
def check(cond, what):
    if not cond: problems.append(what)
def frames_ok(frames):
    return isinstance(frames, list) and all(isinstance(f['name'], str) and isinstance(f['filename'], str)
                                            and isinstance(f['line'], int) for f in frames)
check(isinstance(s['segments'], list) and isinstance(s['device_traces'], list), 'top')
states = {'active_allocated', 'active_pending_free', 'inactive'}
for seg in s['segments']:
    for key in ('device', 'address', 'total_size', 'stream'):
        check(isinstance(seg[key], int), 'segment ' + key)
    check(frames_ok(seg.get('frames', [])), 'segment frames')
    check(sum(b['size'] for b in seg['blocks']) == seg['total_size'], 'blocks cover the segment')
    for b in seg['blocks']:
        check(b['state'] in states and isinstance(b['size'], int) and isinstance(b['requested_size'], int), 'block')
        check(frames_ok(b['frames']), 'block frames')
actions = {'alloc', 'free_requested', 'free_completed', 'segment_alloc', 'segment_free', 'oom'}
out = {'problems': problems, 'devices': []}
for device, trace in enumerate(s['device_traces']):
    for e in trace:
        check(e['action'] in actions, 'action ' + e['action'])
        check(isinstance(e['device_free' if e['action'] == 'oom' else 'addr'], int), 'addr')
        check(isinstance(e['size'], int) and isinstance(e['stream'], int) and isinstance(e['time_us'], int), 'entry')
        check(frames_ok(e['frames']), 'entry frames')
    segments = {x['address']: x['total_size'] for x in s['segments'] if x['device'] == device}
    blocks = {}
    addr = 0
    for x in s['segments']:
        if x['device'] != device: continue
        addr = x['address']
        for b in x['blocks']:
            if b['state'] != 'inactive': blocks[addr] = (b['size'], b['state'] == 'active_pending_free')
            addr += b['size']
    def in_segment(a):
        return any(start <= a < start + size for start, size in segments.items())
    for e in reversed(trace):
        a, action = e.get('addr'), e['action']
        if action == 'alloc':
            check(a in blocks, 'undo alloc'); blocks.pop(a, None)
        elif action == 'free_requested':
            check(a in blocks, 'undo free_requested')
        elif action == 'free_completed':
            check(a not in blocks, 'undo free_completed'); blocks[a] = (e['size'], True)
            check(in_segment(a), 'a block outside the segments')
        elif action == 'segment_alloc':
            check(a in segments, 'undo segment_alloc')
            size = segments.pop(a, 0)
            check(not any(a <= b < a + size for b in blocks), 'a segment undone under its blocks')
        elif action == 'segment_free':
            segments[a] = e['size']
    out['devices'].append({'entries': [e['action'] for e in trace], 'segments_left': len(segments),
                           'blocks_left': len(blocks)})
out['segments'] = [(x['address'], x['total_size'], x['is_expandable'], [(b['state'], b['size'], b['requested_size'])
                    for b in x['blocks']]) for x in s['segments']]
out['oom'] = [(e['size'], e['device_free'], e['frames'][0]['name']) for e in s['device_traces'][0] if e['action'] == 'oom']
out['streams'] = [e['stream'] for e in s['device_traces'][0]]
print(json.dumps(out))
)";

class MemoryVizExport : public testing::Test {
 protected:
  void SetUp() override {
    trace_ = write_file(scratch_ / "known.trace", known_trace().bytes());
    ProcessResult r = run_gpumemtrace({"export", "--format", "memory-viz", "-o", snapshot_, trace_});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  ScratchDir scratch_;
  std::string trace_;
  std::string snapshot_ = scratch_ / "known.pickle";
};

TEST_F(MemoryVizExport, FollowsWhatMemoryVizReads) {
  ProcessResult r = run_process({"python3", "-c", kMemoryVizScript, snapshot_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json viz = Json::parse(r.out);
  EXPECT_EQ(viz["problems"], Json::array());
  ASSERT_EQ(viz["devices"].size(), 1u);
  EXPECT_EQ(viz["devices"][0]["segments_left"], 0) << "the history goes back to an empty device";
  EXPECT_EQ(viz["devices"][0]["blocks_left"], 0);
  EXPECT_EQ(viz["devices"][0]["entries"],
            Json::parse(R"(["segment_alloc", "alloc", "alloc", "alloc", "free_requested", "segment_alloc", "alloc",
                            "segment_alloc", "alloc", "segment_alloc", "alloc", "free_requested", "free_completed",
                            "segment_free", "oom", "free_requested", "free_completed"])"))
      << "the heap covers segment A from its start: no block over all of it first";
  EXPECT_EQ(viz["segments"], Json::parse(R"([
      [268435456, 2097152, false, [["inactive", 1024, 1024], ["active_pending_free", 3072, 3000],
                                   ["inactive", 1044480, 1044480], ["active_allocated", 524288, 524288],
                                   ["inactive", 524288, 524288]]],
      [536870912, 1048576, false, [["active_allocated", 1048576, 1048576]]],
      [805306368, 4194304, true, [["active_allocated", 4194304, 4194304]]]])"));
  EXPECT_EQ(viz["oom"], Json::parse(R"([[1073741824, 104857600, "step"]])"));
  // The async allocation's segment, its block and their frees are on the stream the trace recorded.
  EXPECT_EQ(viz["streams"], Json::parse("[0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 5, 5, 5, 5, 0, 0, 0]"));
}

// The history window (--max-entries, --from, --to): the entries kept are the last of the window, the stderr
// line counts those left out, and undoing the history from the segments (the state at --to) never misses a block.
class MemoryVizWindow : public MemoryVizExport {
 protected:
  // The checked export and its stderr.
  std::pair<Json, std::string> exported(std::vector<std::string> window) {
    std::string out = scratch_ / "window.pickle";
    std::vector<std::string> args = {"export", "--format", "memory-viz", "-o", out};
    args.insert(args.end(), window.begin(), window.end());
    args.push_back(trace_);
    ProcessResult r = run_gpumemtrace(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    ProcessResult viz = run_process({"python3", "-c", kMemoryVizScript, out});
    EXPECT_EQ(viz.exit_code, 0) << viz.err;
    return {Json::parse(viz.out), r.err};
  }
  static Json entries(std::string_view list) { return Json::parse(list); }
};

TEST_F(MemoryVizWindow, MaxEntriesKeepsTheLastOnesAndSaysHowManyItLeftOut) {
  auto [viz, err] = exported({"--max-entries", "10"});
  EXPECT_EQ(err, "gpumemtrace: memory-viz: kept 10 history entries, left out 7: 7 before the last 10 of each device "
                 "(--max-entries)\n");
  EXPECT_EQ(viz["problems"], Json::array());
  // The last 10 of the 17 of the whole history (FollowsWhatMemoryVizReads).
  EXPECT_EQ(viz["devices"].at(0)["entries"],
            entries(R"(["segment_alloc", "alloc", "segment_alloc", "alloc", "free_requested", "free_completed",
                        "segment_free", "oom", "free_requested", "free_completed"])"));
  // Undone, the history stops at the state before its first entry: segments A and B, A's three blocks, B's one.
  EXPECT_EQ(viz["devices"].at(0)["segments_left"], 2);
  EXPECT_EQ(viz["devices"].at(0)["blocks_left"], 4);
  // More than the history has: all of it, and nothing left out.
  std::tie(viz, err) = exported({"--max-entries", "17"});
  EXPECT_EQ(err, "gpumemtrace: memory-viz: kept 17 history entries, left out 0\n");
  EXPECT_EQ(viz["devices"].at(0)["entries"].size(), 17u);
  EXPECT_EQ(viz["devices"].at(0)["segments_left"], 0);
}

// Event k of the known trace is at k µs: --from 5us --to 9us keeps events 5 to 9, and the segments are those at
// 9 µs (the async allocation still live, the heap's first block too).
TEST_F(MemoryVizWindow, FromAndToKeepTheEntriesBetweenWithTheSegmentsAtTo) {
  auto [viz, err] = exported({"--from", "5us", "--to", "9us"});
  EXPECT_EQ(err, "gpumemtrace: memory-viz: kept 8 history entries, left out 9: 3 before --from 5us, 6 after --to 9us\n");
  EXPECT_EQ(viz["problems"], Json::array());
  EXPECT_EQ(viz["devices"].at(0)["entries"],
            entries(R"(["alloc", "free_requested", "segment_alloc", "alloc", "segment_alloc", "alloc", "segment_alloc",
                        "alloc"])"));
  EXPECT_EQ(viz["segments"], Json::parse(R"([
      [268435456, 2097152, false, [["active_allocated", 1024, 1000], ["active_pending_free", 3072, 3000],
                                   ["inactive", 1044480, 1044480], ["active_allocated", 524288, 524288],
                                   ["inactive", 524288, 524288]]],
      [536870912, 1048576, false, [["active_allocated", 1048576, 1048576]]],
      [805306368, 4194304, true, [["active_allocated", 4194304, 4194304]]],
      [1073741824, 262144, false, [["active_allocated", 262144, 262144]]]])"));
  EXPECT_EQ(viz["devices"].at(0)["segments_left"], 1) << "A, allocated before --from";
  EXPECT_EQ(viz["devices"].at(0)["blocks_left"], 2) << "A's first two blocks";

  std::tie(viz, err) = exported({"--from", "5us", "--to", "9us", "--max-entries", "3"});
  EXPECT_EQ(err, "gpumemtrace: memory-viz: kept 3 history entries, left out 14: 3 before --from 5us, 5 before the "
                 "last 3 of each device (--max-entries), 6 after --to 9us\n");
  EXPECT_EQ(viz["problems"], Json::array());
  EXPECT_EQ(viz["devices"].at(0)["entries"], entries(R"(["alloc", "segment_alloc", "alloc"])"));
}

TEST_F(MemoryVizWindow, BadValuesAreUsageErrors) {
  std::string out = scratch_ / "bad.pickle";
  auto expect_usage = [&](std::vector<std::string> args, const std::string& message) {
    args.insert(args.begin(), {"export", "-o", out});
    args.push_back(trace_);
    ProcessResult r = run_gpumemtrace(args);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(r.err, "gpumemtrace export: " + message + " (see gpumemtrace export --help)\n");
    EXPECT_FALSE(file_exists(out));
  };
  expect_usage({"--format", "memory-viz", "--max-entries", "0"}, "--max-entries 0 keeps no history: give 1 or more");
  expect_usage({"--format", "memory-viz", "--max-entries", "ten"}, "--max-entries ten is not a number from 0 to 4294967295");
  expect_usage({"--format", "folded", "--max-entries", "10"}, "--max-entries is for memory-viz, not folded");
  expect_usage({"--format", "memory-viz", "--to", "later"},
               "--to later is not a time since the trace started (e.g. 1.5s, 200ms, 350us)");
  expect_usage({"--format", "memory-viz", "--from", "9us", "--to", "5us"}, "--from 9us is after --to 5us");
}

// Read back as a snapshot, the export gives the trace's figures, at the same times: its trace starts 1 µs
// before its first entry, which is the trace's first event, at 1 µs.
TEST_F(MemoryVizExport, ReadBackItGivesTheFiguresOfTheTrace) {
  // In the driver's view (the segments), and in the used view (the blocks, where the heap of segment A has
  // them, and the other segments whole as the one block each holds).
  Json original = report_json({"summary", "--json", "--view", "reserved", trace_});
  Json back = report_json({"summary", "--json", "--view", "reserved", snapshot_});
  const Json& was = original["devices"].at(0);
  const Json& is = back["devices"].at(0);
  EXPECT_EQ(is["peak_bytes"], was["peak_bytes"]);
  EXPECT_EQ(is["peak_bytes"], (2 + 1 + 4) * kMiB + 256 * kKiB);
  Json original_used = report_json({"summary", "--json", trace_});
  Json back_used = report_json({"summary", "--json", snapshot_});
  EXPECT_EQ(original_used["view"], "used");
  EXPECT_EQ(back_used["view"], "used");
  EXPECT_EQ(back_used["devices"].at(0)["peak_bytes"], original_used["devices"].at(0)["peak_bytes"]);
  EXPECT_EQ(back_used["devices"].at(0)["peak_time_ns"], original_used["devices"].at(0)["peak_time_ns"]);
  EXPECT_EQ(is["peak_time_ns"], was["peak_time_ns"]);
  EXPECT_EQ(is["final_bytes"], was["final_bytes"]);
  EXPECT_EQ(back["trace"]["snapshot"]["history_start_wall_ns"], kStartWallNs + 1000);

  Json heap_was = report_json({"fragmentation", "--json", trace_})["devices"].at(0)["heaps"].at(0);
  Json heaps = report_json({"fragmentation", "--json", snapshot_})["devices"].at(0)["heaps"];
  ASSERT_EQ(heaps.size(), 4u) << "A, B, the mapping and the async allocation's";
  const Json& heap_is = heaps.at(0);
  for (const char* key : {"reserved_bytes", "allocated_bytes", "blocks", "internal_bytes", "external_bytes",
                          "pending_free_bytes", "pending_free_blocks", "free_blocks", "largest_free_block_bytes",
                          "peak_allocated_bytes"})
    EXPECT_EQ(heap_is[key], heap_was[key]) << key;
  EXPECT_EQ(heap_is["peak_time_ns"], heap_was["peak_time_ns"]);
  EXPECT_EQ(heap_was["allocated_bytes"], 512 * kKiB);
  EXPECT_EQ(heap_was["pending_free_bytes"], 3072);

  Json oom = report_json({"oom", "--json", snapshot_})["ooms"].at(0);
  EXPECT_EQ(oom["requested_bytes"], 1u << 30);
  EXPECT_EQ(oom["free_bytes"], 100 * kMiB);
  EXPECT_EQ(oom["stack"].at(0)["function"], "step");
  EXPECT_EQ(oom["stack"].at(0)["file"], "train.py");
  EXPECT_EQ(oom["stack"].at(0)["line"], 42);
  // A snapshot's out-of-memory entry has the device's free memory, not its total (issue 23, item 6).
  ProcessResult text = run_gpumemtrace({"oom", snapshot_});
  EXPECT_NE(text.out.find("  device 0: 100 MiB free (total unknown)\n"), std::string::npos) << text.out;
}

// A real PyTorch snapshot, read as a trace and exported again: MemoryViz.js can read the export and undo it
// to an empty device, and it reads back with the figures of the snapshot it came from.
class RealSnapshotExport : public testing::TestWithParam<const char*> {};

TEST_P(RealSnapshotExport, ReadsBackWithTheSameFigures) {
  ScratchDir scratch;
  std::string original = test_data_dir() + "/pytorch-snapshots/" + GetParam() + ".pickle";
  std::string exported = scratch / "exported.pickle";
  ProcessResult r = run_gpumemtrace({"export", "--format", "memory-viz", "-o", exported, original});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ProcessResult viz = run_process({"python3", "-c", kMemoryVizScript, exported});
  ASSERT_EQ(viz.exit_code, 0) << viz.err;
  Json checked = Json::parse(viz.out);
  EXPECT_EQ(checked["problems"], Json::array());
  EXPECT_EQ(checked["devices"].at(0)["segments_left"], 0);
  EXPECT_EQ(checked["devices"].at(0)["blocks_left"], 0);

  Json was = report_json({"fragmentation", "--json", original})["devices"].at(0)["heap_totals"];
  Json is = report_json({"fragmentation", "--json", exported})["devices"].at(0)["heap_totals"];
  for (const char* key : {"heaps", "reserved_bytes", "allocated_bytes", "internal_bytes", "external_bytes", "blocks",
                          "free_blocks", "largest_free_block_bytes", "pending_free_bytes"})
    EXPECT_EQ(is[key], was[key]) << key;
}

INSTANTIATE_TEST_SUITE_P(Files, RealSnapshotExport,
                         testing::Values("yiyi_oom_snapshot", "silmont_mem_snapshot",
                                         "silmont_memory_forward_bf16_128", "magma27_memory_snapshot"));

}  // namespace
}  // namespace gpumemtrace::test
