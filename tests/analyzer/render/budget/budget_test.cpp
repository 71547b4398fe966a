// Memory budgets in CI: `gpumemtrace check`, `baseline` and `diff` on traces of a workload with known
// figures (programs/budget_workload.cpp) run under the tracer on the simulated device.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/size_units.h"
#include "tests/analyzer/budget_runs.h"
#include "tests/analyzer/hostile_names.h"
#include "tests/support/temp_files.h"
#include "tests/support/trace_builder.h"

namespace gpumemtrace::test {
namespace {


void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

class Budgets : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    small_ = new std::string(workload_trace({"8", "4", "16"}));    // peak 28 MiB, leak 4 MiB
    again_ = new std::string(workload_trace({"8", "4", "16"}));    // the same run again
    larger_ = new std::string(workload_trace({"8", "4", "24"}));   // activations +8 MiB: peak 36 MiB
  }
  static void TearDownTestSuite() {
    delete small_;
    delete again_;
    delete larger_;
  }
  static std::string* small_;
  static std::string* again_;
  static std::string* larger_;
  ScratchDir scratch_;
};
std::string* Budgets::small_;
std::string* Budgets::again_;
std::string* Budgets::larger_;

TEST_F(Budgets, PeakPassesAtTheExactLimitAndFailsOneByteBelow) {
  uint64_t peak = 28 * kMiB;
  ProcessResult r = run_gpumemtrace({"check", "--max-peak", std::to_string(peak), *small_});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "PASSED: 0 of 1 checks failed (1 trace)\n");
  r = run_gpumemtrace({"check", "--max-peak", std::to_string(peak - 1), *small_});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out,
            "FAIL max-peak device 0: 28.0 MiB (29360128 B) > limit 28.0 MiB (29360127 B)\n"
            "FAILED: 1 of 1 checks failed (1 trace)\n");
  EXPECT_EQ(r.err, "");
}

TEST_F(Budgets, TheSameBudgetPassesTheSmallRunAndFailsTheLargerOne) {
  for (auto [trace, code] : {std::pair{small_, 0}, std::pair{larger_, 1}}) {
    ProcessResult r = run_gpumemtrace({"check", "--max-peak", "32MiB", "--max-leak", "4MiB", *trace});
    EXPECT_EQ(r.exit_code, code) << r.out << r.err;
  }
  ProcessResult r = run_gpumemtrace({"check", "--max-peak", "32MiB", "--max-leak", "4MiB", *larger_});
  EXPECT_EQ(r.out,
            "FAIL max-peak device 0: 36.0 MiB (37748736 B) > limit 32.0 MiB (33554432 B)\n"
            "FAILED: 1 of 2 checks failed (1 trace)\n");
}

TEST_F(Budgets, LeaksAreCheckedToTheByte) {
  EXPECT_EQ(run_gpumemtrace({"check", "--max-leak", std::to_string(4 * kMiB), *small_}).exit_code, 0);
  ProcessResult r = run_gpumemtrace({"check", "--max-leak", std::to_string(4 * kMiB - 1), *small_});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("FAIL max-leak device 0: 4.00 MiB (4194304 B) > limit 4.00 MiB (4194303 B)\n"), std::string::npos)
      << r.out;
}

TEST_F(Budgets, SizesAreReadInHumanUnits) {
  EXPECT_EQ(run_gpumemtrace({"check", "--max-peak", "1.5GB", *small_}).exit_code, 0);
  EXPECT_EQ(run_gpumemtrace({"check", "--max-peak", "0.02734375GiB", *small_}).exit_code, 0);  // exactly 28 MiB
  EXPECT_EQ(run_gpumemtrace({"check", "--max-peak", "27MiB", *small_}).exit_code, 1);
}

