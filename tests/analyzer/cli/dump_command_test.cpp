// `gpumemtrace dump`: readable and JSON output, the completeness line, and exit codes for bad input.
#include <gtest/gtest.h>

#include <sstream>

#include "tests/support/decode_helpers.h"
#include "tests/support/temp_files.h"
#include "tests/support/subprocess.h"

namespace gpumemtrace::test {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class DumpCommand : public testing::Test {
 protected:
  ScratchDir scratch_;
  std::string dir_ = scratch_.path();
  std::string file(const std::string& name, const std::vector<uint8_t>& bytes) {
    return write_file(scratch_ / name, bytes);
  }
};

TEST_F(DumpCommand, PrintsEveryRecordReadably) {
  std::string path = file("every.trace", every_record_trace().bytes());
  ProcessResult r = run_gpumemtrace({"dump", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 40u);
  EXPECT_EQ(lines[0],
            "   0.000000000 -    process pid=4242 ppid=1 start=2023-11-14T22:13:20.123456789Z max_stack_depth=64 "
            "rank=3 hostname=\"node7\" executable=\"/usr/bin/python3\" argv=[\"python3\", \"train.py\", \"-v\"]");
  EXPECT_EQ(lines[2],
            "   0.000000000 -    module base=0x400000 low=0x400000 high=0x480000 path=\"/usr/bin/python3\" "
            "build_id=1234ab");
  EXPECT_EQ(lines[8],
            "   0.000001000 T1   alloc api=cudaMalloc kind=device device=0 address=0x7f1000000000 "
            "size=1.00 MiB (1048576 B) stack=2");
  EXPECT_EQ(lines[10],
            "   0.000001010 T2   alloc api=cudaMallocAsync kind=async-pool device=1 address=0x7f1000200000 "
            "size=4.00 KiB (4096 B) stack=3 stream=0x5000");
  EXPECT_EQ(lines[12],
            "   0.000001025 T2   alloc api=cuMemHostAlloc kind=host-pinned device=none address=0x7e0000000000 "
            "size=3.00 MiB (3145728 B) stack=1");
  EXPECT_EQ(lines[16],
            "   0.000001053 T1   alloc-failed api=cudaMalloc kind=device device=0 size=80.0 GiB (85899345920 B) "
            "stack=2 error=CUDA_ERROR_OUT_OF_MEMORY (2) device_free=1.00 GiB (1073741824 B) "
            "device_total=16.0 GiB (17179869184 B)");
  EXPECT_EQ(lines[17],
            "   0.000001054 T1   alloc-failed api=cuMemAlloc kind=device device=0 size=12 B stack=0 "
            "error=CUDA_ERROR_INVALID_VALUE (1)");
  EXPECT_EQ(lines[36].substr(lines[36].find("context")),
            "context device=1 primary=1 uuid=\"GPU-4d1b6a70\" free_before=256 MiB (268435456 B) "
            "free_after=224 MiB (234881024 B) total=1.00 GiB (1073741824 B)");
  EXPECT_EQ(lines[37].substr(lines[37].find("placement")),
            "placement local_rank=1 visible_devices_set=1 visible_devices=\"0,1\"");
  EXPECT_EQ(lines.back(), "# complete trace: 39 records, 21 events");
}

TEST_F(DumpCommand, TruncatedTraceSaysWhereItStops) {
  std::vector<uint8_t> bytes = every_record_trace().bytes();
  bytes.resize(bytes.size() - 2);  // inside End
  Decoded d = decode_all(bytes);
  std::string path = file("cut.trace", bytes);
  ProcessResult r = run_gpumemtrace({"dump", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out).back(), "# truncated trace: the written data stops at byte offset " +
                                        std::to_string(d.reader->stop_offset()) + " of " +
                                        std::to_string(bytes.size()) +
                                        " (the process was killed or is still running): 38 records, "
                                        "21 events");
}

TEST_F(DumpCommand, JsonPrintsOneObjectPerRecord) {
  std::string path = file("every.trace", every_record_trace().bytes());
  ProcessResult r = run_gpumemtrace({"dump", "--json", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 40u);
  for (const std::string& line : lines) EXPECT_TRUE(line.starts_with("{\"") && line.ends_with("}")) << line;
  EXPECT_EQ(lines[0],
            "{\"file_offset\":16,\"time_ns\":0,\"thread\":0,\"record\":\"process\",\"pid\":4242,\"ppid\":1,"
            "\"start_ns\":1700000000123456789,\"max_stack_depth\":64,\"rank\":3,\"hostname\":\"node7\","
            "\"executable\":\"/usr/bin/python3\",\"argv\":[\"python3\",\"train.py\",\"-v\"]}");
  EXPECT_NE(
      lines[8].find("\"time_ns\":1000,\"thread\":1,\"record\":\"alloc\",\"api\":\"cudaMalloc\",\"kind\":\"device\","
                    "\"device\":0,\"address\":\"0x7f1000000000\",\"size\":1048576,\"stack\":2}"),
      std::string::npos)
      << lines[8];
  EXPECT_NE(lines[12].find("\"device\":null"), std::string::npos) << lines[12];
  EXPECT_EQ(lines[19],
            "{\"file_offset\":320,\"time_ns\":1059,\"thread\":1,\"record\":\"mem-map\",\"address\":\"0x7f2000000000\","
            "\"size\":2097152,\"handle\":\"0x7\",\"offset\":0}");
  EXPECT_NE(lines[16].find("\"error\":2,\"error_name\":\"CUDA_ERROR_OUT_OF_MEMORY\",\"device_free\":1073741824"),
            std::string::npos)
      << lines[16];
  EXPECT_EQ(lines.back(), "{\"status\":\"complete\",\"stop_offset\":" + std::to_string(every_record_trace().size()) +
                              ",\"file_size\":" + std::to_string(every_record_trace().size()) +
                              ",\"records\":39,\"events\":21}");
}

TEST_F(DumpCommand, JsonEscapesStrings) {
  TraceBuilder b;
  b.thread_new(1, 5, "a\"b\\c\n\x01\xff");
  ProcessResult r = run_gpumemtrace({"dump", "--json", file("names.trace", b.bytes())});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"name\":\"a\\\"b\\\\c\\n\\u0001\\ufffd\"}"), std::string::npos) << r.out;
}

TEST_F(DumpCommand, ForeignAndBadFilesExitTwoWithTheReason) {
  struct Case {
    std::vector<uint8_t> bytes;
    std::string message;
  };
  TraceBuilder corrupt;
  corrupt.fork(1).token(0x3f);
  std::vector<Case> cases = {
      {{}, "not a gpumemtrace trace (the file is empty)"},
      {{'#', '!', '/', 'b', 'i', 'n', '/', 's', 'h', '\n', 'e', 'x', 'i', 't', '\n', '\n'}, "not a gpumemtrace trace"},
      {TraceBuilder(3).bytes(), "trace format version 3 is not supported (this build reads versions 1 and 2)"},
      {TraceBuilder(2).bytes(), "corrupt packed trace: its directory of streams is damaged"},
      {corrupt.bytes(), "corrupt trace at byte offset 18: unknown token 0x3f"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string path = file("bad" + std::to_string(i), cases[i].bytes);
    for (std::string json : {"", "--json"}) {
      std::vector<std::string> args = {"dump", path};
      if (!json.empty()) args.insert(args.begin() + 1, json);
      ProcessResult r = run_gpumemtrace(args);
      EXPECT_EQ(r.exit_code, 2) << path;
      EXPECT_EQ(r.err, "gpumemtrace: " + path + ": " + cases[i].message + "\n");
    }
  }
  ProcessResult missing = run_gpumemtrace({"dump", dir_ + "/missing.trace"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err, "gpumemtrace: " + dir_ + "/missing.trace: cannot open: No such file or directory\n");
  ProcessResult directory = run_gpumemtrace({"dump", dir_});
  EXPECT_EQ(directory.exit_code, 2);
  EXPECT_EQ(directory.err, "gpumemtrace: " + dir_ + ": is a directory\n");
}

TEST_F(DumpCommand, CorruptTraceStillPrintsTheRecordsBeforeTheDamage) {
  TraceBuilder b;
  b.fork(9).token(0x3f);
  ProcessResult r = run_gpumemtrace({"dump", "--json", file("corrupt.trace", b.bytes())});
  EXPECT_EQ(r.exit_code, 2);
  std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("\"record\":\"fork\",\"child_pid\":9"), std::string::npos);
  EXPECT_EQ(lines[1],
            "{\"status\":\"corrupt\",\"stop_offset\":18,\"file_size\":19,\"records\":1,\"events\":0,"
            "\"error\":\"corrupt trace at byte offset 18: unknown token 0x3f\"}");
}

TEST_F(DumpCommand, UsageErrorsExitOne) {
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"dump"}, {"dump", "a", "b"}, {"dump", "--bogus", "a"}, {"frobnicate"}, {}}) {
    ProcessResult r = run_gpumemtrace(args);
    EXPECT_EQ(r.exit_code, 1) << testing::PrintToString(args);
    EXPECT_NE(r.err, "");
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
  }
  ProcessResult unknown = run_gpumemtrace({"dump", "--bogus", "x"});
  EXPECT_EQ(unknown.err, "gpumemtrace dump: unknown option '--bogus' (see gpumemtrace dump --help)\n");
}

TEST_F(DumpCommand, HelpForTheToolAndTheCommand) {
  ProcessResult tool = run_gpumemtrace({"--help"});
  EXPECT_EQ(tool.exit_code, 0);
  EXPECT_NE(tool.out.find("  dump "), std::string::npos);
  EXPECT_NE(tool.out.find("  run "), std::string::npos);
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"dump", "--help"}, {"dump", "-h"}, {"help", "dump"}, {"dump", "x", "--help"}}) {
    ProcessResult r = run_gpumemtrace(args);
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_TRUE(r.out.starts_with("usage: gpumemtrace dump [--json] TRACE\n")) << r.out;
  }
}

}  // namespace
}  // namespace gpumemtrace::test
