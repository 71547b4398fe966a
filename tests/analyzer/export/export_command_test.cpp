// `gpumemtrace export` (docs/exports.md) on the known workload traced on the simulated device
// (programs/known_workload.cpp): each format read back, its figures against the reports' own, the
// selection options giving exact subsets, and the command line's errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/size_units.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_files.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {

using Json = nlohmann::json;

// Folded stacks: each line's stack and bytes.
std::map<std::string, uint64_t> folded_lines(const std::string& text) {
  std::map<std::string, uint64_t> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    size_t space = line.rfind(' ');
    EXPECT_NE(space, std::string::npos) << line;
    out[line.substr(0, space)] += std::stoull(line.substr(space + 1));
  }
  return out;
}

// The bytes under each root frame ("device 0", "managed memory", ...).
std::map<std::string, uint64_t> root_sums(const std::map<std::string, uint64_t>& lines) {
  std::map<std::string, uint64_t> out;
  for (const auto& [stack, bytes] : lines) out[stack.substr(0, stack.find(';'))] += bytes;
  return out;
}

// The bytes of the lines whose stack ends with `suffix`.
uint64_t bytes_ending(const std::map<std::string, uint64_t>& lines, const std::string& suffix) {
  uint64_t bytes = 0;
  for (const auto& [stack, b] : lines)
    if (stack.ends_with(suffix)) bytes += b;
  return bytes;
}

struct CsvRow {
  uint64_t time_ns;
  std::string device, kind, api;
  uint64_t size;
  std::string address, freed_ns, stack;
};

std::vector<std::string> split_simple(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

std::vector<CsvRow> csv_rows(const std::string& text) {
  std::istringstream lines(text);
  std::string header;
  std::getline(lines, header);
  EXPECT_EQ(header, "time_ns,device,kind,api,size,address,freed_ns,stack");
  std::vector<CsvRow> rows;
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> f = split_simple(line);
    EXPECT_EQ(f.size(), 8u) << line;
    if (f.size() != 8) continue;
    rows.push_back({std::stoull(f[0]), f[1], f[2], f[3], std::stoull(f[4]), f[5], f[6], f[7]});
  }
  return rows;
}

class ExportKnownWorkload : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    run_ = new TracedRun(run_traced("report_prog_known"));
    ASSERT_EQ(run_->result.exit_code, 0) << run_->result.err;
  }
  static void TearDownTestSuite() { delete run_; }

  // Runs export and returns what it wrote (the test fails when it did not exit 0).
  std::string export_to(const std::string& format, std::vector<std::string> extra = {}, const std::string& name = "out") {
    std::string path = scratch_ / name;
    std::vector<std::string> args = {"export", "--format", format, "-o", path};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(run_->trace);
    ProcessResult r = run_gpumemtrace(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "");
    return file_exists(path) ? read_file(path) : std::string();
  }
  Json report_json(const std::string& command) {
    ProcessResult r = run_gpumemtrace({command, "--json", run_->trace});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return Json::parse(r.out);
  }

  static TracedRun* run_;
  ScratchDir scratch_;
};
TracedRun* ExportKnownWorkload::run_ = nullptr;

TEST_F(ExportKnownWorkload, FoldedPeakSumsToThePeakOfEachMemory) {
  std::map<std::string, uint64_t> lines = folded_lines(export_to("folded"));
  Json peak = report_json("peak");
  std::map<std::string, uint64_t> sums = root_sums(lines);
  EXPECT_EQ(sums["device 0"], peak["devices"][0]["peak_bytes"].get<uint64_t>());
  EXPECT_EQ(sums["device 0"], 34 * kMiB);
  EXPECT_EQ(sums["managed memory"], peak["managed"]["peak_bytes"].get<uint64_t>());
  EXPECT_EQ(sums["pinned host memory"], peak["host_pinned"]["peak_bytes"].get<uint64_t>());
  EXPECT_EQ(sums.size(), 3u);
  // Root first, the allocating function last; the user's code only (no CUDA runtime frames).
  EXPECT_EQ(bytes_ending(lines, ";main;alloc_scratch"), 16 * kMiB);
  EXPECT_EQ(bytes_ending(lines, ";main;alloc_history"), 10 * kMiB);
  EXPECT_EQ(bytes_ending(lines, ";main;alloc_weights"), 8 * kMiB);
  for (const auto& [stack, bytes] : lines) EXPECT_EQ(stack.find("cudaMalloc"), std::string::npos) << stack;
}

