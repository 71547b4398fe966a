// A trace joined with the PyTorch snapshots it names (analyzer/sources/snapshot_join.h), hand-built so that
// every figure is known: the trace's allocations and TorchSnapshot records by the trace builder, the
// snapshots by Python's pickle. Times in µs since the trace started; the wall clock is kW0 then.
//
//   trace         1 cudaMalloc S1 (2 MiB)    19 cudaMalloc S2 (20 MiB)    25 cudaMalloc X (1 MiB: not PyTorch's)
//                 50 usr1 snapshot           65 cudaMalloc of 20 MiB fails (10 MiB free of 100 MiB)
//                 90 exit snapshot           100 the end
//   PyTorch       before recording: S1 with block P (512 KiB, 500000 asked)
//                 e1 10 alloc Q in S1 (200000)            e2 20 segment_alloc S2
//                 e3 30 alloc R in S2 (4000000)           e4 40, e5 41 Q freed
//                 e6 60 alloc Y in S2 + 4 MiB (3000000)   z 65 alloc Z in S2 + 7 MiB (1000000)
//                 oom 65 (20 MiB asked, 10 MiB free)      e7 70, e8 71 R freed
//   usr1's ring buffer e1-e5; exit's e3-e8 (it wrapped): e3, e4, e5 are in both.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <utility>

#include "analyzer/sources/pytorch/joined_history.h"
#include "common/size_units.h"
#include "common/time_units.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_files.h"
#include "tests/support/trace_builder.h"

