// The PyTorch hook (interpose/torch, python/gpumemtrace/torch_hook.py) against the test double of torch
// (fake_torch/), run by every installed CPython 3.10-3.14 under libgpumemtrace.so on the simulated device
// (torch_workload.py); a version that is not installed is skipped, visibly. The snapshots are read with
// Python's own unpickler (snapshot_facts.py), the traces as the analyzer reads them.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/size_units.h"
#include "tests/support/python_interpreters.h"
#include "tests/support/source_lines.h"
#include "tests/support/subprocess.h"
#include "tests/support/traced_run.h"
#include "trace/reader/reader.h"

namespace gpumemtrace::test {
namespace {

namespace fs = std::filesystem;
using Reason = format::TorchSnapshotReason;

const std::string kWorkload = GMT_TORCH_TESTS "/torch_workload.py";
const std::string kSnapshotFacts = GMT_TORCH_TESTS "/snapshot_facts.py";
const std::string kFakeTorch = GMT_TORCH_TESTS "/fake_torch";

using Range = std::pair<uint64_t, uint64_t>;  // address, size

struct Snapshot {
  trace::TorchSnapshot record;
  std::string file;              // the record's view, kept
  std::set<Range> live;          // device memory live in the trace at the record
  std::optional<trace::AllocFailed> last_failure;  // the last one before it
};

struct TorchTrace {
  trace::Status status = trace::Status::Reading;
  std::string error;
  uint64_t start_wall_ns = 0;
  std::vector<trace::TorchHook> hooks;
  std::vector<std::string> torch_versions;
  std::vector<Snapshot> snapshots;
};

TorchTrace read_torch_trace(const std::string& path) {
  TorchTrace out;
  trace::Reader reader(path);
  std::map<uint64_t, uint64_t> live;
  std::optional<trace::AllocFailed> last_failure;
  while (const trace::Record* record = reader.next()) {
    if (const auto* alloc = std::get_if<trace::Alloc>(record); alloc && alloc->kind() == format::MemoryKind::Device)
      live[alloc->address] = alloc->size;
    else if (const auto* free = std::get_if<trace::Free>(record))
      live.erase(free->address);
    else if (const auto* failed = std::get_if<trace::AllocFailed>(record))
      last_failure = *failed;
    else if (const auto* hook = std::get_if<trace::TorchHook>(record)) {
      out.hooks.push_back(*hook);
      out.torch_versions.emplace_back(hook->torch_version);
    } else if (const auto* snapshot = std::get_if<trace::TorchSnapshot>(record)) {
      out.snapshots.push_back({*snapshot, std::string(snapshot->file), {live.begin(), live.end()}, last_failure});
    }
  }
  out.status = reader.status();
  out.error = reader.error();
  if (reader.process()) out.start_wall_ns = reader.process()->start_wall_ns;
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

size_t count(const std::vector<std::string>& lines, const std::string& line) {
  return static_cast<size_t>(std::count(lines.begin(), lines.end(), line));
}

// The *.pickle and *.tmp files of a directory.
std::set<std::string> snapshot_files(const std::string& dir) {
  std::set<std::string> names;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.ends_with(".pickle") || name.ends_with(".tmp")) names.insert(name);
  }
  return names;
}

class TorchHook : public InstalledPythonTest {
 protected:
  void SetUp() override {
    InstalledPythonTest::SetUp();
    fake_log_ = make_temp_dir() + "/fake_torch.log";
  }

