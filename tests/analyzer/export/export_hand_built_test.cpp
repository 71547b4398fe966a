// `gpumemtrace export` on a hand-built trace with phases, failures, a pool report, a heap and a Python
// frame whose file name needs CSV quoting: the Perfetto events and the CSV stack table, exactly.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/subprocess.h"
#include "tests/support/temp_files.h"
#include "tests/support/trace_builder.h"

namespace gpumemtrace::test {
namespace {

using format::Api;
using Json = nlohmann::json;

constexpr uint64_t kPool = 0x77000;

// Times in µs: 1 push step; 2 alloc 0x1000 1000 B (stack 2: a Python frame in a native one); 3 pop step;
// 4 push step; 5 out of memory (1 TiB), 5.1 the pool's report; 5.2 a heap of 4096 B, 5.3 512 B of it
// handed out; 6 cuMemAlloc fails (invalid value); 7 pop step; 8 free 0x1000; 9 end.
TraceBuilder hand_built_trace() {
  TraceBuilder b;
  b.thread_new(1, 1, "main");
  b.python_code("model \"v2\", final.py", "Net.forward", 10);
  b.stack_node(0, 0xA000).stack_node(1, format::python_frame(0, 12));
  b.record(trace::PhaseName{0, 0, "step"});
  b.event(trace::PhasePush{{}, 0}, 1000);
  b.alloc(Api::cudaMalloc, 0, 0x1000, 1000, 2, 1000);
  b.event(trace::PhasePop{{}, 0}, 1000);
  b.event(trace::PhasePush{{}, 0}, 1000);
  b.alloc_failed(Api::cudaMalloc, 0, uint64_t{1} << 40, 1, format::kErrorOutOfMemory, 1000);
  b.pool_usage(kPool, 0, 4096, 1024, 100);
  b.event(trace::HeapCreate{{}, 1, 0, 0x900000, 4096, "arena"}, 100);
  b.event(trace::SubAlloc{{}, 1, 0x900000, 512, 0, 1}, 100);
  b.alloc_failed(Api::cuMemAlloc, 0, 64, 1, 1, 700);
  b.event(trace::PhasePop{{}, 0}, 1000);
  b.free(Api::cudaFree, 0x1000, 1000);
  b.end(10, 1000);
  return b;
}

class ExportHandBuilt : public testing::Test {
 protected:
  void SetUp() override { trace_ = write_file(scratch_ / "hand.trace", hand_built_trace().bytes()); }
  std::string export_to(const std::string& format, const std::string& name) {
    std::string path = scratch_ / name;
    ProcessResult r = run_gpumemtrace({"export", "--format", format, "-o", path, trace_});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return read_file(path);
  }
  ScratchDir scratch_;
  std::string trace_;
};

std::vector<Json> events_where(const Json& trace, const std::string& ph) {
  std::vector<Json> out;
  for (const Json& event : trace["traceEvents"])
    if (event["ph"] == ph) out.push_back(event);
  return out;
}

TEST_F(ExportHandBuilt, PerfettoHasPhasesFailuresPoolsHeapsAndCounters) {
  Json trace = Json::parse(export_to("perfetto", "hand.json"));

  std::vector<Json> phases = events_where(trace, "X");
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases[0]["name"], "step");
  EXPECT_EQ(phases[0]["pid"], 1);
  EXPECT_EQ(phases[0]["tid"], 1);
  EXPECT_DOUBLE_EQ(phases[0]["ts"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(phases[0]["dur"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(phases[1]["ts"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(phases[1]["dur"].get<double>(), 3.0);
  EXPECT_EQ(phases[0]["args"]["allocated_bytes"], 1000);

  std::vector<Json> instants = events_where(trace, "i");
  ASSERT_EQ(instants.size(), 2u);
  EXPECT_EQ(instants[0]["name"], "out of memory");
  EXPECT_EQ(instants[0]["pid"], 10);
  EXPECT_DOUBLE_EQ(instants[0]["ts"].get<double>(), 5.0);
  EXPECT_EQ(instants[0]["args"]["requested_bytes"], uint64_t{1} << 40);
  EXPECT_EQ(instants[0]["args"]["live_bytes"], 1000);
  EXPECT_EQ(instants[1]["name"], "failed cuMemAlloc");
  EXPECT_EQ(instants[1]["args"]["error"], 1);

  std::map<std::string, std::vector<Json>> counters;
  for (const Json& event : events_where(trace, "C")) counters[event["name"]].push_back(event);
  ASSERT_EQ(counters["pool 0x77000"].size(), 1u);
  EXPECT_EQ(counters["pool 0x77000"][0]["args"], (Json{{"reserved", 4096}, {"used", 1024}}));
  EXPECT_DOUBLE_EQ(counters["pool 0x77000"][0]["ts"].get<double>(), 5.1);
  ASSERT_FALSE(counters["heap arena"].empty());
  EXPECT_EQ(counters["heap arena"].back()["args"], (Json{{"reserved", 4096}, {"allocated", 512}}));
  std::vector<uint64_t> live;
  for (const Json& event : counters["live bytes"]) live.push_back(event["args"]["device"]);
  ASSERT_FALSE(live.empty());
  EXPECT_EQ(*std::max_element(live.begin(), live.end()), 1000u);
  EXPECT_EQ(live.back(), 0u);

  std::vector<Json> slices = events_where(trace, "b");
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0]["name"], "1000 B cudaMalloc");
  EXPECT_EQ(slices[0]["args"]["stack"], Json::array({"model \"v2\", final.py:12 in Net.forward"}));
  std::vector<Json> ends = events_where(trace, "e");
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_DOUBLE_EQ(ends[0]["ts"].get<double>(), 8.0);
}

TEST_F(ExportHandBuilt, CsvQuotesWhatNeedsQuoting) {
  std::string rows = export_to("csv", "hand.csv");
  // Stack 2: the analyzer's id of the stack; 1 is the one it was called from (stacks share their callers').
  EXPECT_EQ(rows, "time_ns,device,kind,api,size,address,freed_ns,stack\n2000,0,device,cudaMalloc,1000,0x1000,8000,2\n");
  std::string stacks = read_file(scratch_ / "hand.stacks.csv");
  EXPECT_EQ(stacks,
            "stack,depth,function,file,line,module,offset,kind\n"
            "2,0,Net.forward,\"model \"\"v2\"\", final.py\",12,,,python\n"
            "2,1,,,,,0xa000,native\n");
}

}  // namespace
}  // namespace gpumemtrace::test