namespace gpumemtrace::test {
namespace {

using Json = nlohmann::json;
using Api = format::Api;
constexpr uint64_t kW0 = 1'700'000'000'000'000'000;  // ns since the epoch: a whole µs
constexpr uint64_t kS1 = 0x7f0000000000, kS2 = 0x7f0000400000, kS3 = 0x7f0002000000, kX = 0x7f0003000000;

// argv: DIR VARIANT W0_US. Variants: "overlap" (above); "gap" (exit's ring buffer holds e7, e8 only);
// "expandable" (allocator_settings say expandable segments); "idle" (S3, 20 MiB, cached with nothing in it;
// 25 MiB asked); "missing" (exit's state has S3 with a block W in it, which the trace never allocated);
// "mapped" (S2 is an expandable segment: segment_map instead of segment_alloc).
constexpr const char* kSnapshots = R"(
import pickle, sys
KiB, MiB = 1 << 10, 1 << 20
out, variant, w0 = sys.argv[1], sys.argv[2], int(sys.argv[3])
S1, S2, S3 = 0x7f0000000000, 0x7f0000400000, 0x7f0002000000
def frames(name, line):
    return [{'filename': 'train.py', 'line': line, 'name': name}, {'filename': 'train.py', 'line': 90, 'name': '<module>'}]
def block(address, size, requested, state, name=None, line=0):
    return {'address': address, 'size': size, 'requested_size': requested, 'state': state,
            'frames': frames(name, line) if name else []}
def entry(action, addr, size, t, name=None, line=0):
    return {'action': action, 'addr': addr, 'size': size, 'stream': 0, 'time_us': w0 + t,
            'frames': frames(name, line) if name else []}
def segment(address, size, blocks, expandable=False):
    return {'device': 0, 'address': address, 'total_size': size, 'stream': 0, 'segment_type': 'large',
            'is_expandable': expandable, 'frames': [], 'blocks': blocks}
asked = 25 * MiB if variant == 'idle' else 20 * MiB
e = [entry('alloc', S1 + 512 * KiB, 200000, 10, 'make_q', 11),
     entry('segment_map' if variant == 'mapped' else 'segment_alloc', S2, 20 * MiB, 20, 'make_r', 12),
     entry('alloc', S2, 4000000, 30, 'make_r', 12),
     entry('free_requested', S1 + 512 * KiB, 200000, 40),
     entry('free_completed', S1 + 512 * KiB, 200000, 41),
     entry('alloc', S2 + 4 * MiB, 3000000, 60, 'make_y', 13),
     entry('alloc', S2 + 7 * MiB, 1000000, 65, 'make_z', 14),
     {'action': 'oom', 'device_free': 10 * MiB, 'size': asked, 'stream': 0, 'time_us': w0 + 65,
      'frames': frames('too_big', 15)},
     entry('free_requested', S2, 4000000, 70),
     entry('free_completed', S2, 4000000, 71)]
p = block(S1, 512 * KiB, 500000, 'active_allocated', 'make_p', 10)
s1 = segment(S1, 2 * MiB, [p, block(S1 + 512 * KiB, 1536 * KiB, 0, 'inactive')])
idle = [segment(S3, 20 * MiB, [block(S3, 20 * MiB, 0, 'inactive')])] if variant == 'idle' else []
if variant == 'missing':
    idle = [segment(S3, 20 * MiB, [block(S3, 2 * MiB, 2000000, 'active_allocated', 'make_w', 16),
                                   block(S3 + 2 * MiB, 18 * MiB, 0, 'inactive')])]
expandable = variant == 'mapped'
usr1 = {'segments': [s1, segment(S2, 20 * MiB, [block(S2, 4 * MiB, 4000000, 'active_allocated', 'make_r', 12),
                                                block(S2 + 4 * MiB, 16 * MiB, 0, 'inactive')], expandable)] + idle,
        'device_traces': [e[0:5]], 'allocator_settings': {'expandable_segments': False}}
exit_segments = [s1, segment(S2, 20 * MiB, [block(S2, 4 * MiB, 0, 'inactive'),
                                            block(S2 + 4 * MiB, 3 * MiB, 3000000, 'active_allocated', 'make_y', 13),
                                            block(S2 + 7 * MiB, 1 * MiB, 1000000, 'active_allocated', 'make_z', 14),
                                            block(S2 + 8 * MiB, 12 * MiB, 0, 'inactive')], expandable)] + idle
exit = {'segments': exit_segments, 'device_traces': [e[8:10] if variant == 'gap' else e[2:10]],
        'allocator_settings': {'expandable_segments': variant == 'expandable'}}
for name, snapshot in (('usr1-1', usr1), ('exit', exit)):
    open('%s/t.trace.torch-%s.pickle' % (out, name), 'wb').write(pickle.dumps(snapshot, protocol=4))
print('{}')
)";

class SnapshotJoin : public testing::Test {
 protected:
  // Writes the trace and the snapshots of a variant; returns the trace's path.
  std::string make(const std::string& variant) {
    const bool idle = variant == "idle", mapped = variant == "mapped";
    const uint64_t asked = idle ? 25 * kMiB : 20 * kMiB;
    TraceBuilder b;
    uint64_t now = 0;
    auto dt = [&](uint64_t us) {  // the step to `us` µs
      uint64_t delta = us * kUs - now;
      now = us * kUs;
      return delta;
    };
    b.process(4242, 1, kW0, 64, -1, "host", "/usr/bin/python3", {"python3", "train.py"});
    b.thread_new(1, 4242, "python3");
    b.alloc(Api::cudaMalloc, 0, kS1, 2 * kMiB, 0, dt(1));
    if (idle) b.alloc(Api::cudaMalloc, 0, kS3, 20 * kMiB, 0, dt(5));
    if (mapped) {
      b.alloc(Api::cuMemCreate, 0, 0x11, 10 * kMiB, 0, dt(18));
      b.alloc(Api::cuMemCreate, 0, 0x12, 10 * kMiB, 0, 0);
      b.mem_map(kS2, 10 * kMiB, 0x11, 0, dt(19));
      b.mem_map(kS2 + 10 * kMiB, 10 * kMiB, 0x12, 0, 0);
    } else {
      b.alloc(Api::cudaMalloc, 0, kS2, 20 * kMiB, 0, dt(19));
    }
    b.alloc(Api::cudaMalloc, 0, kX, 1 * kMiB, 0, dt(25));
    b.event(trace::TorchSnapshot{{}, 2, 1, 50 * kUs, kW0 + 50 * kUs, "t.trace.torch-usr1-1.pickle"}, dt(50));
    b.alloc_failed(Api::cudaMalloc, 0, asked, 0, format::kErrorOutOfMemory, dt(65), 10 * kMiB, 100 * kMiB);
    b.event(trace::TorchSnapshot{{}, 0, 1, 90 * kUs, kW0 + 90 * kUs, "t.trace.torch-exit.pickle"}, dt(90));
    b.end(9, dt(100));
    std::string trace = write_file(scratch_ / "t.trace", b.bytes());
    ProcessResult r = run_process({"python3", "-c", kSnapshots, scratch_.path(), variant, std::to_string(kW0 / kUs)});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return trace;
  }