  std::vector<std::string> args(const std::string& scenario) const {
    return {"-B", kWorkload, scenario, analyzer_path()};
  }
  EnvChanges env(EnvChanges extra) const {
    extra.emplace("PYTHONPATH", kFakeTorch);
    extra.emplace("FAKE_TORCH_LOG", fake_log_);
    return extra;
  }
  TracedRun traced(const std::string& scenario, EnvChanges extra = {}) {
    TracedRun run = run_traced(interpreter_->executable, args(scenario), env(std::move(extra)));
    EXPECT_EQ(run.result.term_signal, 0) << run.result.err;
    EXPECT_EQ(run.result.exit_code, 0) << run.result.out << run.result.err;
    return run;
  }
  ProcessResult untraced(const std::string& scenario, EnvChanges extra = {}) {
    std::vector<std::string> argv = args(scenario);
    argv.insert(argv.begin(), interpreter_->executable);
    return run_process(argv, sim_env(env(std::move(extra))));
  }
  TorchTrace trace_of(const TracedRun& run) {
    TorchTrace trace = read_torch_trace(run.trace);
    EXPECT_EQ(trace.status, trace::Status::Complete) << trace.error;
    return trace;
  }
  nlohmann::json facts(const std::string& pickle) {
    ProcessResult r = run_process({interpreter_->executable, "-B", kSnapshotFacts, pickle});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
  }
  std::vector<std::string> fake_calls() const {
    return file_exists(fake_log_) ? lines_of(read_file(fake_log_)) : std::vector<std::string>{};
  }

  // The snapshot's segments are the trace's device allocations live at the snapshot record: the same
  // addresses and sizes.
  void expect_segments_match_trace(const nlohmann::json& snapshot, const Snapshot& in_trace) {
    std::set<Range> segments;
    for (const auto& segment : snapshot["segments"])
      segments.emplace(segment["address"].get<uint64_t>(), segment["total_size"].get<uint64_t>());
    EXPECT_EQ(segments, in_trace.live);
  }

