// Python frames in the stacks the tracer records: scripts/capture_scenarios.py, run by every installed
// CPython 3.10-3.14 under libgpumemtrace.so on the simulated device, allocates through ctypes from known
// functions; the trace is read as the analyzer reads it (trace::Reader, replay::StackTable,
// symbolize::Symbolizer) and each allocation's Python frames are checked against the lines the script
// marks `# <site:NAME>`. A version that is not installed is skipped, visibly, with where it was looked for.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/replay/stack_table.h"
#include "analyzer/symbolize/symbolizer.h"
#include "common/size_units.h"
#include "tests/support/python_interpreters.h"
#include "tests/support/source_lines.h"
#include "tests/support/traced_run.h"
#include "trace/reader/reader.h"

namespace gpumemtrace::test {
namespace {

using symbolize::Frame;
using symbolize::FrameKind;

const std::string kScript = GMT_PYTHON_SCRIPTS "/capture_scenarios.py";

// The line of `# <site:NAME>` in the script.
int site(const std::string& name) {
  uint32_t line = line_containing(kScript, "# <site:" + name + ">");
  return line ? static_cast<int>(line) : -1;
}

struct TracedAllocation {
  uint64_t size = 0;
  uint64_t tid = 0;
  uint32_t trie_id = 0;        // the stack id in the trace
  replay::StackId stack = 0;   // the analyzer's
  size_t depth = 0;            // frames in the trace (the marker of a cut stack included)
  std::vector<Frame> frames;   // symbolized (inlined calls are frames of their own), innermost first
};

// A trace read the way the analyzer reads it.
struct SymbolizedTrace {
  trace::Status status = trace::Status::Reading;
  std::string error;
  uint64_t pid = 0;
  std::vector<TracedAllocation> allocations;
  size_t python_codes = 0;  // PythonCode records
  size_t tagged_nodes = 0;  // stack nodes that are Python frames or markers

  // The allocations of this size.
  std::vector<const TracedAllocation*> of_size(uint64_t size) const {
    std::vector<const TracedAllocation*> out;
    for (const TracedAllocation& a : allocations)
      if (a.size == size) out.push_back(&a);
    return out;
  }
};

SymbolizedTrace read_symbolized(const std::string& path) {
  SymbolizedTrace out;
  trace::Reader reader(path);
  replay::StackTable stacks;
  while (const trace::Record* record = reader.next()) {
    if (const auto* alloc = std::get_if<trace::Alloc>(record))
      out.allocations.push_back(
          {alloc->size, reader.threads()[alloc->thread].tid, alloc->stack, stacks.intern(reader, alloc->stack), 0, {}});
    else if (const auto* node = std::get_if<trace::StackNode>(record))
      out.tagged_nodes += format::is_tagged_frame(node->ip);
  }
  out.status = reader.status();
  out.error = reader.error();
  out.python_codes = reader.python_codes().size();
  if (reader.process()) out.pid = reader.process()->pid;
  symbolize::Symbolizer symbolizer(stacks, [](std::string_view) {});
  for (TracedAllocation& a : out.allocations) {
    a.depth = stacks.frames(a.stack).size();
    a.frames = symbolizer.stack(stacks.frames(a.stack));
  }
  return out;
}

std::string describe(const std::vector<Frame>& frames) {
  std::ostringstream out;
  for (size_t i = 0; i < frames.size(); ++i) {
    const Frame& f = frames[i];
    out << "  #" << i << " " << symbolize::frame_kind_name(f.kind) << " " << (f.function.empty() ? "?" : f.function);
    if (!f.file.empty()) out << " " << f.file << ":" << f.line;
    if (!f.module.empty()) out << " [" << std::filesystem::path(f.module).filename().string() << "]";
    out << "\n";
  }
  return out.str();
}

std::vector<Frame> python_frames(const std::vector<Frame>& frames) {
  std::vector<Frame> out;
  std::copy_if(frames.begin(), frames.end(), std::back_inserter(out),
               [](const Frame& f) { return f.kind == FrameKind::Python; });
  return out;
}

bool is_eval_frame(const Frame& f) { return f.kind == FrameKind::Native && f.function == "_PyEval_EvalFrameDefault"; }

// The index of the first frame at or after `from` that matches, or frames.size().
template <typename Match>
size_t find_frame(const std::vector<Frame>& frames, Match match, size_t from = 0) {
  for (size_t i = from; i < frames.size(); ++i)
    if (match(frames[i])) return i;
  return frames.size();
}

class PythonCapture : public InstalledPythonTest {
 protected:
  // Runs a scenario under the tracer (-S: no site packages; -B: no .pyc beside the script).
  TracedRun run(const std::string& scenario, EnvChanges env = {}) {
    TracedRun run = run_traced(interpreter_->executable,
                               {"-S", "-B", kScript, sim_dir() + "/libcudart.so.13", scenario}, std::move(env));
    EXPECT_EQ(run.result.term_signal, 0) << run.result.err;
    EXPECT_EQ(run.result.exit_code, 0) << run.result.out << run.result.err;
    return run;
  }
  SymbolizedTrace traced(const std::string& scenario, EnvChanges env = {}) {
    TracedRun r = run(scenario, std::move(env));
    SymbolizedTrace trace = read_symbolized(r.trace);
    EXPECT_EQ(trace.status, trace::Status::Complete) << trace.error;
    return trace;
  }

