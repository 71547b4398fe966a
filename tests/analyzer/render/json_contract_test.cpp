// The JSON contract of `gpumemtrace summary --json` (docs/reports.md), member by member, on a trace with
// every kind of figure: parsed, then checked by structure, keys in order, types and values.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analyzer/replay/heaps.h"
#include "analyzer/report/figures.h"
#include "common/size_units.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_files.h"
#include "tests/support/trace_builder.h"

namespace gpumemtrace::test {
namespace {

using format::Api;
using Json = nlohmann::ordered_json;

std::vector<std::string> keys_of(const Json& object) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.push_back(key);
  return keys;
}

// A frame of a hand-built trace: no modules, so only the address is known.
Json frame(const std::string& function) {
  return Json{{"function", function}, {"file", nullptr}, {"line", nullptr}, {"module", nullptr}, {"kind", "native"}};
}

class SummaryJson : public testing::Test {
 protected:
  void SetUp() override {
    TraceBuilder b;
    b.process(4242, 1, 1'700'000'000'000'000'000, 64, -1, "node7", "/usr/bin/python3", {"python3", "train.py"});
    b.thread_new(1, 4242, "python3");
    b.stack_node(0, 0xA000).stack_node(1, 0xB000);  // stack 1: [0xa000], stack 2: [0xb000, 0xa000]
    b.alloc(Api::cudaMalloc, 0, 0x1000000, 10 * kMiB, 2, 1000);
    b.alloc(Api::cudaMallocAsync, 0, 0x2000000, 20 * kMiB, 1, 1000, 0x5);
    b.alloc(Api::cudaMallocManaged, 0, 0x3000000, 4096, 1, 1000);
    b.alloc(Api::cudaHostAlloc, -1, 0x4000000, 8192, 1, 1000);
    b.free(Api::cudaFreeAsync, 0x2000000, 1000, 0x5);
    b.free(Api::cudaFreeHost, 0x4000000, 1000);
    b.alloc_failed(Api::cudaMalloc, 0, 2048 * kMiB, 2, 2, 1000, 1024 * kMiB, 2048 * kMiB);
    b.end(7, 1000);
    path_ = write_file(scratch_ / "contract.trace", b.bytes());
    ProcessResult r = run_gpumemtrace({"summary", "--json", path_});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    ASSERT_TRUE(r.out.ends_with("}\n")) << r.out;
    json_ = Json::parse(r.out);
  }