  std::string fake_log_;
};

TEST_P(TorchHook, EnablesHistoryOnceAndWritesAnExitSnapshot) {
  TracedRun run = traced("train");
  ProcessResult plain = untraced("train");
  EXPECT_EQ(run.result.out, plain.out);
  EXPECT_EQ(run.result.err, plain.err);

  std::vector<std::string> calls = fake_calls();
  EXPECT_EQ(count(calls, "record_memory_history enabled=all context=alloc stacks=python max_entries=100000"), 1u);
  EXPECT_EQ(count(calls, "attach_out_of_memory_observer"), 1u);
  EXPECT_EQ(count(calls, "snapshot"), 1u);
  EXPECT_EQ(snapshot_files(run.dir), std::set<std::string>{"root.trace.torch-exit.pickle"});

  TorchTrace trace = trace_of(run);
  ASSERT_EQ(trace.hooks.size(), 1u);
  EXPECT_EQ(trace.torch_versions[0], "2.6.0");
  EXPECT_EQ(trace.hooks[0].history_entries, 100000u);
  EXPECT_EQ(trace.hooks[0].usr1, static_cast<uint64_t>(format::TorchSignal::Taken));
  ASSERT_EQ(trace.snapshots.size(), 1u);
  const Snapshot& exit = trace.snapshots[0];
  EXPECT_EQ(exit.record.reason, static_cast<uint64_t>(Reason::Exit));
  EXPECT_EQ(exit.record.sequence, 1u);
  EXPECT_EQ(exit.file, "root.trace.torch-exit.pickle");
  EXPECT_LE(exit.record.taken_ns, exit.record.time_ns);
  EXPECT_GT(exit.record.taken_ns, trace.hooks[0].time_ns);
  // Both clocks of the moment it was taken: the wall clock less the trace's start is the trace's time.
  int64_t clocks_apart = static_cast<int64_t>(exit.record.taken_wall_ns - trace.start_wall_ns) -
                         static_cast<int64_t>(exit.record.taken_ns);
  EXPECT_LT(std::abs(clocks_apart), 100'000'000) << "ns";

  // PyTorch's rules: 1000 B, 300 KiB twice and 700 KiB share a 2 MiB segment; 3, 5 and 12 MiB fill a 20 MiB
  // one; 25 MiB gets its own, rounded up to 26 MiB. 300 KiB and 5 MiB were freed into the cache.
  nlohmann::json snapshot = facts(run.dir + "/" + exit.file);
  std::multiset<uint64_t> sizes;
  for (const auto& segment : snapshot["segments"]) sizes.insert(segment["total_size"].get<uint64_t>());
  EXPECT_EQ(sizes, (std::multiset<uint64_t>{2 * kMiB, 20 * kMiB, 26 * kMiB}));
  expect_segments_match_trace(snapshot, exit);
  // The history holds every allocation made after the first one, with its Python stack: the list
  // comprehension in train(), a frame of its own before CPython 3.12 (PEP 709).
  std::string innermost = GetParam() < 12 ? "<listcomp>" : "train";
  std::multiset<uint64_t> allocated;
  for (const auto& entry : snapshot["history"]) {
    if (entry["action"] != "alloc" || entry["size"] == 1000) continue;
    allocated.insert(entry["size"].get<uint64_t>());
    EXPECT_EQ(entry["frame"], innermost);
  }
  EXPECT_EQ(allocated, (std::multiset<uint64_t>{300 * kKiB, 300 * kKiB, 700 * kKiB, 3 * kMiB, 5 * kMiB, 12 * kMiB,
                                                25 * kMiB}));
}

TEST_P(TorchHook, OutOfMemoryWritesOneSnapshotThatMatchesTheTrace) {
  EnvChanges memory{{"GPUMEMTRACE_SIM_MEMORY", "256MiB"}};
  TracedRun run = traced("oom", memory);
  ProcessResult plain = untraced("oom", memory);
  EXPECT_EQ(run.result.out, plain.out);
  // 256 MiB less the 48 MiB of train()'s segments holds 6 tensors of 30 MiB (nothing in the cache is free to give
  // back: each segment has a tensor in it).
  EXPECT_NE(run.result.out.find("out of memory after 6 tensors of 30 MiB"), std::string::npos) << run.result.out;
  EXPECT_EQ(snapshot_files(run.dir),
            (std::set<std::string>{"root.trace.torch-oom-1.pickle", "root.trace.torch-exit.pickle"}));

  TorchTrace trace = trace_of(run);
  ASSERT_EQ(trace.snapshots.size(), 2u);
  const Snapshot& oom = trace.snapshots[0];
  EXPECT_EQ(oom.record.reason, static_cast<uint64_t>(Reason::OutOfMemory));
  EXPECT_EQ(oom.record.sequence, 1u);
  EXPECT_EQ(oom.file, "root.trace.torch-oom-1.pickle");
  EXPECT_EQ(oom.record.device, 0);
  EXPECT_EQ(oom.record.size, 30 * kMiB);
  EXPECT_EQ(oom.record.device_total, 256 * kMiB);
  // What PyTorch's observer was told is what the driver said at the failed cudaMalloc.
  ASSERT_TRUE(oom.last_failure);
  EXPECT_EQ(oom.last_failure->size, 30 * kMiB);
  EXPECT_EQ(oom.record.device_free, oom.last_failure->device_free);
  EXPECT_LT(oom.record.device_free, 30 * kMiB);

  nlohmann::json snapshot = facts(run.dir + "/" + oom.file);
  expect_segments_match_trace(snapshot, oom);
  EXPECT_EQ(snapshot["segments"].size(), 9u);  // the 2, 20 and 26 MiB ones and six of 30 MiB
  ASSERT_FALSE(snapshot["history"].empty());
  const auto& last = snapshot["history"].back();
  EXPECT_EQ(last["action"], "oom");
  EXPECT_EQ(last["addr"].get<uint64_t>(), oom.record.device_free);
  EXPECT_EQ(trace.snapshots[1].record.reason, static_cast<uint64_t>(Reason::Exit));
}

TEST_P(TorchHook, SnapshotCommandAsksForOneOnSigusr1) {
  TracedRun run = traced("usr1");
  std::vector<std::string> out = lines_of(run.result.out);
  EXPECT_EQ(count(out, "snapshot command exit 0"), 1u) << run.result.out;
  EXPECT_EQ(count(out, "snapshot command stdout: " + run.dir + "/root.trace.torch-usr1-1.pickle"), 1u)
      << run.result.out;
  EXPECT_EQ(snapshot_files(run.dir),
            (std::set<std::string>{"root.trace.torch-usr1-1.pickle", "root.trace.torch-exit.pickle"}));
  TorchTrace trace = trace_of(run);
  ASSERT_EQ(trace.snapshots.size(), 2u);
  EXPECT_EQ(trace.snapshots[0].record.reason, static_cast<uint64_t>(Reason::Signal));
  EXPECT_EQ(trace.snapshots[0].record.sequence, 1u);
  EXPECT_EQ(trace.snapshots[0].file, "root.trace.torch-usr1-1.pickle");
  expect_segments_match_trace(facts(run.dir + "/" + trace.snapshots[0].file), trace.snapshots[0]);
}

TEST_P(TorchHook, ProgramsOwnSigusr1HandlerRunsAfterTheSnapshot) {
  TracedRun run = traced("usr1_chained");
  std::vector<std::string> out = lines_of(run.result.out);
  EXPECT_EQ(count(out, "snapshot command exit 0"), 1u) << run.result.out;
  EXPECT_EQ(count(out, "the program's SIGUSR1 handler ran"), 1u) << run.result.out;
  TorchTrace trace = trace_of(run);
  ASSERT_EQ(trace.hooks.size(), 1u);
  EXPECT_EQ(trace.hooks[0].usr1, static_cast<uint64_t>(format::TorchSignal::Chained));
  EXPECT_TRUE(file_exists(run.dir + "/root.trace.torch-usr1-1.pickle"));
}

// Threads allocate (the tracer's hooks run under the allocator's lock, without the GIL) while the hook starts
// on the main thread, three snapshots are taken there on SIGUSR1 and a thread runs out of memory.
TEST_P(TorchHook, ThreadsAllocatingWhileSnapshotsAreTakenDoNotDeadlock) {
  TracedRun run = traced("threads", {{"GPUMEMTRACE_SIM_MEMORY", "1GiB"}});
  std::vector<std::string> out = lines_of(run.result.out);
  EXPECT_EQ(count(out, "out of memory in a thread"), 1u) << run.result.out << run.result.err;
  EXPECT_EQ(count(out, "threads done"), 1u);
  EXPECT_EQ(snapshot_files(run.dir),
            (std::set<std::string>{"root.trace.torch-usr1-1.pickle", "root.trace.torch-usr1-2.pickle",
                                   "root.trace.torch-usr1-3.pickle", "root.trace.torch-oom-1.pickle",
                                   "root.trace.torch-exit.pickle"}));
  EXPECT_EQ(trace_of(run).snapshots.size(), 5u);
  EXPECT_EQ(count(fake_calls(), "attach_out_of_memory_observer"), 1u);
}

TEST_P(TorchHook, Torch20GetsTheLegacyCall) {
  TracedRun run = traced("train", {{"FAKE_TORCH_API", "legacy"}});
  std::vector<std::string> calls = fake_calls();
  EXPECT_EQ(count(calls, "record_memory_history legacy enabled=True trace_alloc_max_entries=100000 "
                         "trace_alloc_record_context=True"),
            1u);
  EXPECT_EQ(count(calls, "attach_out_of_memory_observer"), 1u);
  TorchTrace trace = trace_of(run);
  ASSERT_EQ(trace.hooks.size(), 1u);
  EXPECT_EQ(trace.torch_versions[0], "2.0.1");
  EXPECT_EQ(snapshot_files(run.dir), std::set<std::string>{"root.trace.torch-exit.pickle"});
}

TEST_P(TorchHook, HistoryLengthComesFromTheEnvironment) {
  TracedRun run = traced("train", {{"GPUMEMTRACE_TORCH_ENTRIES", "3"}});
  EXPECT_EQ(count(fake_calls(), "record_memory_history enabled=all context=alloc stacks=python max_entries=3"), 1u);
  TorchTrace trace = trace_of(run);
  ASSERT_EQ(trace.hooks.size(), 1u);
  EXPECT_EQ(trace.hooks[0].history_entries, 3u);
  EXPECT_EQ(facts(run.dir + "/root.trace.torch-exit.pickle")["history"].size(), 3u);
}

// Where the hook must not start, the program's output and exit status are those of a run without the
// tracer, nothing is written beside the trace and the trace says nothing of PyTorch; the torch that lacks
// what the hook needs gets one line on stderr.
struct OffCase {
  const char* name;
  const char* scenario;
  EnvChanges env;
  const char* stderr_line;  // its end, or nullptr: stderr as without the tracer
};

TEST_P(TorchHook, ChangesNothingWhereItCannotStart) {
  const OffCase cases[] = {
      {"GPUMEMTRACE_TORCH=0", "train", {{"GPUMEMTRACE_TORCH", "0"}}, nullptr},
      {"no torch imported", "no_torch", {}, nullptr},
      {"torch 1.13", "train", {{"FAKE_TORCH_API", "old"}},
       "PyTorch 1.13.1 has no torch._C._cuda_attach_out_of_memory_observer (2.0 or later is needed): no PyTorch "
       "snapshots"},
      {"torch without CUDA", "train", {{"FAKE_TORCH_API", "cpu"}},
       "PyTorch 2.6.0+cpu has no CUDA device: no PyTorch snapshots"},
  };
  for (const OffCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::remove(fake_log_.c_str());
    TracedRun run = traced(c.scenario, c.env);
    ProcessResult plain = untraced(c.scenario, c.env);
    EXPECT_EQ(run.result.out, plain.out);
    EXPECT_EQ(run.result.exit_code, plain.exit_code);
    if (c.stderr_line) {
      std::vector<std::string> err = lines_of(run.result.err);
      ASSERT_EQ(err.size(), lines_of(plain.err).size() + 1) << run.result.err;
      EXPECT_TRUE(err.back().ends_with(c.stderr_line)) << err.back();
      EXPECT_TRUE(err.back().starts_with("gpumemtrace[")) << err.back();
    } else {
      EXPECT_EQ(run.result.err, plain.err);
    }
    EXPECT_TRUE(snapshot_files(run.dir).empty());
    TorchTrace trace = trace_of(run);
    EXPECT_TRUE(trace.hooks.empty());
    EXPECT_TRUE(trace.snapshots.empty());
    for (const std::string& call : fake_calls()) EXPECT_FALSE(call.starts_with("record_memory_history")) << call;
  }
}

TEST_P(TorchHook, SnapshotCommandRefusesAProcessWithoutTheHook) {
  for (const auto& [name, scenario, env] :
       {std::tuple{"GPUMEMTRACE_TORCH=0", "usr1_untaken", EnvChanges{{"GPUMEMTRACE_TORCH", "0"}}},
        std::tuple{"no torch imported", "usr1_untaken", EnvChanges{}}}) {
    SCOPED_TRACE(name);
    TracedRun run = traced(scenario, env);
    std::vector<std::string> out = lines_of(run.result.out);
    EXPECT_EQ(count(out, "snapshot command exit 2"), 1u) << run.result.out;
    EXPECT_EQ(count(out, "still running"), 1u);
    EXPECT_NE(run.result.out.find("the PyTorch hook is not on in process"), std::string::npos) << run.result.out;
    EXPECT_TRUE(snapshot_files(run.dir).empty());
  }
}

// The analyzer joins the trace of the out-of-memory run with the two snapshots it wrote (oom-1, exit).
class TorchJoin : public TorchHook {
 protected:
  static constexpr uint64_t kTrainAsked = 1000 + 300 * kKiB + 700 * kKiB + 3 * kMiB + 12 * kMiB + 25 * kMiB;
  static constexpr uint64_t kTensorsAsked = 6 * 30 * kMiB;

