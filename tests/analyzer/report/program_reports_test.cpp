// The reports' figures for known programs traced on the simulated device (docs/reports.md): the
// peak and the allocation set at the peak, leaks and their stacks, the growing stack, each OOM verdict,
// symbolized functions and lines, and the trace of a killed program.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>

#include "analyzer/report/growth.h"
#include "analyzer/report/oom_diagnosis.h"
#include "analyzer/symbolize/symbolizer.h"
#include "common/size_units.h"
#include "tests/analyzer/report_helpers.h"
#include "tests/support/source_lines.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {


// The line of the source file that holds `marker`.
uint32_t line_of(const std::string& marker) { return line_containing(KNOWN_WORKLOAD_SOURCE, marker); }

struct TracedAnalysis {
  TracedRun run;
  analysis::Analysis analysis;
  const replay::Replay& replay() const { return *analysis.replay; }
};

TracedAnalysis trace_and_analyze(const std::string& program, const std::vector<std::string>& args,
                                 EnvChanges env = {}) {
  TracedAnalysis out;
  out.run = run_traced(program, args, std::move(env));
  EXPECT_EQ(out.run.result.exit_code, 0) << out.run.result.err;
  out.analysis = analysis::analyze(out.run.trace);
  return out;
}

class Symbols {
 public:
  explicit Symbols(const replay::Replay& replay)
      : replay_(replay), symbolizer_(replay.stacks().modules(), [this](std::string_view w) { warnings_.emplace_back(w); }) {}
  std::vector<symbolize::Frame> stack(replay::StackId id) { return symbolizer_.stack(replay_.stacks().frames(id)); }
  // The first frame of the stack in `function`, or nullptr.
  std::optional<symbolize::Frame> frame_in(replay::StackId id, const std::string& function) {
    for (const symbolize::Frame& frame : stack(id))
      if (frame.function == function) return frame;
    return std::nullopt;
  }
  // The site whose stack passes through `function`.
  const replay::Site* site_through(const std::string& function, replay::Category category = replay::Category::Device) {
    for (const replay::Site& site : replay_.sites())
      if (site.category == category && frame_in(site.stack, function)) return &site;
    return nullptr;
  }
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  const replay::Replay& replay_;
  std::vector<std::string> warnings_;
  symbolize::Symbolizer symbolizer_;
};

std::string file_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

class KnownWorkload : public testing::Test {
 protected:
  static void SetUpTestSuite() { traced_ = new TracedAnalysis(trace_and_analyze("report_prog_known", {})); }
  static void TearDownTestSuite() { delete traced_; }
  const replay::Replay& replay() { return traced_->replay(); }
  static TracedAnalysis* traced_;
};
TracedAnalysis* KnownWorkload::traced_ = nullptr;

TEST_F(KnownWorkload, PeakBytesAndTheAllocationsLiveAtThePeak) {
  ASSERT_TRUE(traced_->analysis.trace.complete);
  const replay::Account& device = *replay().accounts().find_device(0);
  EXPECT_EQ(device.peak_bytes, 34 * kMiB);
  EXPECT_EQ(device.peak_count, 13u);
  Symbols symbols(replay());
  const replay::Site* weights = symbols.site_through("alloc_weights");
  const replay::Site* scratch = symbols.site_through("alloc_scratch");
  const replay::Site* history = symbols.site_through("alloc_history");
  ASSERT_TRUE(weights && scratch && history);
  auto at_peak = [&](const replay::Site* site) { return replay().at_peak(site_id(replay(), site)); };
  EXPECT_EQ(at_peak(weights).bytes, 8 * kMiB);
  EXPECT_EQ(at_peak(weights).count, 2u);
  EXPECT_EQ(at_peak(scratch).bytes, 16 * kMiB);
  EXPECT_EQ(at_peak(scratch).count, 1u);
  EXPECT_EQ(at_peak(history).bytes, 10 * kMiB);
  EXPECT_EQ(at_peak(history).count, 10u);
  EXPECT_EQ(device.allocations, 22u);
  EXPECT_EQ(device.frees, 11u);
}

