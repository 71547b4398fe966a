// Names from a trace reach the terminal escaped (common/terminal_text.h) in every text report, in dump, in
// the folded stacks, in check's text and in the warnings on stderr: a trace whose names hold escape
// sequences, newlines, C1 controls and bytes that are not UTF-8 (tests/analyzer/hostile_names.h) gives
// outputs without any of them raw, and with each name shown escaped.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/terminal_text.h"
#include "common/utf8.h"
#include "tests/analyzer/hostile_names.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_files.h"

namespace gpumemtrace::test {
namespace {

class TerminalEscape : public testing::Test {
 protected:
  void SetUp() override { trace_ = write_file(scratch_ / "hostile.trace", hostile::trace().bytes()); }

  // Runs gpumemtrace; stdout and stderr have nothing raw that a terminal would act on.
  std::string run(std::vector<std::string> args, int exit_code = 0) {
    ProcessResult r = run_gpumemtrace(args);
    std::string command = args.front();
    EXPECT_EQ(r.exit_code, exit_code) << command << ": " << r.err;
    EXPECT_EQ(hostile::raw_control(r.out), "") << command << " stdout";
    EXPECT_EQ(hostile::raw_control(r.err), "") << command << " stderr";
    err_ = r.err;
    return r.out;
  }

  ScratchDir scratch_;
  std::string trace_;
  std::string err_;
};

bool has(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

TEST_F(TerminalEscape, TheSharedFunctionShowsControlsAndBrokenBytesEscaped) {
  EXPECT_EQ(terminal_text(hostile::kPhase), "step\\x1b]0;owned\\x07\\n\\u009b\\xffend");
  EXPECT_EQ(terminal_text("a\tb\rc\x7f\xc0\xaf"), "a\\tb\\rc\\x7f\\xc0\\xaf");
  EXPECT_EQ(terminal_text("D:\\work\\model.py µs ▁█ 日本"), "D:\\work\\model.py µs ▁█ 日本");  // UTF-8 stays
  EXPECT_EQ(quoted_terminal_text("say \"hi\\\"\n"), "\"say \\\"hi\\\\\\\"\\n\"");
  EXPECT_EQ(terminal_text("\xe2\x82"), "\\xe2\\x82");  // a sequence cut short
}

TEST_F(TerminalEscape, EveryTextReportShowsTheNamesEscaped) {
  std::string phase = terminal_text(hostile::kPhase), heap = terminal_text(hostile::kHeap);
  std::string python = terminal_text(hostile::kPythonFunction);
  for (const char* command : {"summary", "peak", "leaks", "growth", "oom", "fragmentation", "phases", "timeline"}) {
    std::string out = run({command, trace_});
    EXPECT_TRUE(has(out, "(pid 7: " + terminal_text(hostile::kCommand) + " --lr=\\xff)")) << command << "\n" << out;
    EXPECT_TRUE(has(err_, "gpumemtrace: warning: " + terminal_text(scratch_ / std::string(hostile::kSnapshot)) +
                              ": no such file"))
        << command << err_;
  }
  run({"summary", trace_});
  EXPECT_TRUE(has(err_, "gpumemtrace: warning: cannot read " + terminal_text(hostile::kModule))) << err_;
  std::string domain_and_phase = terminal_text(std::string(hostile::kDomain) + "::") + phase;
  EXPECT_TRUE(has(run({"phases", trace_}), "  " + domain_and_phase + " (4 instances)\n"));
  EXPECT_TRUE(has(run({"growth", trace_}), "(the 4 instances of phase " + domain_and_phase + ", in 4 windows)"));
  EXPECT_TRUE(has(run({"fragmentation", trace_}), "heap 1 \"" + heap + "\""));
  std::string leaks = run({"leaks", trace_});
  EXPECT_TRUE(has(leaks, "in " + python)) << leaks;
  EXPECT_TRUE(has(run({"oom", trace_}), python));
  EXPECT_TRUE(has(run({"peak", trace_}), terminal_text("-2+3\x7f\xc0\xaf")));
}

TEST_F(TerminalEscape, DumpFoldedAndCheckShowTheNamesEscaped) {
  std::string dump = run({"dump", trace_});
  EXPECT_TRUE(has(dump, "name=" + quoted_terminal_text(hostile::kPhase))) << dump;
  EXPECT_TRUE(has(dump, "argv=[" + quoted_terminal_text(hostile::kCommand) + ", \"--lr=\\xff\"]")) << dump;

  std::string python_frame = terminal_text(std::string(hostile::kPythonFile) + ":12 in " +
                                            std::string(hostile::kPythonFunction));
  std::string folded = scratch_ / "hostile.folded";
  run({"export", "--format", "folded", "-o", folded, trace_});
  EXPECT_EQ(hostile::raw_control(read_file(folded)), "");
  EXPECT_TRUE(has(read_file(folded), "device 0;" + python_frame + " 4194304\n")) << read_file(folded);
  EXPECT_TRUE(has(run({"peak", "--format", "folded", trace_}), "device 0;" + python_frame + " 4194304\n"));

  // check and diff name the stacks that grew: a baseline of the trace, then the trace with 1 MiB more.
  std::string baseline = scratch_ / "base.json", grown = write_file(scratch_ / "grown.trace", hostile::trace(true).bytes());
  run({"baseline", "-o", baseline, trace_});
  // A stack is named as a baseline stores it (JSON: not UTF-8 made U+FFFD), so it matches its own baseline.
  std::string stack =
      terminal_text(valid_utf8(std::string(hostile::kPythonFunction) + " (" + std::string(hostile::kPythonFile) + ")"));
  std::string check = run({"check", "--baseline", baseline, grown}, 1);
  EXPECT_TRUE(has(check, "+1.00 MiB (+1048576 B)  " + stack + "\n")) << check;
  std::string diff = run({"diff", trace_, grown});
  EXPECT_TRUE(has(diff, "    +1.00 MiB (+1048576 B)  " + stack + "\n")) << diff;
}

// A directory of traces: the table, the notes and the report of a rank name the files, escaped.
TEST_F(TerminalEscape, RankReportsShowTheFileNamesEscaped) {
  std::string dir = scratch_ / "ranks";
  std::filesystem::create_directory(dir);
  write_file(dir + "/rank\x1b[2J.trace", hostile::trace().bytes());
  write_file(dir + "/bad\x1b]0;x\x07.trace", TraceBuilder().token(0xEE).bytes());
  std::string out = run({"summary", dir});
  EXPECT_TRUE(has(out, "unreadable, left out: " + terminal_text(dir + "/bad\x1b]0;x\x07.trace"))) << out;
}

}  // namespace
}  // namespace gpumemtrace::test