TEST_F(Budgets, BadSizesTolerancesAndCommandLinesAreExit2) {
  ProcessResult r = run_gpumemtrace({"check", "--max-peak", "lots", *small_});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "gpumemtrace check: --max-peak lots is not a size (e.g. 512MiB, 6GiB, 1.5GB, 4096) (see gpumemtrace check "
            "--help)\n");
  std::string baseline = scratch_ / "base.json";
  ASSERT_EQ(run_gpumemtrace({"baseline", "-o", baseline, *small_}).exit_code, 0);
  for (std::string tolerance : {"5x%", "%", "-5%", "five"}) {
    r = run_gpumemtrace({"check", "--baseline", baseline, "--tolerance", tolerance, *small_});
    EXPECT_EQ(r.exit_code, 2) << tolerance;
    EXPECT_NE(r.err.find("--tolerance " + tolerance + " is "), std::string::npos) << r.err;
  }
  EXPECT_EQ(run_gpumemtrace({"check", *small_}).exit_code, 2);  // nothing to check
  EXPECT_EQ(run_gpumemtrace({"check", "--frobnicate", *small_}).exit_code, 2);
  r = run_gpumemtrace({"check", "--max-peak", "1GiB", scratch_ / "missing.trace"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpumemtrace: " + (scratch_ / "missing.trace") + ": no such file or directory\n");
}

TEST_F(Budgets, BaselinesOfIdenticalRunsAreByteIdentical) {
  std::string a = scratch_ / "a.json", b = scratch_ / "b.json";
  ASSERT_EQ(run_gpumemtrace({"baseline", "-o", a, *small_}).exit_code, 0);
  ASSERT_EQ(run_gpumemtrace({"baseline", "-o", b, *again_}).exit_code, 0);
  std::string text = read_file(a);
  EXPECT_EQ(text, read_file(b));
  nlohmann::json json = nlohmann::json::parse(text);
  EXPECT_EQ(json["version"], 1);
  ASSERT_EQ(json["ranks"].size(), 1u);
  const nlohmann::json& device = json["ranks"][0]["devices"][0];
  EXPECT_EQ(device["peak_bytes"], 28 * kMiB);
  EXPECT_EQ(device["leaked_bytes"], 4 * kMiB);
  EXPECT_EQ(device["final_bytes"], 4 * kMiB);
  EXPECT_EQ(device["allocations"], 3u);
  EXPECT_EQ(device["frees"], 2u);
  ASSERT_EQ(device["stacks_at_peak"].size(), 3u);
  EXPECT_EQ(device["stacks_at_peak"][0]["bytes"], 16 * kMiB);
  std::string top = device["stacks_at_peak"][0]["stack"];
  EXPECT_EQ(top.rfind("alloc_activations (budget_workload.cpp)", 0), 0u) << top;
  EXPECT_NE(top.find("main (budget_workload.cpp)"), std::string::npos) << top;
  EXPECT_EQ(top.find("0x"), std::string::npos) << "no addresses: " << top;
  // One figure per line, one stack per line: a diff of two baselines reads line by line.
  EXPECT_NE(text.find("\n          \"peak_bytes\": 29360128,\n"), std::string::npos) << text;
}

TEST_F(Budgets, TheBaselinePassesAnIdenticalRunAndNamesTheStackThatGrew) {
  std::string baseline = scratch_ / "base.json";
  ASSERT_EQ(run_gpumemtrace({"baseline", "-o", baseline, *small_}).exit_code, 0);
  ProcessResult r = run_gpumemtrace({"check", "--baseline", baseline, *again_});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "PASSED: 0 of 2 checks failed (1 trace)\n");

  r = run_gpumemtrace({"check", "--baseline", baseline, "--tolerance", "10%", *larger_});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  // 10% of 29360128 is 2936012 (rounded down): the limit is 32296140.
  EXPECT_EQ(r.out.rfind("FAIL baseline-peak device 0: 36.0 MiB (37748736 B) > baseline 28.0 MiB (29360128 B) + "
                        "tolerance = 30.8 MiB (32296140 B)\n"
                        "  stacks that grew most at the peak:\n"
                        "    +8.00 MiB (+8388608 B)  alloc_activations (budget_workload.cpp) ← main (budget_workload.cpp)",
                        0),
            0u)
      << r.out;
  EXPECT_EQ(r.out.find("alloc_weights"), std::string::npos) << "only the stacks that grew: " << r.out;

  // The tolerance in bytes: exactly the growth passes, one byte less fails.
  EXPECT_EQ(run_gpumemtrace({"check", "--baseline", baseline, "--tolerance", "8MiB", *larger_}).exit_code, 0);
  EXPECT_EQ(run_gpumemtrace({"check", "--baseline", baseline, "--tolerance", "8388607", *larger_}).exit_code, 1);
}