TEST_F(ExportKnownWorkload, FoldedLeakedSumsToTheLeaksAndAllocatedToEverything) {
  std::map<std::string, uint64_t> leaked = root_sums(folded_lines(export_to("folded", {"--what", "leaked"})));
  Json leaks = report_json("leaks");
  EXPECT_EQ(leaked["device 0"], leaks["devices"][0]["final_bytes"].get<uint64_t>());
  EXPECT_EQ(leaked["device 0"], 14 * kMiB);
  EXPECT_EQ(leaked["managed memory"], 64u * 1024);
  EXPECT_EQ(leaked.count("pinned host memory"), 0u);
  std::map<std::string, uint64_t> allocated = root_sums(folded_lines(export_to("folded", {"--what", "allocated"})));
  EXPECT_EQ(allocated["device 0"], (8 + 10 * 16 + 10) * kMiB);
  EXPECT_EQ(allocated["pinned host memory"], 128u * 1024);
}

TEST_F(ExportKnownWorkload, FoldedAllFramesKeepsTheCudaRuntime) {
  std::map<std::string, uint64_t> lines = folded_lines(export_to("folded", {"--all-frames"}));
  EXPECT_EQ(bytes_ending(lines, ";main;alloc_scratch;cudaMalloc;sim_cudart::call_driver<…>"), 16 * kMiB);
}

TEST_F(ExportKnownWorkload, CsvHasOneRowPerAllocationAndAStackTable) {
  std::vector<CsvRow> rows = csv_rows(export_to("csv", {}, "allocations.csv"));
  ASSERT_EQ(rows.size(), 24u);  // 2 weights, 10 scratch, 10 history, managed, pinned
  size_t never_freed = std::count_if(rows.begin(), rows.end(), [](const CsvRow& r) { return r.freed_ns.empty(); });
  EXPECT_EQ(never_freed, 12u);  // a weight, the history, the managed memory
  uint64_t device_bytes = 0;
  for (const CsvRow& row : rows) {
    if (row.kind == "device") {
      EXPECT_EQ(row.device, "0");
      EXPECT_EQ(row.api, "cudaMalloc");
      device_bytes += row.size;
    }
    if (!row.freed_ns.empty()) {
      EXPECT_GE(std::stoull(row.freed_ns), row.time_ns);
    }
    EXPECT_EQ(row.address.rfind("0x", 0), 0u);
  }
  EXPECT_EQ(device_bytes, 178 * kMiB);
  auto pinned = std::find_if(rows.begin(), rows.end(), [](const CsvRow& r) { return r.kind == "host-pinned"; });
  ASSERT_NE(pinned, rows.end());
  EXPECT_EQ(pinned->device, "");
  EXPECT_EQ(pinned->api, "cudaMallocHost");

  std::string stacks = read_file(scratch_ / "allocations.stacks.csv");
  EXPECT_EQ(stacks.rfind("stack,depth,function,file,line,module,offset,kind\n", 0), 0u);
  auto scratch = std::find_if(rows.begin(), rows.end(), [](const CsvRow& r) { return r.size == 16 * kMiB; });
  ASSERT_NE(scratch, rows.end());
  bool found = false;
  std::istringstream lines(stacks);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(scratch->stack + ",", 0) == 0 && line.find(",alloc_scratch,") != std::string::npos &&
        line.find("known_workload.cpp") != std::string::npos)
      found = true;
  EXPECT_TRUE(found) << stacks;
}

