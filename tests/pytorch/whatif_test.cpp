// gpumemtrace whatif on real PyTorch 2.14.1 runs (the workloads of allocator_replay.py on the simulated device):
// the replay under the recorded settings gives PyTorch's own peak reserved (torch.cuda.max_memory_reserved), the
// prediction for each of five other settings gives the peak of a real run with them, and on a device made too
// small the predicted out-of-memory request is the one that failed; `oom` says what each remedy would have done.
#include <gtest/gtest.h>

#include <string>

#include "tests/pytorch/torch_run.h"

namespace gpumemtrace::test {
namespace {

const std::string kWhatifScript = std::string(GMT_PYTORCH_TESTS) + "/allocator_replay.py";

class Whatif : public testing::Test {
 protected:
  void SetUp() override { REQUIRE_TORCH(); }
};

TEST_F(Whatif, RecordedSettingsGiveThePeakAndExpandableSegmentsThePeakOfARealRun) {
  TorchRun recorded = run_torch(kWhatifScript, {"fragmenting_mix"}, "16GiB");
  ASSERT_EQ(recorded.checks["done"], true) << describe(recorded.result);
  TorchRun expandable =
      run_torch(kWhatifScript, {"fragmenting_mix"}, "16GiB", {{"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}});
  ASSERT_EQ(expandable.checks["done"], true) << describe(expandable.result);
  nlohmann::json json = report({"whatif", "--json", "--set", "expandable_segments=True", recorded.trace})["devices"][0];
  const nlohmann::json& replay = json["replay_of_recorded"];
  EXPECT_EQ(replay["recorded_segment_events"], 34);
  EXPECT_EQ(replay["matched_segment_events"], 34);
  EXPECT_EQ(replay["first_difference"], nullptr);
  ASSERT_EQ(json["scenarios"].size(), 2u);
  EXPECT_EQ(json["scenarios"][0]["name"], "recorded settings");
  EXPECT_EQ(json["scenarios"][0]["peak_reserved_bytes"], recorded.checks["max_reserved"]);
  EXPECT_EQ(replay["recorded_peak_reserved_bytes"], recorded.checks["max_reserved"]);
  EXPECT_EQ(json["scenarios"][1]["name"], "expandable_segments=True");
  EXPECT_EQ(json["scenarios"][1]["peak_reserved_bytes"], expandable.checks["max_reserved"]);
  EXPECT_EQ(json["scenarios"][1]["out_of_memory"], false);
}

// A device too small for the run: the first request that fails, with its stack from the snapshot.
TEST_F(Whatif, ASmallDeviceRunsOutOfMemoryAtARequestWithItsStack) {
  TorchRun recorded = run_torch(kWhatifScript, {"fragmenting_mix"}, "16GiB", {{"ALLOCATOR_REPLAY_STACKS", "1"}});
  nlohmann::json json = report({"whatif", "--json", "--memory", "100MiB", recorded.trace})["devices"][0];
  ASSERT_EQ(json["scenarios"].size(), 2u);
  const nlohmann::json& small = json["scenarios"][1];
  EXPECT_EQ(small["name"], "memory=100 MiB");
  ASSERT_EQ(small["out_of_memory"], true);
  EXPECT_GT(small["first_out_of_memory"]["size_bytes"], 0);
  ASSERT_FALSE(small["first_out_of_memory"]["stack"].empty());
  // The program's own line first, as every stack the reports show (report/stack_text.h).
  EXPECT_EQ(small["first_out_of_memory"]["stack"][0], "allocator_replay.py:27 in fragmenting_mix")
      << small["first_out_of_memory"]["stack"].dump();
  EXPECT_EQ(small["fits_in_bytes"], json["scenarios"][0]["fits_in_bytes"]);
}

// The scenario named `name` of whatif's JSON (an empty object, and a failure, when there is none).
nlohmann::json scenario(const nlohmann::json& whatif, const std::string& name) {
  for (const nlohmann::json& s : whatif["scenarios"])
    if (s["name"] == name) return s;
  ADD_FAILURE() << "no scenario " << name << " in " << whatif.dump(1);
  return nlohmann::json::object();
}

// Four settings other than the ones recorded (besides expandable segments, above), each predicted from one recorded
// run and compared with a real run under it: max_split_size_mb and roundup_power2_divisions on the fragmenting mix
// (recorded with the defaults), and garbage_collection_threshold and per_process_memory_fraction on the workload with
// a memory fraction (recorded with threshold 0.5 and fraction 1/32).
TEST_F(Whatif, FourOtherSettingsPredictThePeakOfRealRunsToTheByte) {
  TorchRun recorded = run_torch(kWhatifScript, {"fragmenting_mix"}, "16GiB");
  ASSERT_EQ(recorded.checks["done"], true) << describe(recorded.result);
  nlohmann::json json = report({"whatif", "--json", "--set", "max_split_size_mb=24", "--set",
                                "roundup_power2_divisions=4", recorded.trace})["devices"][0];
  ASSERT_EQ(json["replay_of_recorded"]["first_difference"], nullptr);
  struct Case {
    std::string scenario, conf;
  };
  for (const Case& c : {Case{"max_split_size_mb=24", "max_split_size_mb:24"},
                        Case{"roundup_power2_divisions=4", "roundup_power2_divisions:4"}}) {
    SCOPED_TRACE(c.scenario);
    TorchRun real = run_torch(kWhatifScript, {"fragmenting_mix"}, "16GiB", {{"PYTORCH_CUDA_ALLOC_CONF", c.conf}});
    ASSERT_EQ(real.checks["done"], true) << describe(real.result);
    EXPECT_NE(real.checks["max_reserved"], recorded.checks["max_reserved"]) << "the setting changes nothing here";
    EXPECT_EQ(scenario(json, c.scenario)["peak_reserved_bytes"], real.checks["max_reserved"]);
  }

  const std::string conf = "garbage_collection_threshold:0.5,max_split_size_mb:200,roundup_power2_divisions:[32:4,>:2]";
  TorchRun gc = run_torch(kWhatifScript, {"memory_fraction_gc"}, "16GiB", {{"PYTORCH_CUDA_ALLOC_CONF", conf}});
  ASSERT_EQ(gc.checks["done"], true) << describe(gc.result);
  // The snapshot records neither the fraction nor the device: --fraction and --device give them.
  json = report({"whatif", "--json", "--device", "16GiB", "--fraction", "0.03125", "--set",
                 "garbage_collection_threshold=0.9", "--set", "per_process_memory_fraction=0.025", gc.trace})["devices"][0];
  ASSERT_EQ(json["replay_of_recorded"]["first_difference"], nullptr);
  EXPECT_EQ(scenario(json, "recorded settings")["peak_reserved_bytes"], gc.checks["max_reserved"]);
  TorchRun threshold = run_torch(kWhatifScript, {"memory_fraction_gc"}, "16GiB",
                                 {{"PYTORCH_CUDA_ALLOC_CONF", "garbage_collection_threshold:0.9,max_split_size_mb:200,"
                                                              "roundup_power2_divisions:[32:4,>:2]"}});
  ASSERT_EQ(threshold.checks["done"], true) << describe(threshold.result);
  EXPECT_NE(threshold.checks["max_reserved"], gc.checks["max_reserved"]) << "the setting changes nothing here";
  EXPECT_EQ(scenario(json, "garbage_collection_threshold=0.9")["peak_reserved_bytes"], threshold.checks["max_reserved"]);
  TorchRun fraction = run_torch(kWhatifScript, {"memory_fraction_gc"}, "16GiB",
                                {{"PYTORCH_CUDA_ALLOC_CONF", conf}, {"ALLOCATOR_REPLAY_FRACTION", "0.025"}});
  ASSERT_EQ(fraction.checks["done"], true) << describe(fraction.result);
  EXPECT_NE(fraction.checks["max_reserved"], gc.checks["max_reserved"]) << "the setting changes nothing here";
  EXPECT_EQ(scenario(json, "per_process_memory_fraction=0.025")["peak_reserved_bytes"], fraction.checks["max_reserved"]);
}

// tail_waste on a 960 MiB device: 145 tensors of 6 MiB (29 to a phase "batch" in "fill"), three to a 20 MiB
// segment, so 48 segments hold 144 of them and the last (request 144) finds the device full with 96 MiB cached in
// 2 MiB remainders. The model predicts that request, from the out-of-memory record's device size, and its phase;
// with expandable segments it predicts that all fit, in 44 pages of 20 MiB, and a real run with them fits and
// reserves that.
TEST_F(Whatif, PredictsTheRequestThatRanOutOfMemoryAndThatExpandableSegmentsFit) {
  TorchRun recorded = run_torch(kWhatifScript, {"tail_waste"}, "960MiB", {{"PYTHONPATH", GMT_PYTHON_MODULE_DIR}});
  ASSERT_EQ(recorded.checks["done"], true) << describe(recorded.result);
  ASSERT_EQ(recorded.checks["out_of_memory_at"], 144);
  nlohmann::json json = report({"whatif", "--json", "--set", "expandable_segments=True", recorded.trace})["devices"][0];
  EXPECT_EQ(json["device_memory_bytes"], 960 * kMiB);
  EXPECT_EQ(json["replay_of_recorded"]["first_difference"], nullptr);
  nlohmann::json as_recorded = scenario(json, "recorded settings");
  ASSERT_EQ(as_recorded["out_of_memory"], true);
  EXPECT_EQ(as_recorded["first_out_of_memory"]["request"], recorded.checks["out_of_memory_at"]);
  EXPECT_EQ(as_recorded["first_out_of_memory"]["size_bytes"], 6 * kMiB);
  EXPECT_EQ(as_recorded["first_out_of_memory"]["phase"], "fill/batch #5");

  TorchRun expandable =
      run_torch(kWhatifScript, {"tail_waste"}, "960MiB", {{"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}});
  ASSERT_EQ(expandable.checks["done"], true) << describe(expandable.result);
  EXPECT_EQ(expandable.checks.count("out_of_memory_at"), 0u) << "the real run with expandable segments fits";
  nlohmann::json predicted = scenario(json, "expandable_segments=True");
  EXPECT_EQ(predicted["out_of_memory"], false);
  EXPECT_EQ(predicted["peak_reserved_bytes"], expandable.checks["max_reserved"]);
  EXPECT_EQ(expandable.checks["max_reserved"], 44 * 20 * kMiB);

  // `oom` on the recorded run: each failure of request 144 (the cudaMalloc, and the one after releasing the cache)
  // with what the remedies would have done for it: 145 tensors, 870 MiB, in 44 pages with expandable segments;
  // 6 MiB tensors are not affected by max_split_size or by 4 divisions of the 4-8 MiB interval.
  nlohmann::json ooms = report({"oom", "--json", recorded.trace})["ooms"];
  ASSERT_EQ(ooms.size(), 2u) << ooms.dump(1);
  for (nlohmann::json& oom : ooms) {
    EXPECT_EQ(oom["verdict"], "pytorch-cache");
    nlohmann::json& whatif = oom["whatif"];
    ASSERT_TRUE(whatif.is_object()) << oom.dump(1);
    EXPECT_EQ(whatif["request"], 144);
    EXPECT_EQ(whatif["size_bytes"], 6 * kMiB);
    EXPECT_EQ(whatif["device_memory_bytes"], 960 * kMiB);
    EXPECT_EQ(whatif["other_memory_bytes"], 0);
    std::vector<std::string> settings;
    for (nlohmann::json& o : whatif["outcomes"]) {
      settings.push_back(o["setting"].get<std::string>());
      bool expandable_on = o["setting"].get<std::string>().starts_with("expandable");
      EXPECT_EQ(o["fits"], expandable_on) << o.dump();
      EXPECT_EQ(o["peak_reserved_bytes"], expandable_on ? 44 * 20 * kMiB : 960 * kMiB) << o.dump();
      EXPECT_EQ(o["live_bytes"], 145 * 6 * kMiB) << o.dump();
      EXPECT_EQ(o["fails_at_request"], expandable_on ? nlohmann::json() : nlohmann::json(144)) << o.dump();
    }
    EXPECT_EQ(settings, (std::vector<std::string>{"recorded settings", "expandable_segments=True", "max_split_size_mb=128",
                                                  "max_split_size_mb=512", "roundup_power2_divisions=4",
                                                  "expandable_segments=True,roundup_power2_divisions=4"}));
  }
  ProcessResult text = run_gpumemtrace({"oom", recorded.trace});
  EXPECT_NE(text.out.find("    recorded settings: fails at this request, as recorded: live tensors and the request "
                          "need 870 MiB of the 960 MiB the device had for the allocator\n"
                          "    expandable_segments=True: this request fits: peak reserved 880 MiB instead of 960 MiB\n"
                          "    max_split_size_mb=128: would still fail: live tensors and the request need 870 MiB of "
                          "the 960 MiB the device had for the allocator\n"),
            std::string::npos)
      << text.out;
}

// two_devices on two simulated devices of 960 MiB: fragmenting_mix on cuda:0, tail_waste on cuda:1. whatif replays
// each device's history, a table each: device 0 reproduces its 34 segment events and PyTorch's peak (205,520,896 B,
// as fragmenting_mix alone), device 1 its 48 segments, the out-of-memory failure at request 144 (counted among its
// own requests) on the 960 MiB its out-of-memory record gives, and 44 pages of 20 MiB with expandable segments.
// `oom` replays the failing device: its failures are device 1's, with the same figures as tail_waste alone.
TEST_F(Whatif, EveryDeviceWithHistoryGetsItsTableAndOomReplaysTheFailingDevice) {
  TorchRun recorded = run_torch(kWhatifScript, {"two_devices"}, "960MiB",
                                {{"GPUMEMTRACE_SIM_DEVICES", "2"}, {"PYTHONPATH", GMT_PYTHON_MODULE_DIR}});
  ASSERT_EQ(recorded.checks["done"], true) << describe(recorded.result);
  ASSERT_EQ(recorded.checks["out_of_memory_at"], 144);
  nlohmann::json json = report({"whatif", "--json", "--set", "expandable_segments=True", recorded.trace});
  ASSERT_EQ(json["devices"].size(), 2u) << json.dump(1);
  const nlohmann::json& d0 = json["devices"][0];
  EXPECT_EQ(d0["device"], 0);
  EXPECT_EQ(d0["device_memory_bytes"], nullptr);  // no out-of-memory record on it
  EXPECT_EQ(d0["replay_of_recorded"]["requests"], 120);
  EXPECT_EQ(d0["replay_of_recorded"]["recorded_segment_events"], 34);
  EXPECT_EQ(d0["replay_of_recorded"]["matched_segment_events"], 34);
  EXPECT_EQ(recorded.checks["max_reserved_0"], 205520896);
  EXPECT_EQ(scenario(d0, "recorded settings")["peak_reserved_bytes"], recorded.checks["max_reserved_0"]);
  EXPECT_EQ(scenario(d0, "expandable_segments=True")["peak_reserved_bytes"], 213909504);
  const nlohmann::json& d1 = json["devices"][1];
  EXPECT_EQ(d1["device"], 1);
  EXPECT_EQ(d1["device_memory_bytes"], 960 * kMiB);
  EXPECT_EQ(d1["replay_of_recorded"]["requests"], 145);
  EXPECT_EQ(d1["replay_of_recorded"]["recorded_segment_events"], 48);
  EXPECT_EQ(d1["replay_of_recorded"]["matched_segment_events"], 48);
  EXPECT_EQ(scenario(d1, "recorded settings")["peak_reserved_bytes"], recorded.checks["max_reserved_1"]);
  EXPECT_EQ(scenario(d1, "recorded settings")["first_out_of_memory"]["request"], 144);
  EXPECT_EQ(scenario(d1, "recorded settings")["first_out_of_memory"]["phase"], "fill/batch #5");
  EXPECT_EQ(scenario(d1, "expandable_segments=True")["peak_reserved_bytes"], 44 * 20 * kMiB);
  EXPECT_EQ(d1["recommended"], "expandable_segments=True");
  ProcessResult text = run_gpumemtrace({"whatif", recorded.trace});
  EXPECT_NE(text.out.find("\ndevice 0: input: PyTorch's history\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\ndevice 1: input: PyTorch's history\nDevice memory: 960 MiB (from an out-of-memory record)\n"),
            std::string::npos)
      << text.out;

  nlohmann::json ooms = report({"oom", "--json", recorded.trace})["ooms"];
  ASSERT_EQ(ooms.size(), 2u) << ooms.dump(1);
  for (nlohmann::json& oom : ooms) {
    EXPECT_EQ(oom["device"], 1);
    const nlohmann::json& whatif = oom["whatif"];
    ASSERT_TRUE(whatif.is_object()) << oom.dump(1);
    EXPECT_EQ(whatif["request"], 144);
    EXPECT_EQ(whatif["device_memory_bytes"], 960 * kMiB);
    EXPECT_EQ(whatif["outcomes"][0]["fails_at_request"], 144);
    EXPECT_EQ(whatif["outcomes"][0]["live_bytes"], 145 * 6 * kMiB);
    EXPECT_EQ(whatif["outcomes"][1]["setting"], "expandable_segments=True");
    EXPECT_EQ(whatif["outcomes"][1]["fits"], true);
    EXPECT_EQ(whatif["outcomes"][1]["peak_reserved_bytes"], 44 * 20 * kMiB);
  }
}

// The snapshot of two_devices read on its own (no trace): whatif replays both devices (the device's memory from
// --device: a snapshot does not record it); `oom` finds the failure in the snapshot's oom entry and replays it on
// the memory PyTorch held then (960 MiB) plus the free memory the entry gives (0), the others' memory taken as none.
TEST_F(Whatif, ASnapshotReadAloneIsReplayedByWhatifAndOom) {
  std::string snapshot = make_temp_dir() + "/two_devices.pickle";
  TorchRun recorded = run_torch(kWhatifScript, {"two_devices", snapshot}, "960MiB", {{"GPUMEMTRACE_SIM_DEVICES", "2"}});
  ASSERT_EQ(recorded.checks["done"], true) << describe(recorded.result);
  nlohmann::json json = report({"whatif", "--json", "--device", "960MiB", snapshot});
  ASSERT_EQ(json["devices"].size(), 2u) << json.dump(1);
  EXPECT_EQ(json["devices"][0]["replay_of_recorded"]["matched_segment_events"], 34);
  EXPECT_EQ(json["devices"][0]["scenarios"][0]["peak_reserved_bytes"], 205520896);
  EXPECT_EQ(json["devices"][1]["device_memory_from"], "--device");
  EXPECT_EQ(json["devices"][1]["scenarios"][0]["first_out_of_memory"]["request"], 144);
  EXPECT_EQ(json["devices"][1]["scenarios"][0]["first_out_of_memory"]["phase"], nullptr);  // no trace, no phases

  nlohmann::json ooms = report({"oom", "--json", snapshot})["ooms"];
  ASSERT_EQ(ooms.size(), 1u) << ooms.dump(1);  // the oom entry (the trace has the cudaMalloc's failure as well)
  EXPECT_EQ(ooms[0]["device"], 1);
  EXPECT_EQ(ooms[0]["verdict"], "pytorch-cache");
  const nlohmann::json& whatif = ooms[0]["whatif"];
  ASSERT_TRUE(whatif.is_object()) << ooms[0].dump(1);
  EXPECT_EQ(whatif["request"], 144);
  EXPECT_EQ(whatif["device_memory_bytes"], 960 * kMiB);
  EXPECT_EQ(whatif["other_memory_bytes"], 0);
  EXPECT_EQ(whatif["outcomes"][0]["fails_at_request"], 144);
  EXPECT_EQ(whatif["outcomes"][1]["setting"], "expandable_segments=True");
  EXPECT_EQ(whatif["outcomes"][1]["peak_reserved_bytes"], 44 * 20 * kMiB);
}

// Why the page cannot be opened here (no Chromium, node or playwright-core), or "".
std::string browser_missing() {
  if (!file_exists(CHROMIUM_PATH)) return "no " CHROMIUM_PATH " (Debian's chromium; scripts/setup.sh installs it)";
  if (!file_exists(NODE_PATH_PROGRAM)) return "no node (scripts/setup.sh installs it)";
  if (!file_exists(std::string(NODE_MODULES) + "/playwright-core/package.json"))
    return "no playwright-core in " NODE_MODULES " (built with -DGPUMEMTRACE_HTML=OFF?)";
  return "";
}

// The cells of the what-if tables of `gpumemtrace html`'s page of the run, as Chromium shows them (a failure, and
// no rows, when the page cannot be made or has console errors).
nlohmann::json whatif_rows(const TorchRun& recorded) {
  std::string page = recorded.dir + "/report.html";
  ProcessResult html = run_gpumemtrace({"html", "-o", page, recorded.trace});
  EXPECT_EQ(html.exit_code, 0) << html.err;
  ProcessResult browser = run_process({NODE_PATH_PROGRAM, OPEN_REPORT_TOOL, page}, {{"NODE_PATH", NODE_MODULES}});
  EXPECT_EQ(browser.exit_code, 0) << browser.err;
  if (html.exit_code != 0 || browser.exit_code != 0) return nlohmann::json::array();
  nlohmann::json seen = nlohmann::json::parse(browser.out);
  EXPECT_EQ(seen["console_errors"], nlohmann::json::array()) << seen["console_errors"].dump();
  return seen["whatif_rows"];
}

// `gpumemtrace html` of a trace with PyTorch's history has whatif's table (under the recorded settings and --explore's
// grid), as Chromium shows it: the request that ran out of memory with its phase, and expandable segments fitting.
TEST_F(Whatif, TheHtmlPageShowsTheTable) {
  if (std::string missing = browser_missing(); !missing.empty()) GTEST_SKIP() << missing;
  TorchRun recorded = run_torch(kWhatifScript, {"tail_waste"}, "960MiB", {{"PYTHONPATH", GMT_PYTHON_MODULE_DIR}});
  ASSERT_EQ(recorded.checks["out_of_memory_at"], 144) << describe(recorded.result);
  nlohmann::json rows = whatif_rows(recorded);
  ASSERT_EQ(rows.size(), 6u) << rows.dump();  // the recorded settings and the grid but garbage collection
  EXPECT_EQ(rows[0][0], "recorded settings");
  EXPECT_EQ(rows[0][1], "960 MiB");
  EXPECT_EQ(rows[0][5], "at request 144 (6.00 MiB) in fill/batch #5");
  EXPECT_EQ(rows[1][0], "expandable_segments=True");
  EXPECT_EQ(rows[1][1], "880 MiB");
  EXPECT_EQ(rows[1][5], "no");
}

// The page of two_devices has a table per device: the recorded settings and the grid but garbage collection, device 0's
// rows (fragmenting_mix, 196 MiB, fits) then device 1's (tail_waste, out of memory at its request 144).
TEST_F(Whatif, TheHtmlPageShowsATablePerDevice) {
  if (std::string missing = browser_missing(); !missing.empty()) GTEST_SKIP() << missing;
  TorchRun recorded = run_torch(kWhatifScript, {"two_devices"}, "960MiB", {{"GPUMEMTRACE_SIM_DEVICES", "2"}});
  ASSERT_EQ(recorded.checks["out_of_memory_at"], 144) << describe(recorded.result);
  nlohmann::json rows = whatif_rows(recorded);
  ASSERT_EQ(rows.size(), 12u) << rows.dump();
  EXPECT_EQ(rows[0][0], "recorded settings");
  EXPECT_EQ(rows[0][1], "196 MiB");
  EXPECT_EQ(rows[0][5], "no");
  EXPECT_EQ(rows[6][0], "recorded settings");
  EXPECT_EQ(rows[6][1], "960 MiB");
  EXPECT_EQ(rows[6][5], "at request 144 (6.00 MiB) in fill/batch #5");
  EXPECT_EQ(rows[7][0], "expandable_segments=True");
  EXPECT_EQ(rows[7][1], "880 MiB");
}

TEST(WhatifCommandLine, AnUnknownSettingIsRefusedWithExit2) {
  REQUIRE_TORCH();
  TorchRun recorded = run_torch(kWhatifScript, {"small_tensors"}, "16GiB");
  ProcessResult r = run_gpumemtrace({"whatif", "--set", "expandable_segmnts=True", recorded.trace});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpumemtrace whatif: bad setting: unrecognized CachingAllocator option: expandable_segmnts\n");
  r = run_gpumemtrace({"whatif", "--set", "max_split_size_mb=10", recorded.trace});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpumemtrace whatif: bad setting: max_split_size_mb too small, must be >= 20\n");
}

}  // namespace
}  // namespace gpumemtrace::test