TEST_F(Budgets, MalformedAndOlderBaselinesAreExit2WithTheReason) {
  std::string path = scratch_ / "bad.json";
  auto expect_refused = [&](const std::string& text, const std::string& reason) {
    write_text(path, text);
    ProcessResult r = run_gpumemtrace({"check", "--baseline", path, *small_});
    EXPECT_EQ(r.exit_code, 2) << text;
    EXPECT_EQ(r.err, "gpumemtrace: " + path + ": " + reason + "\n");
    EXPECT_EQ(r.out, "");
  };
  expect_refused("{\"format\": ", "not a baseline: not JSON");
  expect_refused("{\"version\": 1}", "not a baseline: no \"format\": \"gpumemtrace-baseline\"");
  expect_refused("{\"format\": \"gpumemtrace-baseline\", \"version\": 0, \"ranks\": []}",
                 "baseline version 0 is older than this build's 1: write it again with gpumemtrace baseline");
  expect_refused("{\"format\": \"gpumemtrace-baseline\", \"version\": 1, \"ranks\": [{\"rank\": 0, \"complete\": true, "
                 "\"devices\": [{\"device\": 0, \"peak_bytes\": \"big\"}]}]}",
                 "malformed baseline: ranks[0].devices[0].peak_bytes is not a byte count");
  expect_refused("{\"format\": \"gpumemtrace-baseline\", \"version\": 1}", "malformed baseline: baseline.ranks is missing");
}

