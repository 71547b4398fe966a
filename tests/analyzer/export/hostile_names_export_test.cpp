// The exports of a trace whose names are not UTF-8 and start like spreadsheet formulas
// (tests/analyzer/hostile_names.h): CSV neutralizes the formulas as OWASP recommends and leaves numbers be;
// CSV, pprof and the memory-viz pickle hold valid UTF-8, the broken bytes replaced by U+FFFD as the JSON
// writer replaces them.
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "analyzer/pytorch/pickle_reader.h"
#include "tests/analyzer/hostile_names.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_files.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {

class HostileNamesExport : public testing::Test {
 protected:
  void SetUp() override { trace_ = write_file(scratch_ / "hostile.trace", hostile::trace().bytes()); }
  std::string export_to(const std::string& format, const std::string& name) {
    std::string path = scratch_ / name;
    ProcessResult r = run_gpumemtrace({"export", "--format", format, "-o", path, trace_});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    stderr_ = r.err;
    return path;
  }
  ScratchDir scratch_;
  std::string trace_;
  std::string stderr_;
};

// The stack table's rows without their stack ids.
std::set<std::string> frame_rows(const std::string& csv) {
  std::set<std::string> rows;
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);  // the header
  while (std::getline(lines, line)) rows.insert(line.substr(line.find(',') + 1));
  return rows;
}

TEST_F(HostileNamesExport, CsvNeutralizesFormulasAndIsUtf8) {
  std::string rows = read_file(export_to("csv", "hostile.csv"));
  std::string stacks = read_file(scratch_ / "hostile.stacks.csv");
  EXPECT_TRUE(is_valid_utf8(rows));
  EXPECT_TRUE(is_valid_utf8(stacks)) << stacks;
  EXPECT_EQ(frame_rows(stacks),
            std::set<std::string>({
                "0,\"'@SUM(1+1)\xEF\xBF\xBD\",\"'=HYPERLINK(\"\"evil\"\",\"\"y\"\")\x1b[31m.py\",12,,,python",
                "0,\"'-2+3\x7f\xEF\xBF\xBD\xEF\xBF\xBD\",-1.5,5,,0x0,native",  // -1.5 is a number
                "0,,,,/nonexistent/+lib\x1b[2J\xEF\xBF\xBD.so,0x1000,native",
            }))
      << stacks;
  EXPECT_NE(rows.find("\n2000,0,device,cudaMalloc,1048576,0x10000000,,"), std::string::npos) << rows;
}

// Go's pprof reads the profile; its names are UTF-8 (protobuf strings must be), and protobuf did not
// complain while writing it.
TEST_F(HostileNamesExport, PprofNamesAreUtf8) {
  std::string profile = export_to("pprof", "hostile.pb.gz");
  EXPECT_EQ(stderr_.find("UTF-8"), std::string::npos) << stderr_;  // protobuf's complaint while serializing
  if (!file_exists("/usr/bin/go")) GTEST_SKIP() << "go is not installed (Debian golang-go): the profile is not read back";
  ProcessResult r = run_process({"/usr/bin/go", "tool", "pprof", "-top", "-unit=B", profile},
                                {{"HOME", scratch_.path()}, {"PPROF_TMPDIR", scratch_.path()}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(is_valid_utf8(r.out)) << r.out;
  EXPECT_NE(r.out.find("@SUM(1+1)\xEF\xBF\xBD"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("-2+3\x7f\xEF\xBF\xBD\xEF\xBF\xBD"), std::string::npos) << r.out;
}

// The memory-viz pickle read by the project's own pickle reader: every string UTF-8, the names with U+FFFD.
TEST_F(HostileNamesExport, MemoryVizStringsAreUtf8) {
  std::string bytes = read_file(export_to("memory-viz", "hostile.pickle"));
  pytorch::Pickle pickle(std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  size_t strings = 0, replaced = 0;
  for (pytorch::Pickle::Id id = 0; id < pickle.size(); ++id) {
    if (pickle[id].kind != pytorch::PickleKind::Str) continue;
    std::string_view text = pickle.text(pickle[id]);
    ++strings;
    EXPECT_TRUE(is_valid_utf8(text)) << text;
    if (text == "@SUM(1+1)\xEF\xBF\xBD" || text == "-2+3\x7f\xEF\xBF\xBD\xEF\xBF\xBD") ++replaced;
  }
  EXPECT_GT(strings, 10u);
  EXPECT_GE(replaced, 2u);
}

}  // namespace
}  // namespace gpumemtrace::test
