// summary, peak, leaks and oom of a directory of rank traces: the per-rank table with the imbalance, the
// rank that ran out of memory first by the wall clock and what other processes held on its device then,
// the report of the rank that stands out; damaged traces reported and left out. The traces are
// programs/budget_workload.cpp run under the tracer on the simulated device, with known figures.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "common/size_units.h"
#include "tests/analyzer/budget_runs.h"
#include "tests/support/temp_files.h"
#include "tests/support/trace_builder.h"

namespace gpumemtrace::test {
namespace {


// The text with what changes from run to run made constant: times become T, a table row's pid PID, and
// runs of spaces one space (the columns' alignment moves with the widths of those).
std::string masked(const std::string& text) {
  std::string out = std::regex_replace(text, std::regex(R"(\d+ µs|\d+\.\d{3} m?s)"), "T");
  out = std::regex_replace(out, std::regex(" +"), " ");
  out = std::regex_replace(out, std::regex(R"((^|\n)(rank \d+) \d+ )"), "$1$2 PID ");
  return std::regex_replace(out, std::regex(R"(\(pid \d+:)"), "(pid PID:");
}

// Four ranks on 1 GiB devices: rank 2 holds 48 MiB more at its peak; ranks 1 and 3 run out of memory, rank 3
// beside other processes that hold 256 MiB of its device. Rank 3 is traced first, so it fails first by
// the wall clock though rank 1 comes first in the table.
class RankReports : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir;
    struct Rank {
      int rank;
      std::vector<std::string> mib;
      std::string others;
    };
    for (const Rank& rank : {Rank{3, {"8", "4", "16", "1024"}, "256MiB"}, Rank{0, {"8", "4", "16"}, "0"},
                             Rank{1, {"8", "4", "16", "2048"}, "0"}, Rank{2, {"8", "4", "64"}, "0"}}) {
      std::string trace = workload_trace(rank.mib, {{"RANK", std::to_string(rank.rank)},
                                                    {"GPUMEMTRACE_SIM_MEMORY", "1GiB"},
                                                    {"GPUMEMTRACE_SIM_OTHERS_MEMORY", rank.others}});
      std::filesystem::copy_file(trace, *dir_ / ("mem-" + std::to_string(rank.rank) + ".trace"));
    }
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string dir() { return dir_->path(); }
  static ScratchDir* dir_;
};
ScratchDir* RankReports::dir_;

std::string table(const std::string& dir) {
  return dir +
         ": 4 traces (times since the first of them started)\n"
         "rank pid device peak peak at leaked OOMs first OOM others then\n"
         "rank 0 PID 0 28.0 MiB T 4.00 MiB 0 - -\n"
         "rank 1 PID 0 28.0 MiB T 4.00 MiB 1 T 0 B\n"
         "rank 2 PID 0 76.0 MiB T 4.00 MiB 0 - -\n"
         "rank 3 PID 0 28.0 MiB T 4.00 MiB 1 T 256 MiB\n"
         "rank 2 holds the most: peak 76.0 MiB, 2.71x the median peak of 28.0 MiB\n"
         // 1 GiB - 256 MiB of others - 12 MiB live = 756 MiB free.
         "rank 3 ran out of memory first, at T on device 0: it asked for 1.00 GiB with 756 MiB free of 1.00 GiB; "
         "it held 12.0 MiB, other processes 256 MiB\n";
}

TEST_F(RankReports, OomShowsTheTableThenTheRankThatFailedFirst) {
  ProcessResult r = run_gpumemtrace({"oom", dir()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::string text = masked(r.out);
  EXPECT_EQ(text.rfind(table(dir()) + "\n=== rank 3 (the first out of memory; --rank N shows another, --rank all every "
                                      "rank) ===\ntrace: " + dir() + "/mem-3.trace (pid PID:",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("\n device 0: 756 MiB free of 1.00 GiB\n this process held 12.0 MiB (12.0 MiB live in 2 "
                      "allocations, 0 B unused in its pools); other processes 256 MiB\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("=== rank 1"), std::string::npos) << "one rank in detail: " << text;
}

TEST_F(RankReports, EachCommandShowsTheRankThatStandsOutForIt) {
  auto detail = [&](const std::string& command, std::vector<std::string> options = {}) {
    std::vector<std::string> args = {command};
    args.insert(args.end(), options.begin(), options.end());
    args.push_back(dir());
    ProcessResult r = run_gpumemtrace(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.rfind(dir() + ": 4 traces", 0), 0u) << r.out;
    std::vector<std::string> shown;
    std::smatch match;
    std::string rest = r.out;
    while (std::regex_search(rest, match, std::regex("\n=== ([^\n]*) ===\n"))) {
      shown.push_back(match[1]);
      rest = match.suffix();
    }
    return shown;
  };
  using Shown = std::vector<std::string>;
  EXPECT_EQ(detail("peak"), Shown{"rank 2 (the largest peak; --rank N shows another, --rank all every rank)"});
  EXPECT_EQ(detail("summary"), Shown{"rank 3 (the first out of memory; --rank N shows another, --rank all every rank)"});
  // Every rank leaked its 4 MiB cache: the first of equals.
  EXPECT_EQ(detail("leaks"), Shown{"rank 0 (the most leaked; --rank N shows another, --rank all every rank)"});
  EXPECT_EQ(detail("peak", {"--rank", "1"}), Shown{"rank 1"});
  EXPECT_EQ(detail("leaks", {"--rank", "all"}), (Shown{"rank 0", "rank 1", "rank 2", "rank 3"}));

  ProcessResult r = run_gpumemtrace({"peak", "--rank", "9", dir()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "gpumemtrace peak: --rank 9: no trace of that rank in " + dir() +
                       " (ranks 0, 1, 2, 3) (see gpumemtrace peak --help)\n");
  EXPECT_EQ(r.out, "");
}

TEST_F(RankReports, JsonHasTheExactFiguresAndTheWallClockOrder) {
  ProcessResult r = run_gpumemtrace({"peak", "--json", dir()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["largest_rank"], "rank 2");
  EXPECT_EQ(json["median_peak_bytes"], 28 * kMiB);
  EXPECT_EQ(json["imbalance"], 2.7143);
  EXPECT_EQ(json["first_failed_rank"], "rank 3");
  EXPECT_EQ(json["unreadable"].size(), 0u);
  const nlohmann::json& ranks = json["ranks"];
  ASSERT_EQ(ranks.size(), 4u);
  uint64_t first_start = UINT64_MAX;
  for (int rank = 0; rank < 4; ++rank) {
    const nlohmann::json& row = ranks[rank];
    EXPECT_EQ(row["rank"], "rank " + std::to_string(rank));
    EXPECT_EQ(row["trace"], dir() + "/mem-" + std::to_string(rank) + ".trace");
    EXPECT_EQ(row["peak_bytes"], (rank == 2 ? 76 : 28) * kMiB);
    EXPECT_EQ(row["leaked_bytes"], 4 * kMiB);
    EXPECT_EQ(row["out_of_memory"], rank % 2);
    first_start = std::min(first_start, row["start_wall_ns"].get<uint64_t>());
  }
  EXPECT_EQ(json["start_wall_ns"], first_start);
  EXPECT_EQ(ranks[3]["start_wall_ns"], first_start) << "rank 3 was traced first";
  for (const nlohmann::json& row : ranks)
    EXPECT_EQ(row["peak_at_ns"], row["start_wall_ns"].get<uint64_t>() - first_start + row["peak_time_ns"].get<uint64_t>());

  const nlohmann::json& failed = ranks[3]["first_oom"];
  EXPECT_EQ(failed["device"], 0);
  EXPECT_EQ(failed["requested_bytes"], 1024 * kMiB);
  EXPECT_EQ(failed["total_bytes"], 1024 * kMiB);
  EXPECT_EQ(failed["free_bytes"], 756 * kMiB);
  EXPECT_EQ(failed["held_bytes"], 12 * kMiB);  // weights and cache: the activations were freed
  EXPECT_EQ(failed["others_bytes"], 256 * kMiB);
  const nlohmann::json& later = ranks[1]["first_oom"];
  EXPECT_EQ(later["free_bytes"], 1012 * kMiB);
  EXPECT_EQ(later["others_bytes"], 0u);
  EXPECT_LT(failed["at_ns"].get<uint64_t>(), later["at_ns"].get<uint64_t>());
  EXPECT_EQ(ranks[0]["first_oom"], nullptr);

  ASSERT_EQ(json["reports"].size(), 1u);
  const nlohmann::json& shown = json["reports"][0];
  EXPECT_EQ(shown["rank"], "rank 2");
  EXPECT_EQ(shown["picked"], "largest-peak");
  EXPECT_EQ(shown["report"]["trace"]["path"], dir() + "/mem-2.trace");
  EXPECT_EQ(shown["report"]["peak"][0]["bytes"], 64 * kMiB);
}

// `srun gpumemtrace run -o 'mem-%r.gmt' -- ...` as each rank runs it: one trace per rank, named by rank, read as one.
TEST(RankReportInputs, RunNamesEachRanksTraceAndTheDirectoryReadsThemAll) {
  ScratchDir dir;
  for (const char* rank : {"0", "1"}) {
    ProcessResult r = run_gpumemtrace({"run", "--sim", "-o", dir / "mem-%r.gmt", "--",
                                   bin_dir() + "/report_prog_budget", "8", "4", rank == std::string("1") ? "32" : "16"},
                                  {{"RANK", rank}, {"GPUMEMTRACE_OUTPUT", std::nullopt}});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_TRUE(std::filesystem::exists(dir / "mem-0.gmt"));
  EXPECT_TRUE(std::filesystem::exists(dir / "mem-1.gmt"));
  nlohmann::json json = nlohmann::json::parse(run_gpumemtrace({"peak", "--json", dir.path()}).out);
  ASSERT_EQ(json["ranks"].size(), 2u);
  EXPECT_EQ(json["ranks"][0]["trace"], dir / "mem-0.gmt");
  EXPECT_EQ(json["ranks"][1]["rank"], "rank 1");
  EXPECT_EQ(json["ranks"][1]["peak_bytes"], 44 * kMiB);
  EXPECT_EQ(json["largest_rank"], "rank 1");
}

TEST(RankReportInputs, ADirectoryWithoutATraceIsExit2) {
  ScratchDir empty;
  write_file(empty / "notes.txt", {'n', 'o'});
  ProcessResult r = run_gpumemtrace({"summary", empty.path()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpumemtrace: " + empty.path() + ": no gpumemtrace trace in this directory\n");
  EXPECT_EQ(r.out, "");
  // The commands that read one trace say so.
  r = run_gpumemtrace({"growth", empty.path()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpumemtrace: " + empty.path() +
                       ": a directory: give one trace (summary, peak, leaks and oom read a directory)\n");
}

TEST(RankReportInputs, DamagedTracesAreReportedAndTheOthersAnalyzed) {
  ScratchDir dir;
  std::filesystem::copy_file(workload_trace({"8", "4", "16"}, {{"RANK", "0"}}), dir / "mem-0.trace");
  // Rank 1 killed before its last record: readable, incomplete.
  std::string whole = read_file(workload_trace({"8", "4", "32"}, {{"RANK", "1"}}));
  write_file(dir / "mem-1.trace", std::vector<uint8_t>(whole.begin(), whole.end() - 1));
  // Rank 2 damaged after its first allocation.
  TraceBuilder corrupt;
  corrupt.process(4242, 1, 0, 64, 2, "host", "/bin/rank2", {"rank2"});
  corrupt.alloc(TraceBuilder::Api::cudaMalloc, 0, 0x1000, kMiB, 0, 10);
  size_t damage = corrupt.size();
  corrupt.token(0xff);
  write_file(dir / "mem-2.trace", corrupt.bytes());
  // Rank 3 cut inside its header.
  write_file(dir / "mem-3.trace", std::vector<uint8_t>(whole.begin(), whole.begin() + 12));

  ProcessResult r = run_gpumemtrace({"peak", dir.path()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string corrupt_reason = "corrupt trace at byte offset " + std::to_string(damage) + ": unknown token 0xff";
  std::string cut_reason = "the trace header is incomplete (12 of 16 bytes)";
  EXPECT_EQ(r.err, "gpumemtrace: " + (dir / "mem-2.trace") + ": " + corrupt_reason + "\n" + "gpumemtrace: " +
                       (dir / "mem-3.trace") + ": " + cut_reason + "\n");
  EXPECT_EQ(masked(r.out).rfind(
                dir.path() +
                    ": 2 traces (times since the first of them started)\n"
                    "rank pid device peak peak at leaked OOMs first OOM others then\n"
                    "rank 0 PID 0 28.0 MiB T 4.00 MiB 0 - -\n"
                    "rank 1 PID 0 44.0 MiB T 0 B 0 - -\n"
                    "rank 1 holds the most: peak 44.0 MiB, 1.57x the median peak of 28.0 MiB\n"
                    "no rank ran out of memory\n"
                    "note: rank 1 (" + (dir / "mem-1.trace") + ") did not end normally: its leaks are not known "
                    "(counted as 0)\n"
                    "unreadable, left out: " + (dir / "mem-2.trace") + ": " + corrupt_reason + "\n" +
                    "unreadable, left out: " + (dir / "mem-3.trace") + ": " + cut_reason + "\n\n=== rank 1 (the largest peak",
                0),
            0u)
      << r.out;

  nlohmann::json json = nlohmann::json::parse(run_gpumemtrace({"peak", "--json", dir.path()}).out);
  ASSERT_EQ(json["unreadable"].size(), 2u);
  EXPECT_EQ(json["unreadable"][0]["trace"], dir / "mem-2.trace");
  EXPECT_EQ(json["unreadable"][0]["error"], corrupt_reason);
  EXPECT_EQ(json["ranks"][1]["complete"], false);

  // Nothing readable: exit 2.
  ScratchDir broken;
  write_file(broken / "mem-2.trace", corrupt.bytes());
  r = run_gpumemtrace({"summary", broken.path()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpumemtrace: " + (broken / "mem-2.trace") + ": " + corrupt_reason + "\n" + "gpumemtrace: " +
                       broken.path() + ": no trace in this directory could be read\n");
}

}  // namespace
}  // namespace gpumemtrace::test