TEST_F(ExportKnownWorkload, MinSizeAndTimeWindowsGiveExactSubsets) {
  std::vector<CsvRow> all = csv_rows(export_to("csv", {}, "all.csv"));
  std::vector<CsvRow> large = csv_rows(export_to("csv", {"--min-size", "2MiB"}, "large.csv"));
  EXPECT_EQ(large.size(), 12u);  // the weights and the scratch buffers
  for (const CsvRow& row : large) EXPECT_GE(row.size, 2 * kMiB);

  // The trace's clock has a granularity (format::kTimeGranularityNs): events close together share a time.
  // The window's ends go between two distinct times, around the 4th and the 13th allocation.
  std::vector<uint64_t> times;
  for (const CsvRow& row : all) times.push_back(row.time_ns);
  std::sort(times.begin(), times.end());
  auto between = [&](size_t i, bool before) {
    uint64_t t = times[i];
    auto other = before ? std::find_if(times.rbegin(), times.rend(), [&](uint64_t x) { return x < t; }).base()
                        : std::upper_bound(times.begin(), times.end(), t);
    uint64_t neighbour = before ? (other == times.begin() ? 0 : *(other - 1)) : (other == times.end() ? t + 2 : *other);
    return (t + neighbour) / 2;
  };
  uint64_t from = between(3, true), to = between(12, false);
  std::vector<CsvRow> window = csv_rows(export_to(
      "csv", {"--from", std::to_string(from), "--to", std::to_string(to) + "ns"}, "window.csv"));
  std::set<std::string> expected, got;
  for (const CsvRow& row : all)
    if (row.time_ns >= from && row.time_ns <= to)
      expected.insert(row.address + "@" + std::to_string(row.time_ns) + " " + std::to_string(row.size));
  for (const CsvRow& row : window) {
    got.insert(row.address + "@" + std::to_string(row.time_ns) + " " + std::to_string(row.size));
    if (!row.freed_ns.empty()) {
      EXPECT_LE(std::stoull(row.freed_ns), to);  // later frees are after the window
    }
  }
  EXPECT_EQ(got, expected);
  EXPECT_GE(got.size(), 10u);

  // The folded peak of the window is the peak of those allocations alone, as their rows give it.
  std::vector<std::pair<uint64_t, int64_t>> changes;
  for (const CsvRow& row : window) {
    if (row.kind != "device") continue;
    changes.emplace_back(row.time_ns, static_cast<int64_t>(row.size));
    if (!row.freed_ns.empty()) changes.emplace_back(std::stoull(row.freed_ns), -static_cast<int64_t>(row.size));
  }
  // At one time, this workload allocates before it frees (allocate scratch and history, free scratch).
  std::sort(changes.begin(), changes.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second > b.second;
  });
  int64_t live = 0, peak = 0;
  for (const auto& [time, delta] : changes) peak = std::max(peak, live += delta);
  std::map<std::string, uint64_t> folded = root_sums(folded_lines(export_to(
      "folded", {"--from", std::to_string(from), "--to", std::to_string(to)}, "window.folded")));
  EXPECT_EQ(folded["device 0"], static_cast<uint64_t>(peak));
  std::map<std::string, uint64_t> allocated = root_sums(folded_lines(export_to(
      "folded", {"--what", "allocated", "--min-size", "2MiB", "--device", "0"}, "large.folded")));
  EXPECT_EQ(allocated, (std::map<std::string, uint64_t>{{"device 0", 168 * kMiB}}));
}

TEST_F(ExportKnownWorkload, PerfettoHasTheTracksCountersAndSlices) {
  Json trace = Json::parse(export_to("perfetto"));
  const Json& events = trace["traceEvents"];
  std::map<int64_t, std::string> processes;
  std::vector<uint64_t> device_live;
  size_t begins = 0, ends = 0;
  const Json* largest = nullptr;
  for (const Json& event : events) {
    std::string ph = event["ph"];
    if (ph == "M" && event["name"] == "process_name") processes[event["pid"]] = event["args"]["name"];
    if (ph == "C" && event["pid"] == 10 && event["name"] == "live bytes" && event["args"].contains("device"))
      device_live.push_back(event["args"]["device"]);
    if (ph == "b") {
      ++begins;
      if (!largest || event["args"]["size"].get<uint64_t>() > (*largest)["args"]["size"].get<uint64_t>())
        largest = &event;
    }
    if (ph == "e") ++ends;
  }
  EXPECT_EQ(processes[10], "device 0");
  EXPECT_EQ(processes[2], "managed memory");
  EXPECT_EQ(processes[3], "pinned host memory");
  ASSERT_FALSE(device_live.empty());
  EXPECT_EQ(*std::max_element(device_live.begin(), device_live.end()), 34 * kMiB);  // the peak
  EXPECT_EQ(device_live.back(), 14 * kMiB);                                          // the end
  EXPECT_EQ(begins, 24u);
  EXPECT_EQ(ends, 24u);
  ASSERT_NE(largest, nullptr);
  EXPECT_EQ((*largest)["args"]["size"], 16 * kMiB);
  EXPECT_EQ((*largest)["name"], "16.0 MiB cudaMalloc");
  EXPECT_EQ((*largest)["args"]["stack"][0].get<std::string>().rfind("alloc_scratch (known_workload.cpp:", 0), 0u)
      << (*largest)["args"]["stack"];
}