TEST_F(Budgets, DiffAttributesTheChangeToTheStackThatGrew) {
  ProcessResult r = run_gpumemtrace({"diff", *small_, *larger_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("device 0\n"
                        "  peak        28.0 MiB ->     36.0 MiB  +8.00 MiB (+8388608 B)\n"
                        "  leaked      4.00 MiB ->     4.00 MiB  0 B\n"
                        "  final       4.00 MiB ->     4.00 MiB  0 B\n"
                        "  grew at the peak:\n"
                        "    +8.00 MiB (+8388608 B)  alloc_activations (budget_workload.cpp) ← main",
                        0),
            0u)
      << r.out;
  EXPECT_EQ(r.out.find("shrank"), std::string::npos) << r.out;

  r = run_gpumemtrace({"diff", "--json", *larger_, *small_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json json = nlohmann::json::parse(r.out);
  ASSERT_EQ(json["devices"].size(), 1u);
  const nlohmann::json& device = json["devices"][0];
  EXPECT_EQ(device["peak"]["delta_bytes"], -8 * int64_t(kMiB));
  EXPECT_EQ(device["grew"].size(), 0u);
  ASSERT_EQ(device["shrank"].size(), 1u);
  EXPECT_EQ(device["shrank"][0]["delta_bytes"], -8 * int64_t(kMiB));
  EXPECT_EQ(device["shrank"][0]["before_bytes"], 24 * kMiB);
  EXPECT_EQ(device["shrank"][0]["after_bytes"], 16 * kMiB);
  EXPECT_EQ(device["shrank"][0]["stack"].get<std::string>().rfind("alloc_activations (budget_workload.cpp)", 0), 0u);
}

TEST_F(Budgets, DiffTakesABaselineForEitherSide) {
  std::string baseline = scratch_ / "base.json";
  ASSERT_EQ(run_gpumemtrace({"baseline", "-o", baseline, *small_}).exit_code, 0);
  ProcessResult from_trace = run_gpumemtrace({"diff", *small_, *larger_});
  ProcessResult from_baseline = run_gpumemtrace({"diff", baseline, *larger_});
  EXPECT_EQ(from_baseline.exit_code, 0) << from_baseline.err;
  EXPECT_EQ(from_baseline.out, from_trace.out);
  EXPECT_EQ(run_gpumemtrace({"diff", *small_}).exit_code, 1);  // diff keeps the usual usage status
}

// Figures anywhere in uint64_t (an edited baseline, a damaged trace): the change keeps its sign and is clamped
// to the range of int64_t. Subtracting them as int64_t overflowed (UBSan, under fuzz_baseline) or turned
// 16 EiB -> 0 into +1 B.
TEST(BudgetDiff, ChangesBeyondTheSignedRangeKeepTheirSign) {
  ScratchDir scratch;
  auto baseline = [](uint64_t peak, uint64_t stack_bytes) {
    return "{\"format\": \"gpumemtrace-baseline\", \"version\": 1, \"ranks\": [{\"rank\": null, \"complete\": true, "
           "\"devices\": [{\"device\": 0, \"peak_bytes\": " + std::to_string(peak) + ", \"final_bytes\": 0, "
           "\"leaked_bytes\": 0, \"allocations\": 1, \"frees\": 1, \"failed_allocations\": 0, \"out_of_memory\": 0, "
           "\"stacks_at_peak\": [{\"bytes\": " + std::to_string(stack_bytes) + ", \"allocations\": 1, "
           "\"stack\": \"main (prog.cpp)\"}]}]}]}";
  };
  std::string huge = scratch / "huge.json", small = scratch / "small.json";
  write_text(huge, baseline(UINT64_MAX, uint64_t{1} << 63));
  write_text(small, baseline(0, 1));

  ProcessResult shrank = run_gpumemtrace({"diff", "--json", huge, small});
  ASSERT_EQ(shrank.exit_code, 0) << shrank.err;
  nlohmann::json device = nlohmann::json::parse(shrank.out)["devices"][0];
  EXPECT_EQ(device["peak"]["delta_bytes"], -INT64_MAX);
  ASSERT_EQ(device["shrank"].size(), 1u);
  EXPECT_EQ(device["shrank"][0]["delta_bytes"], -INT64_MAX);

  ProcessResult grew = run_gpumemtrace({"diff", "--json", small, huge});
  ASSERT_EQ(grew.exit_code, 0) << grew.err;
  device = nlohmann::json::parse(grew.out)["devices"][0];
  EXPECT_EQ(device["peak"]["delta_bytes"], INT64_MAX);
  ASSERT_EQ(device["grew"].size(), 1u);
  EXPECT_EQ(device["grew"][0]["delta_bytes"], INT64_MAX);
  EXPECT_EQ(run_gpumemtrace({"diff", small, huge}).exit_code, 0);
}

// A window of the run (--from, --to): only what was allocated in it counts, and its leaks are what it still held
// at --to. Hand-built: 100 B at 1 µs, 50 B at 2 µs, the 100 B freed at 3 µs, 10 B at 4 µs, the end at 5 µs.
TEST(BudgetWindow, OnlyTheAllocationsOfTheWindowCount) {
  ScratchDir scratch;
  TraceBuilder b;
  b.process(77, 1, 0, 64, -1, "host", "/bin/window", {"window"});
  b.alloc(TraceBuilder::Api::cudaMalloc, 0, 0x1000, 100, 0, 1000);
  b.alloc(TraceBuilder::Api::cudaMalloc, 0, 0x2000, 50, 0, 1000);
  b.free(TraceBuilder::Api::cudaFree, 0x1000, 1000);
  b.alloc(TraceBuilder::Api::cudaMalloc, 0, 0x3000, 10, 0, 1000);
  b.end(4, 1000);
  std::string trace = write_file(scratch / "window.trace", b.bytes());

  ProcessResult r =
      run_gpumemtrace({"check", "--from", "1500", "--to", "3500", "--max-peak", "49", "--max-leak", "49", trace});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out,
            "FAIL max-peak device 0: 50 B > limit 49 B\n"
            "FAIL max-leak device 0: 50 B > limit 49 B\n"
            "FAILED: 2 of 2 checks failed (1 trace)\n");
  r = run_gpumemtrace({"check", "--from", "1500", "--to", "3.5us", "--max-peak", "50", "--max-leak", "50", trace});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // The whole run: 150 B at the peak, 60 B leaked.
  r = run_gpumemtrace({"check", "--max-peak", "149", "--max-leak", "59", trace});
  EXPECT_EQ(r.out,
            "FAIL max-peak device 0: 150 B > limit 149 B\n"
            "FAIL max-leak device 0: 60 B > limit 59 B\n"
            "FAILED: 2 of 2 checks failed (1 trace)\n");
  r = run_gpumemtrace({"check", "--from", "2s", "--to", "1s", "--max-peak", "1", trace});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpumemtrace check: --from 2s is after --to 1s (see gpumemtrace check --help)\n");
}

bool have_xmllint() { return run_process({"/bin/sh", "-c", "command -v xmllint"}).exit_code == 0; }

TEST_F(Budgets, JUnitValidatesAndHoldsTheFailingCase) {
  if (!have_xmllint()) GTEST_SKIP() << "xmllint is missing (Debian libxml2-utils; scripts/setup.sh installs it)";
  std::string baseline = scratch_ / "base.json", xml = scratch_ / "budget.xml";
  ASSERT_EQ(run_gpumemtrace({"baseline", "-o", baseline, *small_}).exit_code, 0);
  ProcessResult r = run_gpumemtrace({"check", "--max-peak", "40MiB", "--baseline", baseline, "--junit", xml, *larger_});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  ProcessResult lint = run_process({"xmllint", "--noout", "--schema", JUNIT_SCHEMA, xml});
  EXPECT_EQ(lint.exit_code, 0) << lint.err << read_file(xml);
  std::string text = read_file(xml);
  EXPECT_NE(text.find("<testsuite name=\"gpumemtrace check\" tests=\"3\" failures=\"1\" errors=\"0\""), std::string::npos)
      << text;
  EXPECT_NE(text.find("<testcase name=\"max-peak device 0\" classname=\"gpumemtrace.process\" time=\"0\"/>"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("<failure type=\"baseline-peak\" message=\"baseline-peak device 0: 36.0 MiB (37748736 B) &gt; "
                      "baseline 28.0 MiB (29360128 B) + tolerance = 28.0 MiB (29360128 B)\">"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n  +8.00 MiB (+8388608 B)  alloc_activations (budget_workload.cpp) ← main"), std::string::npos)
      << text;
  // The schema is strict enough to refuse what Jenkins refuses: a testsuite without its counts.
  write_text(scratch_ / "bad.xml", "<testsuites><testsuite name=\"x\"><testcase name=\"y\"/></testsuite></testsuites>");
  EXPECT_NE(run_process({"xmllint", "--noout", "--schema", JUNIT_SCHEMA, scratch_ / "bad.xml"}).exit_code, 0);
}

// Names that are not UTF-8 and hold control characters (tests/analyzer/hostile_names.h) in the failure's
// stacks and the trace's path: the file is still XML that validates, with U+FFFD in their place.
TEST(BudgetJUnit, NamesThatAreNotUtf8StillMakeValidXml) {
  if (!have_xmllint()) GTEST_SKIP() << "xmllint is missing (Debian libxml2-utils; scripts/setup.sh installs it)";
  ScratchDir scratch;
  std::string trace = write_file(scratch / "hostile\x1b\x01\xff.trace", hostile::trace(true).bytes());
  std::string baseline = scratch / "base.json", xml = scratch / "budget.xml";
  ASSERT_EQ(run_gpumemtrace({"baseline", "-o", baseline, write_file(scratch / "t.trace", hostile::trace().bytes())})
                .exit_code,
            0);
  ProcessResult r = run_gpumemtrace({"check", "--baseline", baseline, "--junit", xml, trace});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  ProcessResult lint = run_process({"xmllint", "--noout", "--schema", JUNIT_SCHEMA, xml});
  EXPECT_EQ(lint.exit_code, 0) << lint.err << read_file(xml);
  std::string text = read_file(xml);
  EXPECT_TRUE(is_valid_utf8(text));
  EXPECT_NE(text.find(" B)  @SUM(1+1)\xEF\xBF\xBD (=HYPERLINK(&quot;evil&quot;,&quot;y&quot;)\xEF\xBF\xBD[31m.py)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("trace: " + scratch.path() + "/hostile\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD.trace\n"),
            std::string::npos)
      << text;
}

// Four ranks in one directory: rank 2 holds more, rank 3 runs out of memory.
TEST(BudgetRanks, ADirectoryIsCheckedRankByRankWithTheImbalance) {
  ScratchDir dir;
  const std::vector<std::vector<std::string>> sizes = {
      {"8", "4", "16"}, {"8", "4", "16"}, {"8", "4", "64"}, {"8", "4", "16", "1048576"}};
  for (size_t rank = 0; rank < sizes.size(); ++rank) {
    std::string trace = workload_trace(sizes[rank], {{"RANK", std::to_string(rank)}});
    std::filesystem::copy_file(trace, dir / ("mem-" + std::to_string(rank) + ".trace"));
  }
  write_text(dir / "notes.txt", "not a trace: left alone\n");
  ProcessResult r = run_gpumemtrace({"check", "--max-ooms", "0", "--max-peak", "64MiB", dir.path()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out,
            "FAIL max-peak device 0 rank 2: 76.0 MiB (79691776 B) > limit 64.0 MiB (67108864 B)\n"
            "FAIL max-ooms device 0 rank 3: 1 > limit 0\n"
            "\n"
            "rank       device                       peak                     leaked  OOMs\n"
            "rank 0          0      28.0 MiB (29360128 B)       4.00 MiB (4194304 B)     0\n"
            "rank 1          0      28.0 MiB (29360128 B)       4.00 MiB (4194304 B)     0\n"
            "rank 2          0      76.0 MiB (79691776 B)       4.00 MiB (4194304 B)     0\n"
            "rank 3          0      28.0 MiB (29360128 B)       4.00 MiB (4194304 B)     1\n"
            "rank 2 holds the most: peak 76.0 MiB, 2.71x the median peak of 28.0 MiB\n"
            "FAILED: 2 of 8 checks failed (4 traces)\n");

  std::string baseline = dir / "baseline.json";
  ASSERT_EQ(run_gpumemtrace({"baseline", "-o", baseline, dir.path()}).exit_code, 0);
  nlohmann::json json = nlohmann::json::parse(read_file(baseline));
  ASSERT_EQ(json["ranks"].size(), 4u);
  for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(json["ranks"][rank]["rank"], rank);
  EXPECT_EQ(json["ranks"][3]["devices"][0]["out_of_memory"], 1u);

  // The baseline is in the directory now, and is not a trace: the directory still reads as four ranks.
  r = run_gpumemtrace({"check", "--baseline", baseline, dir.path()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("PASSED: 0 of 8 checks failed (4 traces)\n"), std::string::npos) << r.out;

  r = run_gpumemtrace({"check", "--json", "--max-ooms", "0", dir.path()});
  nlohmann::json check = nlohmann::json::parse(r.out);
  EXPECT_EQ(check["largest_rank"], "rank 2");
  EXPECT_EQ(check["failures"], 1u);
  EXPECT_EQ(check["ranks"][3]["out_of_memory"], 1u);
}

// examples/ci/memory_budget.sh as CI runs it, against the committed baseline.
TEST(BudgetExample, TheCiRecipePassesTheLoopAndFailsALargerBatch) {
  ScratchDir out;
  EnvChanges env = {{"GPUMEMTRACE", analyzer_path()}, {"TRAIN_LOOP", bin_dir() + "/train_loop"},
                    {"OUT", out.path()}, {"BASELINE", std::nullopt}};
  std::string script = std::string(EXAMPLES_CI_DIR) + "/memory_budget.sh";
  ProcessResult r = run_process({"bash", script}, env);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("PASSED: 0 of 3 checks failed (1 trace)\n"), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::exists(out / "gpu-memory.xml"));

  r = run_process({"bash", script, "--", "--batch", "64"}, env);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("\nFAIL baseline-peak device 0: "), std::string::npos) << r.out;
  // The loop's activations come from its caching allocator: the segments it had to add grew (the driver's
  // view, which is what check compares).
  EXPECT_NE(r.out.find("  stacks that grew most at the peak:\n    +20.0 MiB (+20971520 B)  CachingAllocator::new_segment("
                       "unsigned long, bool) (caching_allocator.cpp) ← CachingAllocator::allocate(unsigned long, char "
                       "const*) (caching_allocator.cpp) ← cached_alloc (train_loop.cpp) ← forward (train_loop.cpp)"),
            std::string::npos)
      << r.out;

  // --update records the same bytes as the committed baseline: the run is deterministic and the
  // committed file is current.
  env["BASELINE"] = out / "recorded.json";
  r = run_process({"bash", script, "--update"}, env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(out / "recorded.json"), read_file(std::string(EXAMPLES_CI_DIR) + "/train_loop.baseline.json"));
}

}  // namespace
}  // namespace gpumemtrace::test