TEST_F(KnownWorkload, LeaksAndTheirStacks) {
  Symbols symbols(replay());
  const replay::Site* weights = symbols.site_through("alloc_weights");
  const replay::Site* history = symbols.site_through("alloc_history");
  ASSERT_TRUE(weights && history);
  EXPECT_EQ(weights->bytes, 4 * kMiB);
  EXPECT_EQ(weights->count, 1u);
  EXPECT_EQ(history->bytes, 10 * kMiB);
  EXPECT_EQ(history->count, 10u);
  EXPECT_EQ(symbols.site_through("alloc_scratch")->bytes, 0u);
  EXPECT_EQ(replay().accounts().find_device(0)->live_bytes, 14 * kMiB);
  EXPECT_EQ(replay().accounts()[replay::Accounts::kManaged].live_bytes, 64u * 1024);
  EXPECT_EQ(replay().accounts()[replay::Accounts::kHostPinned].live_bytes, 0u);
  EXPECT_EQ(replay().accounts()[replay::Accounts::kHostPinned].peak_bytes, 128u * 1024);
  EXPECT_EQ(replay().inconsistencies().total(), 0u);
}

TEST_F(KnownWorkload, OnlyTheHistoryStackGrows) {
  Symbols symbols(replay());
  std::vector<report::Growth> growth = report::find_growth(replay());
  ASSERT_EQ(growth.size(), 1u);
  EXPECT_EQ(&replay().sites()[growth[0].site], symbols.site_through("alloc_history"));
  EXPECT_EQ(growth[0].bytes, 10 * kMiB);
  EXPECT_EQ(growth[0].floors.size(), 10u);
  EXPECT_GE(growth[0].rises, 5u);
}

TEST_F(KnownWorkload, StacksAreSymbolizedWithFunctionsFilesAndLines) {
  Symbols symbols(replay());
  const replay::Site* history = symbols.site_through("alloc_history");
  ASSERT_NE(history, nullptr);
  std::optional<symbolize::Frame> site = symbols.frame_in(history->stack, "alloc_history");
  std::optional<symbolize::Frame> caller = symbols.frame_in(history->stack, "main");
  ASSERT_TRUE(site && caller);
  EXPECT_EQ(file_name(site->file), "known_workload.cpp");
  EXPECT_EQ(site->line, line_of("// site: history"));
  EXPECT_EQ(file_name(site->module), "report_prog_known");
  EXPECT_EQ(caller->line, line_of("// site: main-history"));
  const replay::Site* weights = symbols.site_through("alloc_weights");
  EXPECT_EQ(symbols.frame_in(weights->stack, "alloc_weights")->line, line_of("// site: weights"));
  EXPECT_EQ(symbols.frame_in(weights->stack, "main")->line, line_of("// site: main-weights"));
  for (const symbolize::Frame& frame : symbols.stack(history->stack))
    EXPECT_EQ(frame.module.find("libgpumemtrace"), std::string::npos) << "a frame of the tracer itself";
  EXPECT_TRUE(symbols.warnings().empty()) << symbols.warnings().front();
}

const replay::Failure& only_oom(const TracedAnalysis& traced) {
  const std::vector<replay::Failure>& failures = traced.replay().failures();
  EXPECT_EQ(failures.size(), 1u);
  EXPECT_TRUE(!failures.empty() && failures[0].out_of_memory());
  return failures.at(0);
}

void expect_failure(const replay::Failure& f, uint64_t requested, uint64_t free, uint64_t live) {
  EXPECT_EQ(f.requested_bytes, requested);
  EXPECT_EQ(f.device_free, free);
  EXPECT_EQ(f.device_total, 1024 * kMiB);
  EXPECT_EQ(f.live_bytes, live);
}

report::OomDiagnosis diagnosis(const TracedAnalysis& traced) {
  return report::diagnose(traced.replay(), only_oom(traced), report::find_growth(traced.replay()));
}

EnvChanges one_gib(EnvChanges more = {}) {
  more.emplace("GPUMEMTRACE_SIM_MEMORY", "1GiB");
  return more;
}