  // Python 3.10 code objects have no qualified name: the plain name is recorded there.
  std::string q(const std::string& qualname) const {
    return GetParam() >= 11 ? qualname : qualname.substr(qualname.rfind('.') + 1);
  }
  void expect_frame(const Frame& frame, const std::string& qualname, int line) const {
    EXPECT_EQ(frame.kind, FrameKind::Python);
    EXPECT_EQ(frame.function, q(qualname));
    EXPECT_EQ(frame.line, static_cast<uint32_t>(line)) << frame.function;
    EXPECT_EQ(std::filesystem::weakly_canonical(frame.file), std::filesystem::weakly_canonical(kScript));
  }
  // The only allocation of this size; its frames.
  const TracedAllocation& only(const SymbolizedTrace& trace, uint64_t size) {
    std::vector<const TracedAllocation*> found = trace.of_size(size);
    if (found.size() != 1) {
      ADD_FAILURE() << found.size() << " allocations of " << size << " bytes";
      static const TracedAllocation none;
      return found.empty() ? none : *found[0];
    }
    return *found[0];
  }

};

TEST_P(PythonCapture, InnermostPythonFrameIsTheAllocatingLine) {
  SymbolizedTrace trace = traced("known_function");
  const TracedAllocation& weights = only(trace, 3 * kMiB);
  const std::vector<Frame>& frames = weights.frames;
  std::vector<Frame> python = python_frames(frames);
  ASSERT_EQ(python.size(), 3u) << describe(frames);
  expect_frame(python[0], "allocate_weights", site("weights"));
  expect_frame(python[1], "scenario_known_function", site("weights_call"));
  expect_frame(python[2], "<module>", python[2].line);
  // The runtime and ctypes frames inside, the interpreter's start outside; every evaluation frame was
  // replaced by the Python frames it ran, and nothing was cut.
  EXPECT_EQ(frames.front().kind, FrameKind::Native) << describe(frames);
  EXPECT_EQ(frames.back().kind, FrameKind::Native) << describe(frames);
  EXPECT_EQ(find_frame(frames, is_eval_frame), frames.size()) << describe(frames);
  EXPECT_EQ(find_frame(frames, [](const Frame& f) { return f.kind == FrameKind::Truncated; }), frames.size());
  EXPECT_GE(trace.python_codes, 3u);
}

TEST_P(PythonCapture, CodeRebornAtTheSameAddressHasItsOwnLine) {
  SymbolizedTrace trace = traced("reborn_code");
  for (int i = 0; i < 16; ++i) {
    const TracedAllocation& a = only(trace, static_cast<uint64_t>(i + 1) * 1024);
    std::vector<Frame> python = python_frames(a.frames);
    ASSERT_GE(python.size(), 2u) << describe(a.frames);
    expect_frame(python[0], "allocated", site("allocated"));
    EXPECT_EQ(python[1].function, "reborn");
    EXPECT_EQ(python[1].file, "<reborn>");
    EXPECT_EQ(python[1].line, static_cast<uint32_t>(i + 2)) << "function " << i;
  }
}

TEST_P(PythonCapture, TemporaryAndAccumulatingListHaveTheirOwnStacks) {
  SymbolizedTrace trace = traced("temp_and_history");
  std::vector<const TracedAllocation*> scratch = trace.of_size(1 * kMiB), history = trace.of_size(2 * kMiB);
  ASSERT_EQ(scratch.size(), 5u);
  ASSERT_EQ(history.size(), 5u);
  // Every step repeats the same two stacks: the same trie nodes, nothing new written.
  for (const TracedAllocation* a : scratch) EXPECT_EQ(a->trie_id, scratch[0]->trie_id);
  for (const TracedAllocation* a : history) EXPECT_EQ(a->trie_id, history[0]->trie_id);
  EXPECT_NE(scratch[0]->stack, history[0]->stack);
  std::vector<Frame> temp = python_frames(scratch[0]->frames), kept = python_frames(history[0]->frames);
  ASSERT_GE(temp.size(), 2u) << describe(scratch[0]->frames);
  ASSERT_GE(kept.size(), 2u) << describe(history[0]->frames);
  expect_frame(temp[0], "train_step", site("scratch"));
  expect_frame(kept[0], "train_step", site("history"));
  EXPECT_EQ(temp[1].function, kept[1].function);
  EXPECT_EQ(temp[1].line, kept[1].line);
}

TEST_P(PythonCapture, MethodsHaveTheirQualifiedNames) {
  SymbolizedTrace trace = traced("method");
  std::vector<Frame> method = python_frames(only(trace, 4 * kMiB).frames);
  std::vector<Frame> classmethod = python_frames(only(trace, 10 * kMiB).frames);
  ASSERT_GE(method.size(), 2u);
  ASSERT_GE(classmethod.size(), 2u);
  expect_frame(method[0], "Model.forward", site("method"));
  expect_frame(method[1], "scenario_method", site("method_call"));
  expect_frame(classmethod[0], "Model.build", site("classmethod"));
  expect_frame(classmethod[1], "scenario_method", site("classmethod_call"));
}

TEST_P(PythonCapture, GeneratorFramesAreInsideTheirConsumer) {
  SymbolizedTrace trace = traced("generator");
  std::vector<const TracedAllocation*> buffers = trace.of_size(5 * kMiB);
  ASSERT_EQ(buffers.size(), 2u);
  // The first step may reach the generator through another path of the interpreter than the next (3.12+
  // specializes the loop): the native frames may differ, the Python frames do not.
  for (const TracedAllocation* buffer : buffers) {
    const std::vector<Frame>& frames = buffer->frames;
    std::vector<Frame> python = python_frames(frames);
    ASSERT_GE(python.size(), 2u) << describe(frames);
    expect_frame(python[0], "buffers", site("generator"));
    expect_frame(python[1], "scenario_generator", site("generator_call"));
    EXPECT_EQ(find_frame(frames, is_eval_frame), frames.size()) << describe(frames);
  }
}

TEST_P(PythonCapture, AsyncFramesFollowTheAwaitChainAndTheEventLoop) {
  SymbolizedTrace trace = traced("async");
  const std::vector<Frame>& frames = only(trace, 6 * kMiB).frames;
  std::vector<Frame> python = python_frames(frames);
  ASSERT_GE(python.size(), 4u) << describe(frames);
  expect_frame(python[0], "load_layer", site("async"));
  expect_frame(python[1], "load_model", site("async_call"));
  // The task steps the coroutine from the event loop, which asyncio.run runs for scenario_async.
  auto in_asyncio = [](const Frame& f) { return f.file.find("asyncio") != std::string::npos; };
  EXPECT_NE(std::find_if(python.begin() + 2, python.end(), in_asyncio), python.end()) << describe(frames);
  EXPECT_NE(std::find_if(python.begin(), python.end(), [&](const Frame& f) { return f.function == "scenario_async"; }),
            python.end());
  EXPECT_EQ(find_frame(frames, is_eval_frame), frames.size()) << describe(frames);
}

TEST_P(PythonCapture, ThreadHasItsOwnPythonFrames) {
  SymbolizedTrace trace = traced("thread");
  const TracedAllocation& allocation = only(trace, 11 * kMiB);
  EXPECT_NE(allocation.tid, trace.pid);  // not the main thread
  std::vector<Frame> python = python_frames(allocation.frames);
  ASSERT_GE(python.size(), 3u) << describe(allocation.frames);
  expect_frame(python[0], "thread_body", site("thread"));
  EXPECT_EQ(python[1].function, q("Thread.run"));
  EXPECT_EQ(python.back().function, q("Thread._bootstrap"));
  for (const Frame& f : python) EXPECT_NE(f.function, "<module>") << describe(allocation.frames);
}

TEST_P(PythonCapture, RecursionDeeperThanTheDepthIsCutAndMarked) {
  constexpr size_t kDepth = 32;
  SymbolizedTrace trace = traced("deep_recursion", {{"GPUMEMTRACE_STACK_DEPTH", std::to_string(kDepth)}});
  const TracedAllocation& allocation = only(trace, 7 * kMiB);
  const std::vector<Frame>& frames = allocation.frames;
  EXPECT_EQ(allocation.depth, kDepth + 1) << describe(frames);
  EXPECT_EQ(frames.back().kind, FrameKind::Truncated) << describe(frames);
  std::vector<Frame> python = python_frames(frames);
  ASSERT_GE(python.size(), 2u) << describe(frames);
  expect_frame(python[0], "recurse", site("recursion"));
  for (size_t i = 1; i < python.size(); ++i) expect_frame(python[i], "recurse", site("recurse_call"));
}

TEST_P(PythonCapture, CallbackInterleavesPythonAndNativeInOrder) {
  SymbolizedTrace trace = traced("callback");
  const std::vector<Frame>& frames = only(trace, 8 * kMiB).frames;
  // Innermost first: the runtime (native), compare (Python), libc's qsort (native), sort_with_callback
  // (Python).
  size_t callback = find_frame(frames, [](const Frame& f) { return f.kind == FrameKind::Python; });
  size_t qsort = find_frame(
      frames, [](const Frame& f) { return std::filesystem::path(f.module).filename().string().starts_with("libc.so"); },
      callback);
  size_t caller = find_frame(frames, [](const Frame& f) { return f.kind == FrameKind::Python; }, qsort);
  ASSERT_LT(caller, frames.size()) << describe(frames);
  EXPECT_GT(callback, 0u) << describe(frames);
  expect_frame(frames[callback], "compare", site("callback"));
  expect_frame(frames[caller], "sort_with_callback", site("qsort_call"));
  EXPECT_EQ(find_frame(frames, is_eval_frame), frames.size()) << describe(frames);
}

TEST_P(PythonCapture, ForkedChildHasPythonStacksInItsOwnTrace) {
  TracedRun r = run("fork_child");
  std::vector<std::string> children;
  for (const auto& entry : std::filesystem::directory_iterator(r.dir))
    if (entry.path().filename().string().starts_with("child.")) children.push_back(entry.path());
  ASSERT_EQ(children.size(), 1u);
  SymbolizedTrace trace = read_symbolized(children[0]);
  EXPECT_EQ(trace.status, trace::Status::Complete) << trace.error;
  const std::vector<Frame>& frames = only(trace, 9 * kMiB).frames;
  std::vector<Frame> python = python_frames(frames);
  ASSERT_GE(python.size(), 2u) << describe(frames);
  expect_frame(python[0], "child_allocates", site("child"));
  EXPECT_EQ(python[1].function, q("BaseProcess.run"));
  EXPECT_TRUE(read_symbolized(r.trace).of_size(9 * kMiB).empty());  // the parent did not allocate it
}

TEST_P(PythonCapture, PythonStacksOffKeepsNativeStacks) {
  SymbolizedTrace trace = traced("known_function", {{"GPUMEMTRACE_PYTHON_STACKS", "0"}});
  const std::vector<Frame>& frames = only(trace, 3 * kMiB).frames;
  EXPECT_TRUE(python_frames(frames).empty()) << describe(frames);
  EXPECT_LT(find_frame(frames, is_eval_frame), frames.size()) << describe(frames);
  EXPECT_EQ(trace.python_codes, 0u);
  EXPECT_EQ(trace.tagged_nodes, 0u);
}

INSTANTIATE_TEST_SUITE_P(Interpreters, PythonCapture, testing::Values(10u, 11u, 12u, 13u, 14u), python_minor_name);

// A program without Python is traced as before: no Python code, no tagged frame.
TEST(PythonCaptureOff, NativeProgramHasNoPythonFrames) {
  TracedRun r = run_traced("capture_prog_runtime_shared");
  ASSERT_EQ(r.result.exit_code, 0) << r.result.err;
  SymbolizedTrace trace = read_symbolized(r.trace);
  EXPECT_EQ(trace.status, trace::Status::Complete) << trace.error;
  ASSERT_FALSE(trace.allocations.empty());
  EXPECT_EQ(trace.python_codes, 0u);
  EXPECT_EQ(trace.tagged_nodes, 0u);
  for (const TracedAllocation& a : trace.allocations)
    for (const Frame& f : a.frames) EXPECT_EQ(f.kind, FrameKind::Native);
}

// A CPython whose frames the walker cannot read (3.9): one line says so, and stacks stay native.
TEST(PythonCaptureOff, UnsupportedPythonSaysSoOnceAndKeepsNativeStacks) {
  auto interpreter = find_python_interpreter(9);
  if (!interpreter) GTEST_SKIP() << "CPython 3.9 is not installed (looked for " << python_search_places(9) << ")";
  TracedRun r = run_traced(interpreter->executable,
                           {"-S", "-B", kScript, sim_dir() + "/libcudart.so.13", "temp_and_history"});
  ASSERT_EQ(r.result.exit_code, 0) << r.result.out << r.result.err;
  std::istringstream err(r.result.err);
  int said = 0;
  for (std::string line; std::getline(err, line);) said += line.find("Python frames are not recorded") != std::string::npos;
  EXPECT_EQ(said, 1) << r.result.err;
  SymbolizedTrace trace = read_symbolized(r.trace);
  EXPECT_EQ(trace.allocations.size(), 10u);
  EXPECT_EQ(trace.python_codes, 0u);
  EXPECT_EQ(trace.tagged_nodes, 0u);
}

}  // namespace
}  // namespace gpumemtrace::test
