// `gpumemtrace pack`: the packed trace reads as the plain one in every command; what cannot be packed, and a
// damaged packed trace, exit 2 with the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "tests/support/decode_helpers.h"
#include "tests/support/subprocess.h"
#include "tests/support/packed_damage.h"
#include "tests/support/temp_files.h"

namespace gpumemtrace::test {
namespace {

TEST(PackCommand, PackedTraceDumpsAndSummarizesAsThePlainOne) {
  ScratchDir dir;
  std::string path = write_file(dir / "every.trace", every_record_trace().bytes());
  ProcessResult dump = run_gpumemtrace({"dump", "--json", path});
  ProcessResult summary = run_gpumemtrace({"summary", "--json", path});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  ASSERT_EQ(summary.exit_code, 0) << summary.err;

  ProcessResult pack = run_gpumemtrace({"pack", path});
  ASSERT_EQ(pack.exit_code, 0) << pack.err;
  EXPECT_EQ(pack.out.rfind(path + ": " + std::to_string(every_record_trace().size()) + " B packed into ", 0), 0u)
      << pack.out;
  EXPECT_NE(pack.out.find(" bytes per event (21 events)\n"), std::string::npos) << pack.out;
  EXPECT_FALSE(std::filesystem::exists(path + ".packing"));

  ProcessResult packed_dump = run_gpumemtrace({"dump", "--json", path});
  EXPECT_EQ(packed_dump.exit_code, 0) << packed_dump.err;
  EXPECT_EQ(packed_dump.out, dump.out);
  ProcessResult packed_summary = run_gpumemtrace({"summary", "--json", path});
  EXPECT_EQ(packed_summary.exit_code, 0) << packed_summary.err;
  EXPECT_EQ(packed_summary.out, summary.out);

  ProcessResult again = run_gpumemtrace({"pack", path});
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_EQ(again.err, "gpumemtrace: " + path + ": the trace is packed already\n");
}

// tests/data/traces/README.md: the first commit's traces are read, rewritten in today's layout, not packed.
TEST(PackCommand, TraceOfTheFirstLayoutStaysAsItIs) {
  ScratchDir dir;
  std::string path = dir / "first.trace";
  std::filesystem::copy_file(test_data_dir() + "/traces/67be820-train_loop.trace", path);
  std::string before = read_file(path);
  ProcessResult pack = run_gpumemtrace({"pack", path});
  EXPECT_EQ(pack.exit_code, 2);
  EXPECT_EQ(pack.err, "gpumemtrace: " + path +
                          ": the trace is of the first builds' layout (before 2026-11-22 03:44 UTC): every command reads "
                          "it, but it is not packed\n");
  EXPECT_EQ(read_file(path), before);
  EXPECT_FALSE(std::filesystem::exists(path + ".packing"));
}

TEST(PackCommand, DamagedPackedTraceExitsTwoAsCorrupt) {
  ScratchDir dir;
  std::string path = write_file(dir / "cut.trace", every_record_trace().bytes());
  ASSERT_EQ(run_gpumemtrace({"pack", path}).exit_code, 0);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 1);
  for (std::string command : {"dump", "summary"}) {
    ProcessResult r = run_gpumemtrace({command, path});
    EXPECT_EQ(r.exit_code, 2) << command;
    EXPECT_EQ(r.err, "gpumemtrace: " + path + ": corrupt packed trace: stream others runs past the end of the file\n")
        << command;
  }
}

// Damage inside a stream is found while the first reading already reads (the trace is unpacked on another
// thread): the commands still exit 2 with the reason, and print no report.
TEST(PackCommand, DamageFoundWhileReadingExitsTwoAsCorrupt) {
  ScratchDir dir;
  std::string path = write_file(dir / "damaged.trace", mixed_workload_trace(300000).bytes());
  ASSERT_EQ(run_gpumemtrace({"pack", "--level", "1", path}).exit_code, 0);
  damage_free_low_stream(path);
  for (std::string command : {"summary", "peak"}) {
    ProcessResult r = run_gpumemtrace({command, path});
    EXPECT_EQ(r.exit_code, 2) << command;
    EXPECT_EQ(r.err.rfind("gpumemtrace: " + path + ": corrupt packed trace: free-low: ", 0), 0u) << command << r.err;
    EXPECT_EQ(r.out, "") << command;
  }
  // dump prints as the trace is unpacked: the records before the damage, then the error, as for a corrupt
  // plain trace; its JSON lines end with the status.
  ProcessResult text = run_gpumemtrace({"dump", path});
  EXPECT_EQ(text.exit_code, 2);
  EXPECT_EQ(text.err.rfind("gpumemtrace: " + path + ": corrupt packed trace: free-low: ", 0), 0u) << text.err;
  EXPECT_GT(std::count(text.out.begin(), text.out.end(), '\n'), 10000);
  EXPECT_EQ(text.out.find("# complete trace"), std::string::npos);
  ProcessResult json = run_gpumemtrace({"dump", "--json", path});
  EXPECT_EQ(json.exit_code, 2);
  std::string last = json.out.substr(json.out.rfind('\n', json.out.size() - 2) + 1);
  EXPECT_EQ(last.rfind("{\"status\":\"corrupt\",", 0), 0u) << last;
  EXPECT_NE(last.find("\"error\":\"corrupt packed trace: free-low: "), std::string::npos) << last;
}

// Where the unpacked copy cannot be written (a full disk or, here, the file size limit of `ulimit -f`), the
// report stops with the reason and exits 2: no report from part of the trace.
TEST(PackCommand, AnUnpackedCopyThatCannotBeWrittenExitsTwoWithTheReason) {
  ScratchDir dir;
  std::string path = write_file(dir / "long.trace", mixed_workload_trace(300000).bytes());
  ASSERT_EQ(run_gpumemtrace({"pack", "--level", "1", path}).exit_code, 0);
  // 1 MiB: the first pieces fit, the trace (2.5 MB unpacked) does not. SIGXFSZ ignored, as a write then fails.
  ProcessResult r = run_process({"/bin/sh", "-c", "trap '' XFSZ; ulimit -f 1024; exec \"$0\" summary \"$1\"",
                                 analyzer_path(), path});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "gpumemtrace: " + path + ": cannot unpack the packed trace: writing the unpacked trace: File too large\n");
  EXPECT_EQ(r.out, "");
}

TEST(PackCommand, CorruptPlainTraceIsNotPacked) {
  ScratchDir dir;
  TraceBuilder corrupt;
  corrupt.fork(1).token(0x3f);
  std::string path = write_file(dir / "corrupt.trace", corrupt.bytes());
  ProcessResult r = run_gpumemtrace({"pack", path});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpumemtrace: " + path + ": corrupt trace at byte offset 18: unknown token 0x3f\n");
  EXPECT_FALSE(std::filesystem::exists(path + ".packing"));
}

}  // namespace
}  // namespace gpumemtrace::test
