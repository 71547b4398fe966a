// The pprof export read back by Go's own pprof (`go tool pprof`, Debian golang-go): the functions and exact
// bytes of the known workload (programs/known_workload.cpp) at its peak, and -diff_base between two
// profiles. Skipped, visibly, when `go` is not installed.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "tests/support/subprocess.h"
#include "tests/support/temp_files.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {

constexpr int64_t kSignedMiB = 1 << 20;  // a diff's values are signed

// The `go` command, or "" when there is none.
std::string go_command() {
  for (const char* candidate : {"/usr/bin/go", "/usr/local/go/bin/go", "/usr/lib/go/bin/go"})
    if (file_exists(candidate)) return candidate;
  return {};
}

class PprofExport : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (go_command().empty()) return;
    run_ = new TracedRun(run_traced("report_prog_known"));
  }
  static void TearDownTestSuite() {
    delete run_;
    run_ = nullptr;
  }
  void SetUp() override {
    go_ = go_command();
    if (go_.empty()) GTEST_SKIP() << "go is not installed (Debian golang-go): the pprof export is not read back";
    ASSERT_EQ(run_->result.exit_code, 0) << run_->result.err;
  }

  std::string export_profile(const std::string& name, std::vector<std::string> extra) {
    std::string path = scratch_ / name;
    std::vector<std::string> args = {"export", "--format", "pprof", "-o", path};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(run_->trace);
    ProcessResult r = run_gpumemtrace(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return path;
  }

  // `go tool pprof -top` in bytes: each function's flat bytes (negative in a diff).
  std::map<std::string, int64_t> top(std::vector<std::string> args) {
    std::vector<std::string> command = {go_, "tool", "pprof", "-top", "-unit=B", "-nodecount=1000"};
    command.insert(command.end(), args.begin(), args.end());
    ProcessResult r = run_process(command, {{"HOME", scratch_.path()}, {"PPROF_TMPDIR", scratch_.path()}});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    output_ = r.out;
    std::map<std::string, int64_t> flat;
    std::istringstream lines(r.out);
    bool rows = false;
    for (std::string line; std::getline(lines, line);) {
      if (line.find("flat%") != std::string::npos) {
        rows = true;
        continue;
      }
      if (!rows) continue;
      std::istringstream fields(line);
      std::string bytes, flat_percent, sum_percent, cum, cum_percent, function;
      fields >> bytes >> flat_percent >> sum_percent >> cum >> cum_percent;
      std::getline(fields >> std::ws, function);
      if (bytes.empty() || bytes.back() != 'B') continue;
      flat[function] = std::stoll(bytes.substr(0, bytes.size() - 1));
    }
    return flat;
  }

  static TracedRun* run_;
  ScratchDir scratch_;
  std::string go_;
  std::string output_;
};
TracedRun* PprofExport::run_ = nullptr;

TEST_F(PprofExport, GoPprofShowsTheFunctionsAndBytesAtThePeak) {
  std::string peak = export_profile("peak.pb.gz", {"--device", "0"});
  std::map<std::string, int64_t> flat = top({peak});
  EXPECT_EQ(flat["alloc_scratch"], 16 * kSignedMiB) << output_;
  EXPECT_EQ(flat["alloc_history"], 10 * kSignedMiB) << output_;
  EXPECT_EQ(flat["alloc_weights"], 8 * kSignedMiB) << output_;
  EXPECT_NE(output_.find("Type: space"), std::string::npos) << output_;
  EXPECT_NE(output_.find("of 35651584B total"), std::string::npos) << output_;  // 34 MiB

  std::map<std::string, int64_t> counts = top({"-sample_index=allocations", peak});
  (void)counts;
  EXPECT_NE(output_.find("Type: allocations"), std::string::npos) << output_;
}

TEST_F(PprofExport, GoPprofDiffsTwoProfiles) {
  std::string peak = export_profile("peak.pb.gz", {"--device", "0"});
  std::string leaked = export_profile("leaked.pb.gz", {"--device", "0", "--what", "leaked"});
  // leaked - peak: the scratch buffer and one weight were freed after the peak.
  std::map<std::string, int64_t> flat = top({"-diff_base", peak, leaked});
  EXPECT_EQ(flat["alloc_scratch"], -16 * kSignedMiB) << output_;
  EXPECT_EQ(flat["alloc_weights"], -4 * kSignedMiB) << output_;
  EXPECT_EQ(flat.count("alloc_history"), 0u) << output_;  // unchanged: no difference to show
}

}  // namespace
}  // namespace gpumemtrace::test