  Json report(const std::vector<std::string>& args) {
    ProcessResult r = run_gpumemtrace(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return r.exit_code == 0 ? Json::parse(r.out) : Json::object();
  }

  ScratchDir scratch_;
};

// The innermost frame of a JSON stack, as "train.py:13 in make_y".
std::string innermost(const Json& stack) {
  if (stack.empty()) return "";
  const Json& frame = stack.at(0);
  return frame["file"].get<std::string>() + ":" + std::to_string(frame["line"].get<int>()) + " in " +
         frame["function"].get<std::string>();
}

TEST_F(SnapshotJoin, EachEventOnceFromTheSnapshotsThatHaveIt) {
  Json joined = report({"summary", "--json", make("overlap")})["trace"]["pytorch_snapshots"];
  ASSERT_EQ(joined["joined"].size(), 2u);
  const Json& usr1 = joined["joined"][0];
  EXPECT_EQ(usr1["file"], "t.trace.torch-usr1-1.pickle");
  EXPECT_EQ(usr1["reason"], "usr1");
  EXPECT_EQ(usr1["history_events"], 5);
  EXPECT_EQ(usr1["repeated_events"], 0);
  EXPECT_EQ(usr1["history_begins_ns"], 10 * kUs);
  const Json& exit = joined["joined"][1];
  EXPECT_EQ(exit["reason"], "exit");
  EXPECT_EQ(exit["history_events"], 8);
  EXPECT_EQ(exit["repeated_events"], 3) << "e3, e4 and e5";
  EXPECT_EQ(exit["history_begins_ns"], 30 * kUs);
  EXPECT_EQ(exit["state_changes"], 0) << "no event was lost between the two";
  EXPECT_EQ(joined["events"], 10);
  EXPECT_EQ(joined["history_begins_ns"], 10 * kUs);
  EXPECT_EQ(joined["segments"], 2);
  EXPECT_EQ(joined["missing_segments"], 0);
  EXPECT_EQ(joined["other_allocations"], 1) << "X";
  EXPECT_EQ(joined["other_bytes"], kMiB);
  EXPECT_EQ(joined["unmatched_ooms"], 0);
  EXPECT_EQ(joined["expandable_segments"], false);
  for (const auto& [what, count] : joined["history_inconsistencies"].items()) EXPECT_EQ(count, 0) << what;
}

// The used view: the blocks' asked bytes, with X as it is. P and Q (700000) from 10 µs, R from 30, Q freed at 41,
// Y at 60 and Z at 65: P + R + Y + Z = 8500000 + X at 65 µs. The reserved view: S1, S2 and X.
TEST_F(SnapshotJoin, UsedViewIsPytorchsBlocksWithTheirStacks) {
  std::string trace = make("overlap");
  Json summary = report({"summary", "--json", trace});
  EXPECT_EQ(summary["view"], "used");
  const Json& device = summary["devices"].at(0);
  EXPECT_EQ(device["peak_bytes"], 8500000 + kMiB);
  EXPECT_EQ(device["peak_time_ns"], 65 * kUs);
  EXPECT_EQ(device["final_bytes"], 500000 + 3000000 + 1000000 + kMiB);
  EXPECT_EQ(device["reserved"]["peak_bytes"], 23 * kMiB);
  EXPECT_EQ(device["reserved"]["peak_time_ns"], 25 * kUs);

  Json peak = report({"peak", "--json", trace})["peak"];
  ASSERT_EQ(peak.size(), 5u);
  std::map<std::string, uint64_t> bytes;
  for (const Json& site : peak) bytes[innermost(site["stack"])] = site["bytes"].get<uint64_t>();
  EXPECT_EQ(bytes["train.py:12 in make_r"], 4000000u);
  EXPECT_EQ(bytes["train.py:13 in make_y"], 3000000u);
  EXPECT_EQ(bytes["train.py:14 in make_z"], 1000000u);
  EXPECT_EQ(bytes["train.py:10 in make_p"], 500000u);
  EXPECT_EQ(bytes[""], kMiB) << "X, allocated with no stack";

  ProcessResult text = run_gpumemtrace({"peak", trace});
  EXPECT_NE(text.out.find("view: used: the tensors (PyTorch's blocks) count, not PyTorch's 2 segments that hold them "
                          "(--view reserved: the driver's allocations)\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("PyTorch snapshots joined: t.trace.torch-usr1-1.pickle (usr1, taken at 50 µs), "
                          "t.trace.torch-exit.pickle (exit, taken at 90 µs) (--no-snapshots: the trace alone)\n"
                          "PyTorch history: 10 events from 10 µs on, each once; before that only PyTorch's state "
                          "then is known; 2 segments joined to the trace's allocations\n"),
            std::string::npos)
      << text.out;
}

// The failure comes at 65 µs, the µs of Z's alloc and of the oom entry: Z is PyTorch's before it failed.
TEST_F(SnapshotJoin, TheHeapsAtTheFailureArePytorchsAsItFailed) {
  Json oom = report({"oom", "--json", make("overlap")})["ooms"].at(0);
  EXPECT_EQ(oom["verdict"], "pytorch-cache");
  EXPECT_EQ(oom["cache_remedy"], "expandable-segments");
  const Json& heaps = oom["heaps"];
  EXPECT_EQ(heaps["pytorch"], true);
  EXPECT_EQ(heaps["heaps"], 2);
  EXPECT_EQ(heaps["reserved_bytes"], 22 * kMiB);
  EXPECT_EQ(heaps["allocated_bytes"], 8500000);
  EXPECT_EQ(heaps["free_bytes"], 1536 * kKiB + 12 * kMiB);
  EXPECT_EQ(heaps["free_blocks"], 2);
  EXPECT_EQ(heaps["largest_free_block_bytes"], 12 * kMiB);
  EXPECT_EQ(heaps["idle_bytes"], 0);
  EXPECT_EQ(oom["finding"],
            "PyTorch's cache would have held it: 10.0 MiB (10485760 B) free + 13.5 MiB (14155776 B) cached >= 20.0 MiB "
            "(20971520 B); its 2 segments reserved 22.0 MiB (23068672 B), 8.11 MiB (8500000 B) of it allocated; the "
            "cache is 2 free blocks, the largest 12.0 MiB (12582912 B), none of it a whole idle segment: it is split "
            "between the tensors in use");
  EXPECT_EQ(oom["remedy"],
            "set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (it was off in this run): a segment then grows by "
            "mapping pages, and the pages of free blocks between tensors can be given back and mapped where they are "
            "needed instead of staying split");
}

TEST_F(SnapshotJoin, WithExpandableSegmentsOnTheRemedyIsMaxSplitSize) {
  Json oom = report({"oom", "--json", make("expandable")})["ooms"].at(0);
  EXPECT_EQ(oom["verdict"], "pytorch-cache");
  EXPECT_EQ(oom["cache_remedy"], "max-split-size");
  EXPECT_NE(oom["remedy"].get<std::string>().find("expandable segments are on already: set "
                                                  "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:N"),
            std::string::npos);
}

// S2 is mapped VMM memory (expandable segments): two ranges of 10 MiB, each its own physical allocation.
TEST_F(SnapshotJoin, AnExpandableSegmentIsTheRangesMappedThere) {
  std::string trace = make("mapped");
  Json summary = report({"summary", "--json", trace});
  const Json& joined = summary["trace"]["pytorch_snapshots"];
  EXPECT_EQ(joined["segments"], 2);
  EXPECT_EQ(joined["missing_segments"], 0);
  EXPECT_EQ(joined["other_allocations"], 1) << "X; the physical memory mapped into S2 is PyTorch's";
  EXPECT_EQ(joined["expandable_segments"], true) << "mapped, whatever the settings say";
  EXPECT_EQ(summary["devices"].at(0)["peak_bytes"], 8500000 + kMiB);
  Json oom = report({"oom", "--json", trace})["ooms"].at(0);
  EXPECT_EQ(oom["cache_remedy"], "max-split-size");
  EXPECT_EQ(oom["heaps"]["allocated_bytes"], 8500000);
}

// S3, 20 MiB with nothing in it: giving it back would have made room for 25 MiB.
TEST_F(SnapshotJoin, AnIdleSegmentCalledForEmptyCache) {
  Json oom = report({"oom", "--json", make("idle")})["ooms"].at(0);
  EXPECT_EQ(oom["verdict"], "pytorch-cache");
  EXPECT_EQ(oom["cache_remedy"], "empty-cache");
  EXPECT_EQ(oom["heaps"]["idle_heaps"], 1);
  EXPECT_EQ(oom["heaps"]["idle_bytes"], 20 * kMiB);
  EXPECT_EQ(oom["heaps"]["free_bytes"], 1536 * kKiB + 12 * kMiB + 20 * kMiB);
  const std::string finding = oom["finding"];
  EXPECT_NE(finding.find("; 20.0 MiB (20971520 B) of it is 1 segments with nothing in them"), std::string::npos)
      << finding;
  EXPECT_TRUE(oom["remedy"].get<std::string>().starts_with("give the idle segments back to the device before the "
                                                           "large allocation: torch.cuda.empty_cache()"));
}

// Exit's ring buffer holds e7 and e8 only: what happened between 41 and 70 µs is lost; at 70 µs the state is set
// to exit's (Y and Z are added), and the failure at 65 µs sees what the history knew then: P and R.
TEST_F(SnapshotJoin, EventsLostBetweenRingBuffersAreSaid) {
  std::string trace = make("gap");
  Json joined = report({"summary", "--json", trace})["trace"]["pytorch_snapshots"];
  EXPECT_EQ(joined["events"], 7);
  EXPECT_EQ(joined["joined"][1]["repeated_events"], 0);
  EXPECT_EQ(joined["joined"][1]["state_changes"], 2);
  Json oom = report({"oom", "--json", trace})["ooms"].at(0);
  EXPECT_EQ(oom["heaps"]["allocated_bytes"], 4500000);
  ProcessResult text = run_gpumemtrace({"summary", trace});
  EXPECT_NE(text.out.find("warning: events were lost before the history of t.trace.torch-exit.pickle begins (its "
                          "ring buffer had wrapped): 2 segments and blocks were set as it had them then\n"),
            std::string::npos)
      << text.out;
}

// S3 is in the snapshots, not in the trace: left out with W, and said.
TEST_F(SnapshotJoin, ASegmentTheTraceDoesNotHaveIsLeftOutAndSaid) {
  std::string trace = make("missing");
  Json summary = report({"summary", "--json", trace});
  const Json& joined = summary["trace"]["pytorch_snapshots"];
  EXPECT_EQ(joined["segments"], 2);
  EXPECT_EQ(joined["missing_segments"], 1);
  EXPECT_EQ(joined["missing_segment_bytes"], 20 * kMiB);
  EXPECT_EQ(joined["left_out_blocks"], 1);
  EXPECT_EQ(summary["devices"].at(0)["final_bytes"], 500000 + 3000000 + 1000000 + kMiB) << "without W";
  ProcessResult text = run_gpumemtrace({"summary", trace});
  EXPECT_NE(text.out.find("warning: PyTorch's history has 1 segment (20.0 MiB) that the trace does not: left out, with 1 "
                          "block allocation\n"),
            std::string::npos)
      << text.out;
}

TEST_F(SnapshotJoin, ASnapshotThatCannotBeReadIsLeftOutWithAWarning) {
  std::string trace = make("overlap");
  std::filesystem::remove(scratch_ / "t.trace.torch-usr1-1.pickle");
  write_file(scratch_ / "t.trace.torch-exit.pickle", {0x80, 0x04, 0xff});
  ProcessResult r = run_gpumemtrace({"summary", "--json", trace});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "gpumemtrace: warning: " + scratch_.path() +
                       "/t.trace.torch-usr1-1.pickle: no such file: the trace is analyzed without this PyTorch "
                       "snapshot\n"
                       "gpumemtrace: warning: " + scratch_.path() +
                       "/t.trace.torch-exit.pickle: not a PyTorch memory snapshot: byte 0xff at byte offset 2 is not a "
                       "pickle opcode: the trace is analyzed without this PyTorch snapshot\n");
  Json summary = Json::parse(r.out);
  EXPECT_EQ(summary["trace"]["pytorch_snapshots"]["joined"].size(), 0u);
  EXPECT_EQ(summary["trace"]["pytorch_snapshots"]["unreadable"].size(), 2u);
  EXPECT_EQ(summary["view"], "reserved") << "no heaps";
  EXPECT_EQ(summary["devices"].at(0)["peak_bytes"], 23 * kMiB);
}

// A damaged trace may name any file: only a regular file beside the trace is read.
TEST_F(SnapshotJoin, OnlyARegularFileBesideTheTraceIsRead) {
  TraceBuilder b;
  b.process(4242, 1, kW0, 64, -1, "host", "/usr/bin/python3", {"python3"});
  b.event(trace::TorchSnapshot{{}, 0, 1, 1 * kUs, kW0 + 1 * kUs, "../t.trace.torch-exit.pickle"}, 1 * kUs);
  b.event(trace::TorchSnapshot{{}, 2, 1, 2 * kUs, kW0 + 2 * kUs, "fifo"}, 1 * kUs);
  std::string trace = write_file(scratch_ / "t.trace", b.bytes());
  ASSERT_EQ(mkfifo((scratch_ / "fifo").c_str(), 0600), 0);
  ProcessResult r = run_gpumemtrace({"summary", trace});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "gpumemtrace: warning: ../t.trace.torch-exit.pickle: not the name of a file beside the trace: the "
                   "trace is analyzed without this PyTorch snapshot\n"
                   "gpumemtrace: warning: " + scratch_.path() + "/fifo: not a regular file: the trace is analyzed "
                   "without this PyTorch snapshot\n");
}

