// The report commands as a user runs them: help, usage errors, files that are not traces (exit 2 with one
// line, never a crash), and the text of a real trace.
#include <gtest/gtest.h>

#include "tests/analyzer/report_helpers.h"
#include "tests/support/subprocess.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {

const std::vector<std::string> kReports = {"summary", "peak",     "leaks", "growth", "oom", "fragmentation",
                                           "timeline", "phases"};

TEST(ReportCommands, EachHasHelp) {
  for (const std::string& name : kReports) {
    ProcessResult r = run_gpumemtrace({name, "--help"});
    EXPECT_EQ(r.exit_code, 0) << name;
    bool reads_directories = name == "summary" || name == "peak" || name == "leaks" || name == "oom";
    std::string operand = reads_directories ? "TRACE|DIR" : "TRACE";
    EXPECT_EQ(r.out.rfind("usage: gpumemtrace " + name + " [options] " + operand + "\n", 0), 0u) << r.out;
    EXPECT_EQ(r.out.find("--rank N|all") != std::string::npos, reads_directories) << name;
    EXPECT_NE(r.out.find("--min-size SIZE"), std::string::npos) << name;
    EXPECT_EQ(r.out.find("--width") != std::string::npos, name == "timeline") << name;
  }
}

TEST(ReportCommands, HelpListsTheFormatsAndTheExitStatus) {
  ProcessResult r = run_gpumemtrace({"oom", "--help"});
  EXPECT_NE(r.out.find("  --format NAME      the output: text (for people, the default), json (for machines, see docs/reports.md), "
                       "html (one self-contained page for a browser: `gpumemtrace html` has it all), folded (folded stacks for flame graphs; peak and leaks only), pprof (a gzipped profile.proto "
                       "for go tool pprof; peak and leaks only)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("3 for a system\nerror"), std::string::npos) << r.out;
}

TEST(ReportCommands, BadCommandLinesAreUsageErrors) {
  EXPECT_EQ(run_gpumemtrace({"summary"}).exit_code, 1);
  EXPECT_EQ(run_gpumemtrace({"peak", "--top", "many", "x.trace"}).exit_code, 1);
  EXPECT_EQ(run_gpumemtrace({"leaks", "--min-size", "lots", "x.trace"}).exit_code, 1);
  EXPECT_EQ(run_gpumemtrace({"summary", "--width", "80", "x.trace"}).exit_code, 1);
  ProcessResult r = run_gpumemtrace({"growth", "--frobnicate", "x.trace"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "gpumemtrace growth: unknown option '--frobnicate' (see gpumemtrace growth --help)\n");
  r = run_gpumemtrace({"summary", "--format", "csv", "x.trace"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "gpumemtrace summary: --format csv is a format of 'gpumemtrace export', not of the reports (see gpumemtrace "
            "summary --help)\n");
  r = run_gpumemtrace({"summary", "--format", "svg", "x.trace"});
  EXPECT_EQ(r.err, "gpumemtrace summary: --format svg is not one of: text, json, html, folded, pprof (see gpumemtrace summary --help)\n");
  EXPECT_EQ(run_gpumemtrace({"summary", "--json", "--format", "text", "x.trace"}).exit_code, 1);
  r = run_gpumemtrace({"peak", "x.trace", "--top"});
  EXPECT_EQ(r.err, "gpumemtrace peak: option --top needs a value (see gpumemtrace peak --help)\n");
  r = run_gpumemtrace({"leaks", "a.trace", "b.trace"});
  EXPECT_EQ(r.err, "gpumemtrace leaks: expects one trace file or directory, got 'a.trace' and 'b.trace' (see gpumemtrace "
                   "leaks --help)\n");
}

class NotATrace : public testing::Test {
 protected:
  ScratchDir scratch_;
  void expect_refused(const std::string& path, const std::string& reason) {
    for (const std::string& name : kReports) {
      ProcessResult r = run_gpumemtrace({name, path});
      EXPECT_EQ(r.exit_code, 2) << name << " " << path << "\n" << r.err;
      EXPECT_EQ(r.term_signal, 0);
      EXPECT_EQ(r.out, "");
      EXPECT_EQ(r.err, "gpumemtrace: " + path + ": " + reason + "\n") << name;
    }
  }
};

TEST_F(NotATrace, GarbageIsRefused) {
  expect_refused(write_file(scratch_ / "garbage", {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd', '\n'}),
                 "not a gpumemtrace trace");
}

TEST_F(NotATrace, AnEmptyFileIsRefused) {
  expect_refused(write_file(scratch_ / "empty", {}), "not a gpumemtrace trace (the file is empty)");
}

TEST_F(NotATrace, AFileCutInsideTheHeaderIsRefused) {
  std::vector<uint8_t> bytes = TraceBuilder().bytes();
  bytes.resize(10);
  expect_refused(write_file(scratch_ / "cut", bytes), "the trace header is incomplete (10 of 16 bytes)");
}

TEST_F(NotATrace, AnotherFormatVersionIsRefused) {
  expect_refused(write_file(scratch_ / "v99", TraceBuilder(99).bytes()),
                 "trace format version 99 is not supported (this build reads versions 1 and 2)");
}

TEST_F(NotATrace, ACorruptTraceIsRefusedWithWhereItIsDamaged) {
  TraceBuilder b;
  b.thread_new(1, 7, "main").token(0x3F);
  expect_refused(write_file(scratch_ / "corrupt", b.bytes()), "corrupt trace at byte offset 24: unknown token 0x3f");
}

TEST_F(NotATrace, AMissingFileIsRefused) {
  ProcessResult r = run_gpumemtrace({"summary", scratch_ / "missing.trace"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("gpumemtrace: " + (scratch_ / "missing.trace") + ": ", 0), 0u) << r.err;
}

class KnownTraceText : public testing::Test {
 protected:
  static void SetUpTestSuite() { run_ = new TracedRun(run_traced("report_prog_known")); }
  static void TearDownTestSuite() { delete run_; }
  static TracedRun* run_;
};
TracedRun* KnownTraceText::run_ = nullptr;

TEST_F(KnownTraceText, SummaryTellsThePeakTheLeaksAndTheGrowth) {
  ProcessResult r = run_gpumemtrace({"summary", run_->trace});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // 36 of the program's, the device's state at the start and the end (the simulated NVML's) and its context.
  EXPECT_NE(r.out.find("\ncomplete: 39 events over "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  device 0           peak 34.0 MiB at "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(13 live); at exit 14.0 MiB in 11 allocations; 22 allocations, 11 frees, 0 failed\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("    16.0 MiB  47.1%      1×  alloc_scratch (known_workload.cpp:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("leaks (live when the process exited): 14.1 MiB in 12 allocations\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("    64.0 KiB      1×  managed memory"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  +10.0 MiB   rose in "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("device 0: alloc_history (known_workload.cpp:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("out of memory: never\n"), std::string::npos) << r.out;
}

TEST_F(KnownTraceText, FormatChoosesTheOutputAndJsonIsItsAlias) {
  for (const std::string& name : kReports) {
    ProcessResult text = run_gpumemtrace({name, "--format=text", run_->trace});
    ASSERT_EQ(text.exit_code, 0) << name << text.err;
    EXPECT_EQ(text.out, run_gpumemtrace({name, run_->trace}).out) << name;
    ProcessResult json = run_gpumemtrace({name, "--format", "json", run_->trace});
    ASSERT_EQ(json.exit_code, 0) << name << json.err;
    EXPECT_TRUE(json.out.starts_with("{\"trace\":{")) << name << json.out;
    EXPECT_EQ(json.out, run_gpumemtrace({name, "--json", run_->trace}).out) << name;
  }
}

TEST_F(KnownTraceText, OutputThatCannotBeWrittenIsASystemError) {
  for (std::string command : {"summary", "dump"}) {
    ProcessResult r = run_process(
        {"/bin/sh", "-c", "exec \"$0\" \"$1\" \"$2\" > /dev/full", analyzer_path(), command, run_->trace});
    EXPECT_EQ(r.exit_code, 3) << command;
    EXPECT_EQ(r.err, "gpumemtrace " + command + ": cannot write the output: No space left on device\n");
  }
}

TEST_F(KnownTraceText, TimelineDrawsEachDeviceInTheGivenWidth) {
  ProcessResult r = run_gpumemtrace({"timeline", "--width", "60", run_->trace});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("device 0: peak 34.0 MiB at "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  34.0 MiB ┤"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("█"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("managed memory: peak 64.0 KiB"), std::string::npos) << r.out;
  std::string axis = "└" + [] { std::string s; for (int i = 0; i < 48; ++i) s += "─"; return s; }() + "\n";
  EXPECT_NE(r.out.find(axis), std::string::npos) << r.out;
}

TEST_F(KnownTraceText, DeviceFilterLeavesOtherMemoryOut) {
  ProcessResult r = run_gpumemtrace({"leaks", "--device", "1", run_->trace});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nno leaks: nothing was live when the process exited on device 1\n"), std::string::npos) << r.out;
}

TEST(KilledTraceText, SaysTheTraceIsIncompleteAndListsNoLeaks) {
  TracedRun run = run_traced("capture_prog_killed", {"10"});
  ProcessResult r = run_gpumemtrace({"summary", run.trace});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nINCOMPLETE: the trace stops at "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("live when the trace stops (not necessarily leaks: the trace is incomplete): 40.0 KiB in 10 "
                       "allocations\n"),
            std::string::npos)
      << r.out;
  ProcessResult json = run_gpumemtrace({"summary", "--json", run.trace});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  // 10 allocations, the device's state at the start (the end never came) and its context.
  EXPECT_NE(json.out.find(R"("complete":false,"events":12})"), std::string::npos) << json.out;
  EXPECT_NE(json.out.find(R"("final_bytes":41005,"allocations":10,"frees":0,"leaked_allocations":0,)"),
            std::string::npos)
      << json.out;
  EXPECT_NE(json.out.find(R"("leaks":[],)"), std::string::npos) << json.out;
}

}  // namespace
}  // namespace gpumemtrace::test