TEST_F(ExportKnownWorkload, PeakAndLeaksRenderFoldedStacksToo) {
  ProcessResult r = run_gpumemtrace({"peak", "--format", "folded", "--top", "100", run_->trace});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(root_sums(folded_lines(r.out))["device 0"], 34 * kMiB);
  r = run_gpumemtrace({"leaks", "--format", "folded", run_->trace});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(root_sums(folded_lines(r.out))["device 0"], 14 * kMiB);
  r = run_gpumemtrace({"summary", "--format", "folded", run_->trace});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "gpumemtrace summary: --format folded renders the peak and leaks reports only (see gpumemtrace summary --help)\n");
}

TEST_F(ExportKnownWorkload, BadArgumentsAreUsageErrors) {
  const std::string& trace = run_->trace;
  std::string out = scratch_ / "x";
  auto expect_usage = [&](std::vector<std::string> args, const std::string& message) {
    args.insert(args.begin(), "export");
    ProcessResult r = run_gpumemtrace(args);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(r.err, "gpumemtrace export: " + message + " (see gpumemtrace export --help)\n");
    EXPECT_FALSE(file_exists(out));
  };
  expect_usage({"-o", out, trace}, "--format is required: one of folded, pprof, perfetto, csv, memory-viz");
  expect_usage({"--format", "svg", "-o", out, trace}, "--format svg is not one of: folded, pprof, perfetto, csv, memory-viz");
  expect_usage({"--format", "text", "-o", out, trace}, "--format text is not one of: folded, pprof, perfetto, csv, memory-viz");
  expect_usage({"--format", "csv", trace}, "-o FILE is required: where to write the csv");
  expect_usage({"--format", "csv", "--what", "peak", "-o", out, trace}, "--what is for folded and pprof, not csv");
  expect_usage({"--format", "folded", "--what", "most", "-o", out, trace},
               "--what most is not one of: peak, leaked, allocated");
  expect_usage({"--format", "folded", "--from", "soon", "-o", out, trace},
               "--from soon is not a time since the trace started (e.g. 1.5s, 200ms, 350us)");
  expect_usage({"--format", "folded", "--from", "2ms", "--to", "1ms", "-o", out, trace}, "--from 2ms is after --to 1ms");
  expect_usage({"--format", "folded", "--min-size", "big", "-o", out, trace},
               "--min-size big is not a size (e.g. 1MiB, 4096)");
  expect_usage({"--format", "folded", "--device", "gpu0", "-o", out, trace},
               "--device gpu0 is not a number from 0 to 2147483646");
  ProcessResult r = run_gpumemtrace({"export", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("usage: gpumemtrace export --format FORMAT -o FILE [options] TRACE\n", 0), 0u) << r.out;
}

TEST_F(ExportKnownWorkload, AnUnwritableOutputIsASystemError) {
  ProcessResult r = run_gpumemtrace({"export", "--format", "folded", "-o", scratch_ / "no/such/dir/out", run_->trace});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.err.rfind("gpumemtrace export: cannot write " + (scratch_ / "no/such/dir/out") + ": ", 0), 0u) << r.err;
  r = run_gpumemtrace({"export", "--format", "csv", "-o", "/dev/full", run_->trace});
  EXPECT_EQ(r.exit_code, 3) << r.err;
}

TEST_F(ExportKnownWorkload, NotATraceIsRefusedAndLeavesNoOutput) {
  std::string garbage = write_file(scratch_ / "garbage", {'n', 'o', 'p', 'e'});
  std::string out = scratch_ / "out.csv";
  ProcessResult r = run_gpumemtrace({"export", "--format", "csv", "-o", out, garbage});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpumemtrace: " + garbage + ": not a gpumemtrace trace\n");
  EXPECT_FALSE(file_exists(out));
}

}  // namespace
}  // namespace gpumemtrace::test