TEST(OomVerdicts, TheRequestAloneIsTooLarge) {
  TracedAnalysis traced = trace_and_analyze("report_prog_oom", {"too-large"}, one_gib());
  const replay::Failure& f = only_oom(traced);
  expect_failure(f, 2048 * kMiB, 924 * kMiB, 100 * kMiB);
  EXPECT_EQ(f.api, format::Api::cudaMalloc);
  EXPECT_EQ(diagnosis(traced).verdict, report::Verdict::TooLarge);
}

TEST(OomVerdicts, OtherProcessesHoldTheMemory) {
  TracedAnalysis traced =
      trace_and_analyze("report_prog_oom", {"others"}, one_gib({{"GPUMEMTRACE_SIM_OTHERS_MEMORY", "768MiB"}}));
  expect_failure(only_oom(traced), 256 * kMiB, 192 * kMiB, 64 * kMiB);
  report::OomDiagnosis d = diagnosis(traced);
  EXPECT_EQ(d.others_bytes, 768 * kMiB);
  EXPECT_EQ(d.verdict, report::Verdict::OtherProcesses);
}

TEST(OomVerdicts, APoolHoldsFreedMemoryWhenABigRequestFails) {
  TracedAnalysis traced = trace_and_analyze("report_prog_oom", {"pool"}, one_gib());
  const replay::Failure& f = only_oom(traced);
  expect_failure(f, 768 * kMiB, 512 * kMiB, 0);
  ASSERT_EQ(f.pools.size(), 1u) << "the tracer writes a PoolUsage record for the device's default pool";
  EXPECT_EQ(f.pools[0].reserved_bytes, 512 * kMiB);
  EXPECT_EQ(f.pools[0].used_bytes, 0u);
  report::OomDiagnosis d = diagnosis(traced);
  EXPECT_EQ(d.pool_unused_bytes, 512 * kMiB);
  EXPECT_EQ(d.others_bytes, 0u);
  EXPECT_EQ(d.verdict, report::Verdict::PoolCache);
}

TEST(OomVerdicts, AGrowingStackHoldsTheMemory) {
  TracedAnalysis traced = trace_and_analyze("report_prog_oom", {"growth"}, one_gib());
  expect_failure(only_oom(traced), 32 * kMiB, 16 * kMiB, 1008 * kMiB);
  report::OomDiagnosis d = diagnosis(traced);
  EXPECT_EQ(d.verdict, report::Verdict::Growth);
  ASSERT_TRUE(d.growth);
  EXPECT_EQ(d.growth_live_bytes, 992 * kMiB);
  Symbols symbols(traced.replay());
  EXPECT_EQ(&traced.replay().sites()[d.growth->site], symbols.site_through("keep_step"));
}

TEST(OomVerdicts, OtherwiseTheLiveSetIsTooBig) {
  TracedAnalysis traced = trace_and_analyze("report_prog_oom", {"live-set"}, one_gib());
  const replay::Failure& f = only_oom(traced);
  expect_failure(f, 200 * kMiB, 124 * kMiB, 900 * kMiB);
  ASSERT_EQ(f.live_set.size(), 1u);
  EXPECT_EQ(f.live_set[0].bytes, 900 * kMiB);
  EXPECT_EQ(diagnosis(traced).verdict, report::Verdict::LiveSet);
}

TEST(KilledProgram, ItsTruncatedTraceIsAnalyzedAndFlagged) {
  TracedRun run = run_traced("capture_prog_killed", {"100"});
  ASSERT_EQ(run.result.term_signal, SIGKILL);
  analysis::Analysis analysis = analysis::analyze(run.trace);
  EXPECT_FALSE(analysis.trace.complete);
  EXPECT_FALSE(analysis.trace.corrupt);
  const replay::Account& device = *analysis.replay->accounts().find_device(0);
  EXPECT_EQ(device.live_count, 100u);
  EXPECT_EQ(device.live_bytes, 100u * 4096 + 99 * 100 / 2);
  EXPECT_EQ(device.peak_bytes, device.live_bytes);
}

}  // namespace
}  // namespace gpumemtrace::test
