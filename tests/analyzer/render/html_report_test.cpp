// gpumemtrace html: the page of the known workload (programs/known_workload.cpp) opened in Debian's headless
// Chromium by playwright-core (analyzer/html/tools/open_report.cjs): no console errors and nothing fetched,
// the timeline and the flame graph drawn (the screenshot is kept in the build tree), and a click on the
// timeline shows the live set of that moment, checked against the analyzer's own figures (`summary
// --json`, `timeline --json`). Skipped, saying why, without chromium, node or the npm packages.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/size_units.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_files.h"
#include "tests/support/trace_builder.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {


nlohmann::json json_of(const std::vector<std::string>& args) {
  ProcessResult r = run_gpumemtrace(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

// The report's JSON, as embedded in the page.
nlohmann::json embedded_json(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"gpumemtrace-data\">";
  size_t start = page.find(open);
  if (start == std::string::npos) return nullptr;
  start += open.size();
  return nlohmann::json::parse(page.substr(start, page.find("</script>", start) - start));
}

// Why the page cannot be opened in a browser here (the test is skipped, saying so); "" when it can.
std::string browser_missing() {
  if (!file_exists(CHROMIUM_PATH)) return "no " CHROMIUM_PATH " (Debian's chromium; scripts/setup.sh installs it)";
  if (!file_exists(NODE_PATH_PROGRAM)) return "no node (scripts/setup.sh installs it)";
  if (!file_exists(std::string(NODE_MODULES) + "/playwright-core"))
    return "no playwright-core in " NODE_MODULES " (built with -DGPUMEMTRACE_HTML=OFF?)";
  return "";
}

// The page of `trace`, written to `page` and opened in Chromium: what open_report.cjs saw, with no console error.
nlohmann::json seen_in_browser(const std::string& trace, const std::string& page) {
  ProcessResult html = run_gpumemtrace({"html", "-o", page, trace});
  EXPECT_EQ(html.exit_code, 0) << html.err;
  ProcessResult browser = run_process({NODE_PATH_PROGRAM, OPEN_REPORT_TOOL, page}, {{"NODE_PATH", NODE_MODULES}});
  EXPECT_EQ(browser.exit_code, 0) << browser.err;
  if (html.exit_code != 0 || browser.exit_code != 0) return nlohmann::json::object();
  nlohmann::json seen = nlohmann::json::parse(browser.out);
  EXPECT_EQ(seen["console_errors"], nlohmann::json::array()) << seen["console_errors"].dump();
  return seen;
}

class HtmlReport : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    run_ = new TracedRun(run_traced("report_prog_known"));
    page_ = run_->dir + "/report.html";
    html_ = new ProcessResult(run_gpumemtrace({"html", run_->trace, "-o", page_}));
  }
  static void TearDownTestSuite() {
    delete run_;
    delete html_;
  }
  static TracedRun* run_;
  static ProcessResult* html_;
  static std::string page_;
};
TracedRun* HtmlReport::run_ = nullptr;
ProcessResult* HtmlReport::html_ = nullptr;
std::string HtmlReport::page_;

TEST_F(HtmlReport, IsOneFileThatFetchesNothing) {
  ASSERT_EQ(run_->result.exit_code, 0) << run_->result.err;
  ASSERT_EQ(html_->exit_code, 0) << html_->err;
  EXPECT_EQ(html_->out, "");
  std::string page = read_file(page_);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* outside : {"<script src", "<link", "url(http", "@import"})
    EXPECT_EQ(page.find(outside), std::string::npos) << outside;
  nlohmann::json data = embedded_json(page);
  ASSERT_TRUE(data.is_object());
  EXPECT_EQ(data["devices"][0]["peak_bytes"], 34 * kMiB);
  ASSERT_EQ(data["moments"]["accounts"].size(), 3u);  // device 0, managed and pinned host memory
  EXPECT_LE(data["moments"]["accounts"][0]["moments"].size(), 256u);
  EXPECT_FALSE(data["timeline"]["series"].empty());
}