  TracedRun oom_run(EnvChanges extra = {}) {
    extra.emplace("GPUMEMTRACE_SIM_MEMORY", "256MiB");
    return traced("oom", std::move(extra));
  }
  static nlohmann::json report(const std::vector<std::string>& args) {
    ProcessResult r = run_gpumemtrace(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
  }
};

// The Python frame a JSON stack starts with is in torch_workload.py, at `line`.
bool starts_at(const nlohmann::json& stack, uint32_t line) {
  if (stack.empty()) return false;
  const nlohmann::json& frame = stack.at(0);
  return frame["kind"] == "python" && frame["file"].get<std::string>().ends_with("/torch_workload.py") &&
         frame["line"] == line;
}

// Each event of PyTorch's history once: the exit snapshot's ring buffer holds the oom snapshot's and what came
// after. The used view counts the tensors (what they asked for) with their Python stacks: train()'s that stay
// and the six of 30 MiB.
TEST_P(TorchJoin, TheReportsShowPytorchsTensorsInTheTracesSegments) {
  TracedRun run = oom_run();
  size_t oom_events = facts(run.dir + "/root.trace.torch-oom-1.pickle")["history"].size();
  size_t exit_events = facts(run.dir + "/root.trace.torch-exit.pickle")["history"].size();
  ASSERT_GT(exit_events, oom_events);

  nlohmann::json summary = report({"summary", "--json", run.trace});
  const nlohmann::json& joined = summary["trace"]["pytorch_snapshots"];
  ASSERT_EQ(joined["joined"].size(), 2u);
  EXPECT_EQ(joined["joined"][0]["file"], "root.trace.torch-oom-1.pickle");
  EXPECT_EQ(joined["joined"][1]["file"], "root.trace.torch-exit.pickle");
  EXPECT_EQ(joined["joined"][1]["repeated_events"], oom_events);
  EXPECT_EQ(joined["events"], exit_events);
  EXPECT_EQ(joined["segments"], 9);
  EXPECT_EQ(joined["missing_segments"], 0);
  EXPECT_EQ(joined["other_allocations"], 0);
  EXPECT_EQ(joined["unmatched_ooms"], 0);
  for (const auto& [what, count] : joined["history_inconsistencies"].items()) EXPECT_EQ(count, 0) << what;

  EXPECT_EQ(summary["view"], "used");
  const nlohmann::json& device = summary["devices"].at(0);
  EXPECT_EQ(device["peak_bytes"], kTrainAsked + kTensorsAsked);
  EXPECT_EQ(device["final_bytes"], kTrainAsked) << "train()'s tensors are never deleted";
  EXPECT_EQ(device["reserved"]["peak_bytes"], (2 + 20 + 26 + 6 * 30) * kMiB);

  uint32_t tensors = line_containing(kWorkload, "held.append(torch.cuda.caching_allocator_alloc(30 * MiB))");
  uint32_t train = line_containing(kWorkload, "held = [alloc(size) for size in");
  nlohmann::json peak = report({"peak", "--json", run.trace})["peak"];
  bool saw_tensors = false, saw_train = false;
  for (const nlohmann::json& site : peak) {
    if (starts_at(site["stack"], tensors)) {
      saw_tensors = true;
      EXPECT_EQ(site["bytes"], kTensorsAsked);
      EXPECT_EQ(site["allocations"], 6);
    } else if (starts_at(site["stack"], train)) {
      saw_train = true;
      EXPECT_EQ(site["bytes"], kTrainAsked - 1000) << "the first tensor came before the history: no stack";
      EXPECT_EQ(site["allocations"], 5);
    }
  }
  EXPECT_TRUE(saw_tensors && saw_train) << peak.dump(1);
}

// At the failure the free memory of PyTorch's cache is split between tensors: 300 KiB and the last 747 KiB of the
// small segment, 5 MiB in the 20 MiB one; with the device's 28 MiB it would have held the 30 MiB asked for.
TEST_P(TorchJoin, TheOutOfMemoryVerdictIsPytorchsCache) {
  for (bool expandable : {false, true}) {
    SCOPED_TRACE(expandable ? "expandable segments on" : "expandable segments off");
    TracedRun run = expandable ? oom_run({{"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}}) : oom_run();
    nlohmann::json ooms = report({"oom", "--json", run.trace})["ooms"];
    ASSERT_EQ(ooms.size(), 2u) << "the cudaMalloc, and its retry once the cache had nothing whole to give back";
    for (const nlohmann::json& oom : ooms) {
      EXPECT_EQ(oom["verdict"], "pytorch-cache");
      EXPECT_EQ(oom["cache_remedy"], expandable ? "max-split-size" : "expandable-segments");
      const nlohmann::json& heaps = oom["heaps"];
      EXPECT_EQ(heaps["pytorch"], true);
      EXPECT_EQ(heaps["heaps"], 9);
      EXPECT_EQ(heaps["reserved_bytes"], (2 + 20 + 26 + 6 * 30) * kMiB);
      EXPECT_EQ(heaps["allocated_bytes"], kTrainAsked + kTensorsAsked);
      EXPECT_EQ(heaps["free_bytes"], 300 * kKiB + (2 * kMiB - 1024 - 2 * 300 * kKiB - 700 * kKiB) + 5 * kMiB);
      EXPECT_EQ(heaps["free_blocks"], 3);
      EXPECT_EQ(heaps["largest_free_block_bytes"], 5 * kMiB);
      EXPECT_EQ(heaps["idle_bytes"], 0);
      EXPECT_NE(oom["finding"].get<std::string>().find(
                    "PyTorch's cache would have held it: 28.0 MiB (29360128 B) free + 6.02 MiB (6315008 B) cached >= "
                    "30.0 MiB (31457280 B)"),
                std::string::npos)
          << oom["finding"];
    }
  }
}

// A snapshot file gone: one warning, and the trace is analyzed with the other. --no-snapshots: the trace alone,
// as it reads with no snapshot beside it.
TEST_P(TorchJoin, AMissingSnapshotIsAWarningAndNoSnapshotsIsTheTraceAlone) {
  TracedRun run = oom_run();
  nlohmann::json alone = report({"summary", "--json", "--no-snapshots", run.trace});
  EXPECT_FALSE(alone["trace"].contains("pytorch_snapshots"));
  std::string copy = make_temp_dir() + "/root.trace";
  fs::copy_file(run.trace, copy);
  ProcessResult without = run_gpumemtrace({"summary", "--json", copy});
  ASSERT_EQ(without.exit_code, 0) << without.err;
  EXPECT_EQ(lines_of(without.err).size(), 2u) << without.err;
  nlohmann::json by_itself = nlohmann::json::parse(without.out);
  for (nlohmann::json* json : {&alone, &by_itself}) {
    (*json)["trace"].erase("path");
    (*json)["trace"].erase("pytorch_snapshots");
  }
  EXPECT_EQ(alone, by_itself);

  size_t oom_events = facts(run.dir + "/root.trace.torch-oom-1.pickle")["history"].size();
  fs::remove(run.dir + "/root.trace.torch-exit.pickle");
  ProcessResult r = run_gpumemtrace({"summary", "--json", run.trace});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "gpumemtrace: warning: " + run.dir +
                       "/root.trace.torch-exit.pickle: no such file: the trace is analyzed without this PyTorch "
                       "snapshot\n");
  nlohmann::json joined = nlohmann::json::parse(r.out)["trace"]["pytorch_snapshots"];
  ASSERT_EQ(joined["joined"].size(), 1u);
  EXPECT_EQ(joined["joined"][0]["file"], "root.trace.torch-oom-1.pickle");
  EXPECT_EQ(joined["events"], oom_events);
}

INSTANTIATE_TEST_SUITE_P(Interpreters, TorchHook, testing::Values(10u, 11u, 12u, 13u, 14u), python_minor_name);
INSTANTIATE_TEST_SUITE_P(Interpreters, TorchJoin, testing::Values(10u, 11u, 12u, 13u, 14u), python_minor_name);

TEST(SnapshotCommand, RefusesAnUntracedProcessAndABadProcessId) {
  ProcessResult self = run_gpumemtrace({"snapshot", std::to_string(getpid())});
  EXPECT_EQ(self.exit_code, 2);
  EXPECT_EQ(self.err, "gpumemtrace snapshot: process " + std::to_string(getpid()) +
                          " is not traced by gpumemtrace (libgpumemtrace.so is not loaded in it): nothing sent\n");
  ProcessResult bad = run_gpumemtrace({"snapshot", "12ab"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("12ab is not a number"), std::string::npos) << bad.err;
  // Above the largest pid Linux hands out (2^22).
  ProcessResult gone = run_gpumemtrace({"snapshot", "99999999"});
  EXPECT_EQ(gone.exit_code, 2);
  EXPECT_EQ(gone.err, "gpumemtrace snapshot: there is no process 99999999\n");
}

}  // namespace
}  // namespace gpumemtrace::test