// --no-snapshots reads the trace alone: the report of the same trace with no snapshot beside it.
TEST_F(SnapshotJoin, NoSnapshotsIsTheTraceAlone) {
  std::string trace = make("overlap");
  Json alone = report({"summary", "--json", "--no-snapshots", trace});
  EXPECT_FALSE(alone["trace"].contains("pytorch_snapshots"));
  ScratchDir elsewhere;
  std::filesystem::copy_file(trace, elsewhere / "t.trace");
  ProcessResult r = run_gpumemtrace({"summary", "--json", elsewhere / "t.trace"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json without = Json::parse(r.out);
  EXPECT_EQ(without["trace"]["pytorch_snapshots"]["joined"].size(), 0u);
  for (Json* json : {&alone, &without}) {
    (*json)["trace"].erase("path");
    (*json)["trace"].erase("pytorch_snapshots");
  }
  EXPECT_EQ(alone, without);
  EXPECT_EQ(report({"fragmentation", "--json", "--no-snapshots", trace})["devices"].at(0)["heaps"].size(), 0u);
}

// In a directory of traces, the snapshots a trace's hook wrote beside it are read with that trace.
TEST_F(SnapshotJoin, InADirectoryTheSnapshotsGoWithTheirTrace) {
  make("overlap");
  Json ranks = report({"summary", "--json", scratch_.path()});
  ASSERT_EQ(ranks["ranks"].size(), 1u) << ranks["ranks"].dump(1);
  EXPECT_EQ(ranks["reports"].at(0)["report"]["trace"]["pytorch_snapshots"]["events"], 10);
}

// The entries of a later ring buffer that the history has already: the longest run at its beginning that repeats
// the history's end.
TEST(RepeatedEntries, TheLongestRunThatRepeatsTheHistorysEnd) {
  auto entry = [](uint64_t address, uint64_t time_us) {
    pytorch::SnapshotEntry e;
    e.action = pytorch::schema::Action::Alloc;
    e.address = address;
    e.time_us = time_us;
    return e;
  };
  const pytorch::SnapshotEntry a = entry(1, 10), b = entry(2, 11), c = entry(3, 12), d = entry(4, 13), x = entry(5, 9);
  auto repeated = [](std::vector<pytorch::SnapshotEntry> history, std::vector<pytorch::SnapshotEntry> later) {
    std::vector<const pytorch::SnapshotEntry*> pointers;
    for (const pytorch::SnapshotEntry& e : history) pointers.push_back(&e);
    return pytorch::repeated_entries(pointers, later);
  };
  EXPECT_EQ(repeated({a, b, c}, {b, c, d}), 2u) << "the ring buffer wrapped";
  EXPECT_EQ(repeated({a, b, c}, {a, b, c, d}), 3u) << "it holds the whole history";
  EXPECT_EQ(repeated({a, b, c}, {x, a, b, c, d}), 4u) << "and more before it";
  EXPECT_EQ(repeated({a, b, c}, {d}), 0u) << "events were lost between them";
  EXPECT_EQ(repeated({a, b, c}, {c}), 1u);
  EXPECT_EQ(repeated({}, {a}), 0u);
  pytorch::SnapshotEntry later_b = b;
  later_b.time_us = 11 + 2000;
  EXPECT_EQ(repeated({a, b}, {later_b, c}), 0u) << "the same block again, 2 ms later: another event";
  pytorch::SnapshotEntry b_recalibrated = b, c_recalibrated = c;
  b_recalibrated.time_us = 11 + 3;
  c_recalibrated.time_us = 12 + 3;
  EXPECT_EQ(repeated({a, b, c}, {b_recalibrated, c_recalibrated, d}), 2u)
      << "one event, its time converted by another snapshot's calibration";
  auto step = [](pytorch::SnapshotEntry e, uint64_t n) {
    e.time_us = *e.time_us + n * 5000;
    return e;
  };
  EXPECT_EQ(repeated({a, b, step(a, 1), step(b, 1)}, {step(a, 1), step(b, 1), step(a, 2), step(b, 2)}), 2u)
      << "a loop's events, alike but a step apart, are not the history again";
  EXPECT_EQ(repeated({a, a, a}, {a, a, a, a}), 4u) << "alike events: the longest run";
}

}  // namespace
}  // namespace gpumemtrace::test