  ScratchDir scratch_;
  std::string path_;
  Json json_;
  const Json stack_a_ = Json::array({frame("0xa000")});
  const Json stack_b_a_ = Json::array({frame("0xb000"), frame("0xa000")});
};

TEST_F(SummaryJson, HasTheContractsMembersInOrder) {
  EXPECT_EQ(keys_of(json_), (std::vector<std::string>{"trace", "view", "devices", "managed", "host_pinned", "peak",
                                                      "leaks", "growth", "growth_windows", "ooms", "fragmentation",
                                                      "forecast"}));
  EXPECT_EQ(json_["view"], "reserved");  // no heaps: both views are the same
  EXPECT_EQ(json_["trace"], (Json{{"path", path_}, {"pid", 4242}, {"command", "python3 train.py"}, {"complete", true},
                                  {"events", 7}}));
}

// The declaration of an account's figures is what the JSON carries: its JSON rows, by name, in order.
TEST_F(SummaryJson, EachAccountCarriesTheDeclaredFiguresInOrder) {
  std::vector<std::string> declared;
#define GPUMEMTRACE_FIGURE_NAME(member, in_json) \
  if (in_json) declared.push_back(#member);
  GPUMEMTRACE_ACCOUNT_FIGURES(GPUMEMTRACE_FIGURE_NAME)
#undef GPUMEMTRACE_FIGURE_NAME
  ASSERT_EQ(declared.size(), 7u);
  EXPECT_EQ(keys_of(json_["managed"]), declared);
  EXPECT_EQ(keys_of(json_["host_pinned"]), declared);
  declared.insert(declared.begin(), "device");
  EXPECT_EQ(keys_of(json_["devices"][0]), declared);
}

TEST_F(SummaryJson, CountsEachDeviceAndManagedAndPinnedHostMemory) {
  EXPECT_EQ(json_["devices"], Json::array({Json{{"device", 0},
                                                {"peak_bytes", 30 * kMiB},
                                                {"peak_time_ns", 2000},
                                                {"final_bytes", 10 * kMiB},
                                                {"allocations", 2},
                                                {"frees", 1},
                                                {"leaked_allocations", 1},
                                                {"failed_allocations", 1}}}));
  EXPECT_EQ(json_["managed"], (Json{{"peak_bytes", 4096},
                                    {"peak_time_ns", 3000},
                                    {"final_bytes", 4096},
                                    {"allocations", 1},
                                    {"frees", 0},
                                    {"leaked_allocations", 1},
                                    {"failed_allocations", 0}}));
  EXPECT_EQ(json_["host_pinned"], (Json{{"peak_bytes", 8192},
                                        {"peak_time_ns", 4000},
                                        {"final_bytes", 0},
                                        {"allocations", 1},
                                        {"frees", 1},
                                        {"leaked_allocations", 0},
                                        {"failed_allocations", 0}}));
}

TEST_F(SummaryJson, ListsTheSitesOfDeviceMemoryWithTheirStacks) {
  EXPECT_EQ(json_["peak"],
            Json::array({Json{{"device", 0}, {"bytes", 20 * kMiB}, {"allocations", 1}, {"stack", stack_a_}},
                         Json{{"device", 0}, {"bytes", 10 * kMiB}, {"allocations", 1}, {"stack", stack_b_a_}}}));
  EXPECT_EQ(json_["leaks"],
            Json::array({Json{{"device", 0}, {"bytes", 10 * kMiB}, {"allocations", 1}, {"stack", stack_b_a_}}}));
  EXPECT_EQ(json_["growth"], Json::array());
}

TEST_F(SummaryJson, GivesEachOutOfMemoryFailureItsVerdictFindingAndRemedy) {
  ASSERT_EQ(json_["ooms"].size(), 1u);
  const Json& oom = json_["ooms"][0];
  EXPECT_EQ(keys_of(oom), (std::vector<std::string>{"device", "time_ns", "requested_bytes", "free_bytes", "total_bytes",
                                                    "live_bytes", "api", "stack", "verdict", "finding", "remedy"}));
  EXPECT_EQ(oom["device"], 0);
  EXPECT_EQ(oom["time_ns"], 7000);
  EXPECT_EQ(oom["requested_bytes"], 2048 * kMiB);
  EXPECT_EQ(oom["free_bytes"], 1024 * kMiB);
  EXPECT_EQ(oom["total_bytes"], 2048 * kMiB);
  EXPECT_EQ(oom["live_bytes"], 10 * kMiB);
  EXPECT_EQ(oom["api"], "cudaMalloc");
  EXPECT_EQ(oom["stack"], stack_b_a_);
  EXPECT_EQ(oom["verdict"], "live-set");
  ASSERT_TRUE(oom["finding"].is_string());
  EXPECT_NE(oom["finding"].get<std::string>().find("own live memory (10.0 MiB)"), std::string::npos) << oom["finding"];
  ASSERT_TRUE(oom["remedy"].is_string());
  EXPECT_FALSE(oom["remedy"].get<std::string>().empty());
}

TEST_F(SummaryJson, SaysWhatTheTraceKnowsOfFragmentation) {
  ASSERT_EQ(json_["fragmentation"].size(), 1u);
  const Json& device = json_["fragmentation"][0];
  EXPECT_EQ(keys_of(device), (std::vector<std::string>{"device", "pools", "vmm", "failures", "heaps",
                                                       "unlisted_destroyed_heaps", "heap_totals"}));
  EXPECT_EQ(device["heaps"], Json::array());
  EXPECT_EQ(device["unlisted_destroyed_heaps"], (Json{{"heaps", 0}, {"reserved_bytes", 0}, {"peak_allocated_bytes", 0}}));
  EXPECT_TRUE(device["heap_totals"].is_null());
  EXPECT_EQ(device["device"], 0);
  EXPECT_EQ(device["pools"], Json::array());
  EXPECT_EQ(device["vmm"]["physical_bytes"], 0);
  ASSERT_EQ(device["failures"].size(), 1u);
  EXPECT_EQ(device["failures"][0]["requested_bytes"], 2048 * kMiB);
  EXPECT_TRUE(device["failures"][0]["internal_bytes"].is_null()) << "no pool records";
  EXPECT_EQ(device["failures"][0]["fits_free_plus_unused"], false);
  EXPECT_TRUE(device["failures"][0]["largest_free_block_bytes"].is_null());
  EXPECT_TRUE(device["failures"][0]["fits_largest_free_block"].is_null()) << "no heaps";
}

// Its figures are tested in tests/analyzer/report/forecast_test.cpp; here its members. The trace's 6 events, 1 µs
// apart, are too few time slices for a forecast. The usable memory comes from the failure: 1 GiB free and the
// 10 MiB the process held then.
TEST_F(SummaryJson, HasTheForecastOfEachDevice) {
  const Json& forecast = json_["forecast"];
  EXPECT_EQ(keys_of(forecast), (std::vector<std::string>{"phase", "min_steps", "devices"}));
  EXPECT_TRUE(forecast["phase"].is_null());
  EXPECT_EQ(forecast["min_steps"], 8);
  ASSERT_EQ(forecast["devices"].size(), 1u);
  const Json& device = forecast["devices"][0];
  EXPECT_EQ(keys_of(device),
            (std::vector<std::string>{"device", "verdict", "steps", "last_step", "fit_first_step", "step_ns",
                                      "bytes_per_step", "bytes_per_step_error", "residual_bytes", "last_peak_bytes",
                                      "usable_bytes", "usable_from", "oom_step", "oom_step_earliest", "oom_step_latest",
                                      "oom_in_ns", "stable_after_step", "stable_peak_bytes", "stacks"}));
  EXPECT_EQ(device["device"], 0);
  EXPECT_EQ(device["verdict"], "too-few-steps");
  EXPECT_EQ(device["steps"], 7);
  EXPECT_TRUE(device["fit_first_step"].is_null());
  EXPECT_EQ(device["usable_bytes"], 1034 * kMiB);
  EXPECT_EQ(device["usable_from"], "out-of-memory");
  EXPECT_TRUE(device["oom_step"].is_null());
  EXPECT_EQ(device["stacks"], Json::array());
}

TEST_F(SummaryJson, OomJsonHasTheSameVerdictAndTheEvidence) {
  ProcessResult r = run_gpumemtrace({"oom", "--format", "json", path_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json oom = Json::parse(r.out)["ooms"].at(0);
  for (const char* key : {"verdict", "finding", "remedy"}) EXPECT_EQ(oom[key], json_["ooms"][0][key]) << key;
  EXPECT_EQ(oom["held_bytes"], 10 * kMiB);
  EXPECT_EQ(oom["others_bytes"], 1014 * kMiB);
  EXPECT_EQ(oom["live_set"].size(), 1u);
}

}  // namespace
}  // namespace gpumemtrace::test
