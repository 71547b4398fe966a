// Traces written by earlier builds of the tracer (tests/data/traces; its README.md says which build wrote
// each and how): today's analyzer reads each as the build that wrote it read it. `gpumemtrace dump` prints
// every record with every field, so its output must be the bytes that build's own `dump` printed, kept
// beside the trace (NAME.dump). The first commit's traces are of a layout that the next commit changed
// (trace/legacy/first_layout.h): they read too, rewritten in today's layout as they are opened.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "tests/support/subprocess.h"

namespace gpumemtrace::test {
namespace {

// Every trace kept, by name: a file that goes missing fails here, and one added must be listed.
const std::vector<std::string> kKept = {
    "67be820-train_loop",
    "abedb46-train_loop", "abedb46-pool_oom", "abedb46-threads", "abedb46-killed",
    "49518fc-train_loop", "49518fc-pool_oom", "49518fc-threads", "49518fc-nvtx_phases",
    "d223328-train_loop", "d223328-pool_oom", "d223328-nvtx_phases",
    "d223328-train_loop.packed", "d223328-pool_oom.packed", "d223328-nvtx_phases.packed",
};

std::string kept(const std::string& name) { return test_data_dir() + "/traces/" + name; }

class OlderTraces : public testing::TestWithParam<std::string> {};

TEST_P(OlderTraces, ReadAsTheBuildThatWroteThemReadThem) {
  const std::string trace = kept(GetParam() + ".trace");
  ASSERT_TRUE(std::filesystem::exists(trace)) << trace;
  ProcessResult dump = run_gpumemtrace({"dump", trace});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_EQ(dump.err, "");
  EXPECT_EQ(dump.out, read_file(kept(GetParam() + ".dump")));

  // The reports read it too.
  ProcessResult summary = run_gpumemtrace({"summary", "--json", trace});
  EXPECT_EQ(summary.exit_code, 0) << summary.err;
}

INSTANTIATE_TEST_SUITE_P(Kept, OlderTraces, testing::ValuesIn(kKept), [](const auto& info) {
  std::string name = info.param;
  std::replace_if(name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return name;
});

TEST(OlderTracesFolder, HoldsNoTraceThatIsNotListed) {
  std::set<std::string> listed(kKept.begin(), kKept.end());
  for (const auto& entry : std::filesystem::directory_iterator(test_data_dir() + "/traces")) {
    if (entry.path().extension() != ".trace") continue;
    EXPECT_TRUE(listed.count(entry.path().stem().string())) << entry.path() << " is not in kKept";
  }
}

}  // namespace
}  // namespace gpumemtrace::test
