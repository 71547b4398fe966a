// PyTorch memory snapshots read as traces (analyzer/sources/pytorch/): the five real snapshots of
// tests/data/pytorch-snapshots give the figures of PyTorch's own `_memory_viz.py stats`, computed here by
// Python from the same file; a hand-made snapshot's history is undone to the state when recording began; a
// real ring buffer undoes without a missing or doubled block; pickles that would run code, or are damaged,
// are refused with exit 2 and nothing runs.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "common/size_units.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_files.h"

namespace gpumemtrace::test {
namespace {

using Json = nlohmann::json;


Json report_json(const std::vector<std::string>& args) {
  ProcessResult r = run_gpumemtrace(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return Json::parse(r.out);
}

// Runs a Python script (the trusted test files are read with Python's own pickle) and parses what it prints.
Json python_json(const std::string& script, const std::vector<std::string>& args = {}) {
  std::vector<std::string> argv{"python3", "-c", script};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessResult r = run_process(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return Json::parse(r.out);
}

std::string snapshot_path(const std::string& name) { return test_data_dir() + "/pytorch-snapshots/" + name; }

// torch/cuda/_memory_viz.py's segsum ("stats"): reserved is every segment's size; an active_allocated block
// counts its requested size as allocated (legacy: its first history entry's real_size) and the rest of it as
// internal free; every other block is external free. Also the block counts by state and the free runs.
constexpr const char* kStatsScript = R"(
import json, pickle, sys
data = pickle.load(open(sys.argv[1], 'rb'))
segments = data if isinstance(data, list) else data['segments']
out = dict(segments=len(segments), blocks=0, reserved=0, allocated=0, internal=0, external=0,
           allocated_blocks=0, pending_blocks=0, free_runs=0, largest_free=0)
for seg in segments:
    out['reserved'] += seg['total_size']
    run = 0
    for b in seg['blocks'] + [{'state': 'end', 'size': 0}]:
        if b['state'] == 'inactive':
            run += b['size']
            continue
        if run:
            out['free_runs'] += 1
            out['largest_free'] = max(out['largest_free'], run)
        run = 0
        if b['state'] == 'end':
            break
        out['blocks'] += 1
        if b['state'] == 'active_allocated':
            if 'frames' in b:
                requested = b['requested_size']
            elif 'history' in b:
                requested = b['history'][0]['real_size']
            else:
                requested = b.get('requested_size', b['size'])
            out['allocated'] += requested
            out['internal'] += b['size'] - requested
            out['allocated_blocks'] += 1
        else:
            out['pending_blocks'] += 1
    out['blocks'] += sum(1 for b in seg['blocks'] if b['state'] == 'inactive')
out['external'] = out['reserved'] - out['allocated'] - out['internal']
assert out['external'] == sum(b['size'] for s in segments for b in s['blocks'] if b['state'] != 'active_allocated')
print(json.dumps(out))
)";

class RealSnapshot : public testing::TestWithParam<const char*> {};

TEST_P(RealSnapshot, FiguresAreThoseOfMemoryVizStats) {
  std::string path = snapshot_path(GetParam());
  Json expected = python_json(kStatsScript, {path});
  Json report = report_json({"fragmentation", "--json", path});
  ASSERT_EQ(report["devices"].size(), 1u) << "every one of these snapshots is of device 0";
  Json totals = report["devices"].at(0)["heap_totals"];
  EXPECT_EQ(totals["heaps"], expected["segments"]);
  EXPECT_EQ(totals["reserved_bytes"], expected["reserved"]);
  EXPECT_EQ(totals["allocated_bytes"], expected["allocated"]);
  EXPECT_EQ(totals["internal_bytes"], expected["internal"]);
  EXPECT_EQ(totals["external_bytes"], expected["external"]);
  EXPECT_EQ(totals["blocks"], expected["allocated_blocks"]);
  EXPECT_EQ(totals["pending_free_blocks"], expected["pending_blocks"]);
  EXPECT_EQ(totals["free_blocks"], expected["free_runs"]);
  EXPECT_EQ(totals["largest_free_block_bytes"], expected["largest_free"]);
  double external = expected["external"].get<double>();
  double fragmentation = external == 0 ? 0.0 : 1.0 - expected["largest_free"].get<double>() / external;
  EXPECT_NEAR(totals["fragmentation"].get<double>(), fragmentation, 1e-4);

  const Json& snapshot = report["trace"]["snapshot"];
  EXPECT_EQ(snapshot["segments"], expected["segments"]);
  EXPECT_EQ(snapshot["blocks"], expected["blocks"]);
  for (const auto& [what, count] : snapshot["history_inconsistencies"].items()) EXPECT_EQ(count, 0) << what;
}

// Every report command reads a snapshot.
TEST_P(RealSnapshot, EveryReportReadsIt) {
  std::string path = snapshot_path(GetParam());
  for (const char* command : {"summary", "peak", "leaks", "oom", "fragmentation", "timeline", "phases", "growth"}) {
    ProcessResult r = run_gpumemtrace({command, path});
    EXPECT_EQ(r.exit_code, 0) << command << ": " << r.err;
    EXPECT_NE(r.out.find("(a PyTorch memory snapshot"), std::string::npos) << command << ": " << r.out;
  }
  ProcessResult dump = run_gpumemtrace({"dump", path});
  EXPECT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_NE(dump.out.find("heap-create"), std::string::npos);
}

// "silmont_mem_snapshot" for "silmont_mem_snapshot.pickle", as a test name.
std::string file_test_name(const testing::TestParamInfo<const char*>& info) {
  std::string name = info.param;
  name = name.substr(0, name.find(".pickle"));
  for (char& c : name)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Files, RealSnapshot,
                         testing::Values("yiyi_oom_snapshot.pickle", "yiyi_1.3b_snapshot.pickle",
                                         "silmont_mem_snapshot.pickle", "silmont_memory_forward_bf16_128.pickle",
                                         "magma27_memory_snapshot.pickle"),
                         file_test_name);

// The state when recording began, by Python from the snapshot: the dump's segments and active blocks with the
// trace undone newest first (alloc: the block was not there; free_completed: it was; segment_alloc: the
// segment was not there), as {address: requested bytes} and the segments' addresses.
constexpr const char* kUndoScript = R"(
import json, pickle, sys
data = pickle.load(open(sys.argv[1], 'rb'))
segments = {s['address'] for s in data['segments']}
blocks = {}
for s in data['segments']:
    for b in s['blocks']:
        if b['state'] != 'inactive':
            blocks[b['address']] = b['requested_size']
problems = 0
for e in reversed(data['device_traces'][0]):
    a = e.get('addr')
    if e['action'] == 'alloc':
        problems += a not in blocks
        blocks.pop(a, None)
    elif e['action'] == 'free_requested':
        problems += a not in blocks
    elif e['action'] == 'free_completed':
        problems += a in blocks
        blocks[a] = e['size']
    elif e['action'] == 'segment_alloc':
        problems += a not in segments
        segments.discard(a)
    elif e['action'] == 'segment_free':
        segments.add(a)
print(json.dumps(dict(problems=problems, blocks=len(blocks), requested=sum(blocks.values()), segments=len(segments),
                      first_us=min(e['time_us'] for e in data['device_traces'][0]))))
)";

// The records of the converted trace written before the first event's time: the state when recording began.
struct StartState {
  uint64_t segments = 0;
  uint64_t blocks = 0;
  uint64_t requested = 0;
};

StartState start_state(const std::string& path) {
  ProcessResult dump = run_gpumemtrace({"dump", "--json", path});
  EXPECT_EQ(dump.exit_code, 0) << dump.err;
  StartState state;
  size_t from = 0;
  for (size_t end; (end = dump.out.find('\n', from)) != std::string::npos; from = end + 1) {
    Json record = Json::parse(dump.out.substr(from, end - from));
    if (!record.contains("record") || record["time_ns"] != 0) continue;
    if (record["record"] == "heap-create") ++state.segments;
    if (record["record"] == "sub-alloc") {
      ++state.blocks;
      state.requested += record["size"].get<uint64_t>();
    }
  }
  return state;
}

class RealHistory : public testing::TestWithParam<const char*> {};

TEST_P(RealHistory, UndoingTheRingBufferEndsConsistent) {
  std::string path = snapshot_path(GetParam());
  Json expected = python_json(kUndoScript, {path});
  ASSERT_EQ(expected["problems"], 0) << "the file itself";
  StartState start = start_state(path);
  EXPECT_EQ(start.segments, expected["segments"]);
  EXPECT_EQ(start.blocks, expected["blocks"]);
  EXPECT_EQ(start.requested, expected["requested"]);

  Json header = report_json({"summary", "--json", path})["trace"]["snapshot"];
  EXPECT_EQ(header["history_start_wall_ns"], expected["first_us"].get<uint64_t>() * 1000);
  for (const auto& [what, count] : header["history_inconsistencies"].items()) EXPECT_EQ(count, 0) << what;
}

INSTANTIATE_TEST_SUITE_P(Files, RealHistory,
                         testing::Values("silmont_mem_snapshot.pickle", "silmont_memory_forward_bf16_128.pickle",
                                         "magma27_memory_snapshot.pickle"),
                         file_test_name);

// A hand-made snapshot with a known history (times in µs since the epoch, from kT0; in the trace, 1 µs plus the
// time since the first entry):
//   before recording  segment S (2 MiB) with block P (512 KiB, 500000 asked) and block Q (200000 asked)
//   t0+10, t0+11      Q is freed (free_requested, free_completed)
//   t0+20             segment T (20 MiB) is allocated
//   t0+30             block R (4000000 asked) in T
//   t0+40             an out-of-memory failure: 1 GiB asked, 100 MiB free
//   t0+50, t0+60      block X (1000000 asked) in T, then its free is requested: pending at the dump
// The dump: S = [P 512 KiB allocated, 1.5 MiB inactive]; T = [R 4 MiB, X 1 MiB pending, 15 MiB inactive].
constexpr uint64_t kT0 = 1'700'000'000'000'000;
constexpr const char* kHandMadeScript = R"(
import pickle, sys
KiB, MiB = 1 << 10, 1 << 20
S, T, t0 = 0x7f0000000000, 0x7f0040000000, int(sys.argv[2])
def frames(*names):
    return [{'filename': 'train.py', 'line': 10 + i, 'name': n} for i, n in enumerate(names)]
def block(address, size, requested, state, stack=()):
    return {'address': address, 'size': size, 'requested_size': requested, 'state': state, 'frames': frames(*stack)}
def entry(action, addr, size, t, stack=()):
    return {'action': action, 'addr': addr, 'size': size, 'stream': 0, 'time_us': t0 + t, 'frames': frames(*stack)}
snapshot = {
    'segments': [
        {'device': 0, 'address': S, 'total_size': 2 * MiB, 'stream': 0, 'segment_type': 'small', 'frames': [],
         'blocks': [block(S, 512 * KiB, 500000, 'active_allocated', ['make_p']),
                    block(S + 512 * KiB, 1536 * KiB, 1536 * KiB, 'inactive')]},
        {'device': 0, 'address': T, 'total_size': 20 * MiB, 'stream': 0, 'segment_type': 'large',
         'frames': frames('make_t'),
         'blocks': [block(T, 4 * MiB, 4000000, 'active_allocated', ['make_r']),
                    block(T + 4 * MiB, 1 * MiB, 1000000, 'active_pending_free', ['make_x']),
                    block(T + 5 * MiB, 15 * MiB, 15 * MiB, 'inactive')]}],
    'device_traces': [[
        entry('free_requested', S + 512 * KiB, 200000, 10, ['free_q']),
        entry('free_completed', S + 512 * KiB, 200000, 11, ['free_q']),
        entry('segment_alloc', T, 20 * MiB, 20, ['make_t']),
        entry('alloc', T, 4000000, 30, ['make_r']),
        {'action': 'oom', 'device_free': 100 * MiB, 'size': 1 << 30, 'stream': 0, 'time_us': t0 + 40,
         'frames': frames('too_big')},
        entry('alloc', T + 4 * MiB, 1000000, 50, ['make_x']),
        entry('free_requested', T + 4 * MiB, 1000000, 60, ['free_x'])]],
    'allocator_settings': {}}
open(sys.argv[1], 'wb').write(pickle.dumps(snapshot, protocol=4))
print('{}')
)";

class HandMadeHistory : public testing::Test {
 protected:
  void SetUp() override { python_json(kHandMadeScript, {path_, std::to_string(kT0)}); }
  ScratchDir scratch_;
  std::string path_ = scratch_ / "hand-made.pickle";
};

TEST_F(HandMadeHistory, RecordingBeganWithSegmentSAndBlocksPAndQ) {
  StartState start = start_state(path_);
  EXPECT_EQ(start.segments, 1u);
  EXPECT_EQ(start.blocks, 2u);
  EXPECT_EQ(start.requested, 500000u + 200000u);
}

TEST_F(HandMadeHistory, TheHeapsGoThroughTheHistory) {
  Json report = report_json({"fragmentation", "--json", path_});
  const Json& device = report["devices"].at(0);
  ASSERT_EQ(device["heaps"].size(), 2u);
  const Json& s = device["heaps"][0];
  EXPECT_EQ(s["reserved_bytes"], 2 * kMiB);
  EXPECT_EQ(s["peak_allocated_bytes"], 700000) << "P and Q when recording began";
  EXPECT_EQ(s["peak_time_ns"], 0);
  EXPECT_EQ(s["allocated_bytes"], 500000);
  EXPECT_EQ(s["internal_bytes"], 512 * 1024 - 500000);
  EXPECT_EQ(s["external_bytes"], 1536 * 1024);
  const Json& t = device["heaps"][1];
  EXPECT_EQ(t["reserved_bytes"], 20 * kMiB);
  EXPECT_EQ(t["peak_allocated_bytes"], 5000000) << "R and X";
  EXPECT_EQ(t["peak_time_ns"], 41'000);
  EXPECT_EQ(t["allocated_bytes"], 4000000);
  EXPECT_EQ(t["internal_bytes"], 4 * kMiB - 4000000);
  EXPECT_EQ(t["pending_free_bytes"], kMiB);
  EXPECT_EQ(t["pending_free_blocks"], 1);
  EXPECT_EQ(t["external_bytes"], 16 * kMiB) << "the pending block counts as free, as _memory_viz.py has it";
  EXPECT_EQ(t["largest_free_block_bytes"], 15 * kMiB);
  const Json& totals = device["heap_totals"];
  EXPECT_EQ(totals["active_bytes"], 4500000 + (512 * 1024 - 500000) + (4 * kMiB - 4000000) + kMiB);
  EXPECT_EQ(totals["requested_bytes"], 4500000 + 1000000);
}

// In the driver's view; the used view has the blocks (HandMadeHistory.UsedViewIsTheBlocks).
TEST_F(HandMadeHistory, DeviceMemoryIsTheSegments) {
  Json summary = report_json({"summary", "--json", "--view", "reserved", path_});
  const Json& device = summary["devices"].at(0);
  EXPECT_EQ(device["peak_bytes"], 22 * kMiB);
  EXPECT_EQ(device["peak_time_ns"], 11'000);
  EXPECT_EQ(device["final_bytes"], 22 * kMiB);
  const Json& snapshot = summary["trace"]["snapshot"];
  EXPECT_EQ(snapshot["history_events"], 7);
  EXPECT_EQ(snapshot["history_start_wall_ns"], (kT0 + 10) * 1000);
  EXPECT_EQ(snapshot["history_end_wall_ns"], (kT0 + 60) * 1000);
}

// The used view, the default for a snapshot (its segments are heaps): what the blocks asked for. 700000 at the
// start (P, Q), 500000 once Q is freed, then R and X: 5500000 at X's alloc (t0+50: 41 µs in the trace); X's
// free is only requested at the dump, so X still counts.
TEST_F(HandMadeHistory, UsedViewIsTheBlocks) {
  Json summary = report_json({"summary", "--json", path_});
  EXPECT_EQ(summary["view"], "used");
  const Json& device = summary["devices"].at(0);
  EXPECT_EQ(device["peak_bytes"], 500000 + 4000000 + 1000000);
  EXPECT_EQ(device["peak_time_ns"], 41'000);
  EXPECT_EQ(device["final_bytes"], 500000 + 4000000 + 1000000);
  EXPECT_EQ(device["reserved"]["peak_bytes"], 22 * kMiB);
}

TEST_F(HandMadeHistory, TheOomEntryIsAFailureWithTheFreeBytes) {
  Json oom = report_json({"oom", "--json", path_})["ooms"].at(0);
  EXPECT_EQ(oom["requested_bytes"], 1u << 30);
  EXPECT_EQ(oom["free_bytes"], 100 * kMiB);
  EXPECT_EQ(oom["time_ns"], 31'000);
  EXPECT_EQ(oom["stack"].at(0)["function"], "too_big");
  EXPECT_EQ(oom["stack"].at(0)["kind"], "python");
}

TEST_F(HandMadeHistory, TheHeaderSaysWhereRecordingBegan) {
  ProcessResult r = run_gpumemtrace({"summary", path_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("snapshot: " + path_ + " (a PyTorch memory snapshot: 2 segments, 5 blocks when it was taken)\n"
                       "history: 7 events from 2023-11-14T22:13:20.000010000Z to 2023-11-14T22:13:20.000060000Z "
                       "(50 µs); before that only the state then is known\n"),
            std::string::npos)
      << r.out;
}

// The commands that compare runs take snapshots too: a snapshot is told from a baseline by its first bytes.
TEST(SnapshotComparison, DiffComparesTwoSnapshots) {
  Json diff = report_json({"diff", "--json", snapshot_path("silmont_mem_snapshot.pickle"),
                           snapshot_path("magma27_memory_snapshot.pickle")});
  const Json& peak = diff["devices"].at(0)["peak"];
  EXPECT_EQ(peak["a_bytes"], 3781165056u) << "the segments of the first";
  EXPECT_EQ(peak["b_bytes"], 14180941824u);
}

// The C++ frames of a snapshot with stacks="all": text leaves out the allocator, the dispatcher's generated code
// and the frames without a source file, and shortens the names; JSON keeps every frame whole.
TEST(SnapshotFrames, TextShowsTheOperatorsFirst) {
  std::string path = snapshot_path("silmont_mem_snapshot.pickle");
  ProcessResult text = run_gpumemtrace({"peak", "--view", "reserved", "--top", "1", path});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("  #1 512 MiB (14.2%) in 1 allocations\n"
                          "      torch::autograd::VariableType::bmm (VariableType_3.cpp)\n"
                          "      c10::impl::wrap_kernel_functor_unboxed_<…>::call (VariableType_3.cpp)\n"
                          "      at::native::sumproduct_pair (Linear.cpp)\n"
                          "      torch::autograd::THPVariable_einsum (python_torch_functions_0.cpp)\n"
                          "      functional.py:407 in einsum\n"),
            std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("CUDACachingAllocator"), std::string::npos);
  EXPECT_EQ(text.out.find("unwind"), std::string::npos);
  Json json = report_json({"peak", "--top", "1", "--json", path});
  const Json& stack = json["peak"].at(0)["stack"];
  EXPECT_EQ(stack.at(0)["function"], "torch::unwind::unwind()");
  EXPECT_TRUE(stack.at(0)["file"].is_null()) << "\"??\" is no file";
  EXPECT_EQ(stack.at(3)["function"],
            "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, unsigned long, "
            "CUstream_st*)");
  EXPECT_EQ(stack.at(3)["file"], "CUDACachingAllocator.cpp");
  EXPECT_EQ(stack.at(3)["kind"], "native");
}

// A pickle that would run code when Python loads it: GLOBAL os.system + REDUCE (protocol 2), or
// STACK_GLOBAL + REDUCE (protocol 4). Python writes it; it must be refused before anything runs.
constexpr const char* kMaliciousScript = R"(
import os, pickle, sys
class Attack:
    def __reduce__(self):
        return (os.system, ('touch ' + sys.argv[2],))
open(sys.argv[1], 'wb').write(pickle.dumps({'segments': [Attack()]}, protocol=int(sys.argv[3])))
print('{}')
)";

TEST(SnapshotRefusal, APickleThatCallsCodeIsRefusedAndNothingRuns) {
  ScratchDir scratch;
  for (auto [protocol, opcode] : {std::pair{"2", "GLOBAL (0x63)"}, std::pair{"4", "STACK_GLOBAL (0x93)"}}) {
    std::string path = scratch / (std::string("attack") + protocol + ".pickle");
    std::string marker = scratch / (std::string("ran") + protocol);
    python_json(kMaliciousScript, {path, marker, protocol});
    for (const char* command : {"summary", "dump", "fragmentation"}) {
      ProcessResult r = run_gpumemtrace({command, path});
      EXPECT_EQ(r.exit_code, 2) << command;
      EXPECT_NE(r.err.find(std::string("pickle opcode ") + opcode), std::string::npos) << r.err;
      EXPECT_NE(r.err.find("imports or calls code"), std::string::npos) << r.err;
    }
    EXPECT_FALSE(std::filesystem::exists(marker)) << "the pickle's command ran";
  }
}

TEST(SnapshotRefusal, DamagedPicklesAreRefusedWithAMessage) {
  ScratchDir scratch;
  std::string good = read_file(snapshot_path("silmont_mem_snapshot.pickle"));
  struct Case {
    std::string name;
    std::string bytes;
    std::string message;
  } cases[] = {
      {"truncated", good.substr(0, good.size() / 2), "truncated"},
      {"no-stop", good.substr(0, good.size() - 1), "the pickle ends without its STOP opcode"},
      {"garbage", std::string("\x80\x04\xff\xfe\xfd", 5), "byte 0xff at byte offset 2 is not a pickle opcode"},
      {"not-a-snapshot", std::string("\x80\x04K\x07.", 5), "not a PyTorch memory snapshot: it is a int"},
      {"protocol-6", std::string("\x80\x06N.", 4), "pickle protocol 6 is newer than this reader"},
      {"empty-stack", std::string("\x80\x04" "a.", 4), "malformed pickle: APPEND at byte offset 2"},
  };
  for (const Case& c : cases) {
    std::string path = scratch / c.name;
    write_file(path, std::vector<uint8_t>(c.bytes.begin(), c.bytes.end()));
    ProcessResult r = run_gpumemtrace({"summary", path});
    EXPECT_EQ(r.exit_code, 2) << c.name;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.name << ": " << r.err;
  }
}

}  // namespace
}  // namespace gpumemtrace::test