TEST_F(HtmlReport, CommandLine) {
  ProcessResult help = run_gpumemtrace({"html", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_EQ(help.out.rfind("usage: gpumemtrace html [options] -o FILE TRACE\n", 0), 0u) << help.out;
  EXPECT_NE(help.out.find("256 moments per device"), std::string::npos);
  ProcessResult unwritable = run_gpumemtrace({"html", run_->trace, "-o", "/nonexistent/dir/report.html"});
  EXPECT_EQ(unwritable.exit_code, 3);
  EXPECT_EQ(unwritable.err, "gpumemtrace html: cannot write /nonexistent/dir/report.html: No such file or directory\n");
  ProcessResult not_a_trace = run_gpumemtrace({"html", page_, "-o", run_->dir + "/x.html"});
  EXPECT_EQ(not_a_trace.exit_code, 2);
}

TEST_F(HtmlReport, InChromiumAClickOnTheTimelineShowsTheLiveSetOfThatMoment) {
  if (std::string why = browser_missing(); !why.empty()) GTEST_SKIP() << why;
  ASSERT_EQ(html_->exit_code, 0) << html_->err;

  nlohmann::json summary = json_of({"summary", "--json", run_->trace});
  nlohmann::json timeline = json_of({"timeline", "--json", run_->trace});
  uint64_t peak_ns = summary["devices"][0]["peak_time_ns"];
  uint64_t peak_bytes = summary["devices"][0]["peak_bytes"];
  ASSERT_EQ(peak_bytes, 34 * kMiB);
  uint64_t start = timeline["start_ns"], window = timeline["window_ns"];
  std::vector<uint64_t> slices = timeline["series"][0]["max_bytes"];
  // 5% in (the first steps, far below the peak), in the middle of a slice: a click on the boundary of two
  // may be taken for either.
  uint64_t early_ns = start + slices.size() / 20 * window + window / 2;

  mkdir(ARTIFACT_DIR, 0755);
  std::string screenshot = std::string(ARTIFACT_DIR) + "/html_report.png";
  ProcessResult browser = run_process(
      {NODE_PATH_PROGRAM, OPEN_REPORT_TOOL, page_, "--screenshot", screenshot, "--full-page", "--click-ns", std::to_string(early_ns),
       "--click-ns", std::to_string(peak_ns)},
      {{"NODE_PATH", NODE_MODULES}});
  ASSERT_EQ(browser.exit_code, 0) << browser.err;
  nlohmann::json seen = nlohmann::json::parse(browser.out);
  RecordProperty("open_ms", std::to_string(seen["open_ms"].get<int>()));

  EXPECT_EQ(seen["console_errors"], nlohmann::json::array()) << seen["console_errors"].dump();
  EXPECT_EQ(seen["timelines"], 3);  // device 0, managed and pinned host memory
  EXPECT_GT(seen["flame_frames"].get<int>(), 3);
  EXPECT_TRUE(file_exists(screenshot));

  // The first click: the moment of the clicked slices, holding the most the analyzer's timeline drew there.
  const nlohmann::json& early = seen["clicks"][0];
  // A click lands on a whole pixel: the page takes it for a time within a pixel of the one asked for, and
  // shows the moment that holds that time.
  uint64_t from = early["start_ns"], to = early["end_ns"], clicked = early["clicked_ns"];
  EXPECT_NEAR(static_cast<double>(clicked), static_cast<double>(early_ns), early["ns_per_pixel"].get<double>());
  ASSERT_LE(from, clicked);
  ASSERT_LT(clicked, to);
  uint64_t most = 0;
  for (size_t i = (from - start) / window; i < slices.size() && start + i * window < to; ++i) most = std::max(most, slices[i]);
  EXPECT_EQ(early["live_bytes"], most);
  EXPECT_LT(early["live_bytes"].get<uint64_t>(), peak_bytes);
  uint64_t listed = 0;
  for (const nlohmann::json& row : early["rows"]) listed += row["bytes"].get<uint64_t>();
  EXPECT_EQ(listed, most);

  // The second click, on the peak's mark: the analyzer's peak and the three stacks live then.
  const nlohmann::json& peak = seen["clicks"][1];
  EXPECT_EQ(peak["moment_ns"], peak_ns);
  EXPECT_EQ(peak["live_bytes"], peak_bytes);
  ASSERT_EQ(peak["rows"].size(), 3u) << peak.dump();
  auto row_starting = [&](const std::string& function) {
    for (const nlohmann::json& row : peak["rows"])
      if (row["where"].get<std::string>().rfind(function + " (known_workload.cpp:", 0) == 0) return row;
    ADD_FAILURE() << "no row for " << function << " in " << peak["rows"].dump();
    return nlohmann::json::object();
  };
  EXPECT_EQ(row_starting("alloc_scratch")["bytes"], 16 * kMiB);
  EXPECT_EQ(row_starting("alloc_history")["bytes"], 10 * kMiB);
  EXPECT_EQ(row_starting("alloc_history")["allocations"], 10);
  EXPECT_EQ(row_starting("alloc_weights")["bytes"], 8 * kMiB);
  EXPECT_EQ(row_starting("alloc_weights")["allocations"], 2);
  std::vector<std::string> flame = peak["flame_names"];
  EXPECT_TRUE(std::any_of(flame.begin(), flame.end(), [](const std::string& name) {
    return name.rfind("alloc_history (known_workload.cpp:", 0) == 0;
  })) << peak["flame_names"].dump();
}

// A leak whose stack is 5,000 frames deep (a PyTorch snapshot's can be; the trace records no depth limit):
// the page shows at most 256 of them, says it is ready with every section, and with every tree node opened
// (48 levels nested, the callers beyond listed flat under one) it still lays out without an error.
TEST(HtmlDeepStack, IsFoldedAndThePageStaysWhole) {
  if (std::string why = browser_missing(); !why.empty()) GTEST_SKIP() << why;
  ScratchDir scratch;
  TraceBuilder b;
  b.process(7, 1, 0, 0, -1, "host", "deep", {"deep"});
  b.thread_new(1, 7, "main");
  for (uint64_t depth = 1; depth <= 5000; ++depth) b.stack_node(depth - 1, 0x400000 + depth * 16);
  b.alloc(format::Api::cudaMalloc, 0, 0x7f0000000000, kMiB, 5000, 1000);
  b.alloc(format::Api::cudaMalloc, 0, 0x7f0000100000, 2 * kMiB, 2500, 1000);
  b.end(2, 1000);
  std::string trace = write_file(scratch / "deep.trace", b.bytes());
  std::string page = scratch / "deep.html";
  ProcessResult html = run_gpumemtrace({"html", "-o", page, trace});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  nlohmann::json data = embedded_json(read_file(page));
  ASSERT_EQ(data["leaks"].size(), 2u);
  EXPECT_EQ(data["leaks"][0]["stack"].size(), 257u);  // 256 frames and the marker of the cut
  EXPECT_EQ(data["leaks"][0]["stack"][256]["kind"], "truncated");

  ProcessResult browser = run_process({NODE_PATH_PROGRAM, OPEN_REPORT_TOOL, page, "--expand-all"}, {{"NODE_PATH", NODE_MODULES}});
  ASSERT_EQ(browser.exit_code, 0) << browser.err;
  nlohmann::json seen = nlohmann::json::parse(browser.out);
  EXPECT_EQ(seen["console_errors"], nlohmann::json::array()) << seen["console_errors"].dump();
  std::vector<std::string> sections = seen["sections"];
  for (const char* id : {"timelines", "liveset", "leaks"})
    EXPECT_NE(std::find(sections.begin(), sections.end(), id), sections.end()) << id << " in " << seen["sections"].dump();
  EXPECT_GT(seen["expanded"]["nodes"].get<int>(), 48);
  EXPECT_LE(seen["expanded"]["deepest"].get<int>(), 49);  // 48 frames nested, then one node for the rest
  EXPECT_GT(seen["expanded"]["height"].get<int>(), 0);
}

// The forecast of a loop that keeps 4 MiB per step on a 1 GiB device (tests/analyzer/report/forecast_test.cpp),
// as the page says it.
TEST(HtmlForecast, SaysTheStepAndTheStackThatKeepsMemory) {
  if (std::string why = browser_missing(); !why.empty()) GTEST_SKIP() << why;
  TracedRun run = run_traced("report_prog_steps", {"23", "4", "32"}, {{"GPUMEMTRACE_SIM_MEMORY", "1GiB"}});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  nlohmann::json seen = seen_in_browser(run.trace, run.dir + "/steps.html");
  ASSERT_EQ(seen["forecast"].size(), 2u) << seen.dump();
  std::string device = seen["forecast"][0];
  EXPECT_TRUE(device.starts_with("device 0: at this rate it runs out of memory at step 233 (exactly; in ")) << device;
  EXPECT_TRUE(device.ends_with(": its peak grows 4.00 MiB per step, of 1.00 GiB it can use")) << device;
  std::string stack = seen["forecast"][1];
  EXPECT_TRUE(stack.starts_with("keeps 4.00 MiB per step: allocate (step_workload.cpp:")) << stack;
  EXPECT_NE(stack.find("← keep_for_logging (step_workload.cpp:"), std::string::npos) << stack;
}

// A program with its own pool and no PyTorch (tests/analyzer/cli/whatif_command_test.cpp has the figures): the page
// has the what-if table of its heap's blocks.
TEST(HtmlWhatif, AProgramsHeapBlocksGetTheTable) {
  if (std::string why = browser_missing(); !why.empty()) GTEST_SKIP() << why;
  TracedRun run = run_traced("report_prog_heaps", {"1"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  nlohmann::json seen = seen_in_browser(run.trace, run.dir + "/heaps.html");
  const nlohmann::json& rows = seen["whatif_rows"];
  ASSERT_EQ(rows.size(), 6u) << rows.dump();  // the defaults and the grid but garbage collection
  EXPECT_EQ(rows[0][0], "PyTorch defaults");
  EXPECT_EQ(rows[0][1], "82.0 MiB");
  EXPECT_EQ(rows[0][5], "no");
  EXPECT_EQ(rows[1][0], "expandable_segments=True");
  EXPECT_EQ(rows[1][1], "62.0 MiB");
}

}  // namespace
}  // namespace gpumemtrace::test
