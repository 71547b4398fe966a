// Crafted traces of about 100 KB (programs/hostile_traces.cpp: a 7,000-deep chain of calls, phases nested
// 20,000 deep, a loop whose pop is skipped, phases of two domains popped crosswise, 40,000 pops with
// nothing open, 12,000 memory pools) through every command: each ends normally, in less than 200 MB of
// memory, with output in proportion to the trace, and says what is wrong with the phases. Their time is
// measured by bench/hostile_inputs.sh, not here.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/subprocess.h"
#include "tests/support/temp_files.h"

namespace gpumemtrace::test {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr uint64_t kMaxResidentKiB = 600 << 10;  // the sanitizers' shadow memory comes on top
#else
constexpr uint64_t kMaxResidentKiB = 200 << 10;
#endif
constexpr uint64_t kMaxOutputBytes = 50 << 20;

const char* const kShapes[] = {"deep-stack", "deep-phases", "skipped-pops", "crossed-domains", "unmatched-pops",
                               "many-pools"};

class HostileTraces : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir;
    ProcessResult made = run_process({bin_dir() + "/reliability_prog_hostile_traces", dir_->path()});
    ASSERT_EQ(made.exit_code, 0) << made.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string trace(const std::string& shape) { return (*dir_) / (shape + ".trace"); }

  // Runs the analyzer; the output file, if any, is `output`.
  static ProcessResult checked_run(const std::vector<std::string>& args, const std::string& output = "") {
    ProcessResult r = run_gpumemtrace(args);
    std::string what = testing::PrintToString(args);
    EXPECT_EQ(r.term_signal, 0) << what;
    EXPECT_EQ(r.exit_code, 0) << what << "\n" << r.err.substr(0, 2000);
    EXPECT_LT(r.max_rss_kib, kMaxResidentKiB) << what;
    uint64_t written = r.out.size();
    struct stat st {};
    if (!output.empty() && stat(output.c_str(), &st) == 0) written += static_cast<uint64_t>(st.st_size);
    EXPECT_LT(written, kMaxOutputBytes) << what;
    return r;
  }
  static ScratchDir* dir_;
};
ScratchDir* HostileTraces::dir_ = nullptr;

TEST_F(HostileTraces, EveryCommandEndsInBoundedMemoryAndOutput) {
  const std::vector<std::vector<std::string>> reports = {
      {"summary"}, {"summary", "--json"}, {"peak"}, {"leaks"}, {"growth"}, {"phases"}, {"phases", "--json"},
      {"oom"}, {"fragmentation"}, {"timeline"}};
  for (const char* shape : kShapes) {
    SCOPED_TRACE(shape);
    for (std::vector<std::string> args : reports) {
      args.push_back(trace(shape));
      checked_run(args);
    }
    std::string page = (*dir_) / (std::string(shape) + ".html");
    checked_run({"html", "-o", page, trace(shape)}, page);
    for (const char* format : {"folded", "pprof", "perfetto", "csv", "memory-viz"}) {
      std::string out = (*dir_) / (std::string(shape) + "." + format);
      checked_run({"export", "--format", format, "-o", out, trace(shape)}, out);
    }
  }
}

TEST_F(HostileTraces, ADeepStackIsCutAfter256FramesWithAMarker) {
  std::string out = (*dir_) / "deep.folded";
  checked_run({"export", "--format", "folded", "--all-frames", "-o", out, trace("deep-stack")}, out);
  std::string folded = read_file(out);
  size_t lines = 0, longest = 0;
  for (size_t start = 0; start < folded.size();) {
    size_t end = folded.find('\n', start);
    std::string line = folded.substr(start, end - start);
    size_t frames = 1;
    for (char c : line) frames += c == ';';
    longest = std::max(longest, frames);
    ++lines;
    start = end + 1;
  }
  EXPECT_EQ(lines, 7000u);
  // "device 0", the 256 innermost frames and the marker of the cut.
  EXPECT_EQ(longest, 1u + 256u + 1u);
  EXPECT_NE(folded.find("(truncated)"), std::string::npos);
}

TEST_F(HostileTraces, PhasesNestedTooDeepAreCountedInTheDeepestShown) {
  ProcessResult r = checked_run({"phases", "--json", trace("deep-phases")});
  nlohmann::json json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["phases"].size(), 64u);  // layer, layer ×2, ... layer ×64
  EXPECT_EQ(json["phases"][63]["phase"], "layer ×64");
  EXPECT_EQ(json["phases"][63]["instances"][0]["allocations"], 20000 - 63);
  EXPECT_EQ(json["phase_balance"]["deeper_than_max"], 20000 - 64);
  ASSERT_EQ(json["phase_balance"]["unpopped"].size(), 1u);
  EXPECT_EQ(json["phase_balance"]["unpopped"][0]["name"], "layer");
  EXPECT_EQ(json["phase_balance"]["unpopped"][0]["open_pushes"], 20000);
}

TEST_F(HostileTraces, ASkippedPopIsReportedAsWhatItIs) {
  ProcessResult r = checked_run({"phases", trace("skipped-pops")});
  EXPECT_NE(r.out.find("  unbalanced: train_step pushed 6000 times on thread 1 and never popped (a pop is missing, "
                       "e.g. skipped by `continue` or an exception)\n"),
            std::string::npos)
      << r.out.substr(0, 3000);
  EXPECT_NE(r.out.find("  11873 pushes nested deeper than 64 levels are counted in the phase at level 64\n"),
            std::string::npos);
}

TEST_F(HostileTraces, PopsOfAnotherDomainAndPopsWithNothingOpenAreCounted) {
  nlohmann::json crossed = nlohmann::json::parse(checked_run({"phases", "--json", trace("crossed-domains")}).out);
  EXPECT_EQ(crossed["phase_balance"]["unmatched_ends"], 0);
  EXPECT_EQ(crossed["phase_balance"]["deeper_than_max"], 20000 - 64);
  nlohmann::json unmatched = nlohmann::json::parse(checked_run({"phases", "--json", trace("unmatched-pops")}).out);
  EXPECT_EQ(unmatched["phase_balance"]["unmatched_ends"], 40000);
  EXPECT_EQ(unmatched["phase_balance"]["unpopped"][0]["open_pushes"], 8000);
}

}  // namespace
}  // namespace gpumemtrace::test
