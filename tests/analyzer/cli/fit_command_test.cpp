// `gpumemtrace run --param` and `gpumemtrace fit` on raw bytes (issue 25, item 3), with the C++ training loop
// (examples/train_loop.cpp) traced on the simulated device at batch 256, 512 and 1024, 5 steps (validation, at
// twice the batch, in the 5th). Its peak, in the validation pass of step 5: parameters 32 MiB, Adam's state 64 MiB,
// the cache's 20 MiB segment of weight gradients and 2 MiB one of bias gradients, 5 x 64 KiB of loss history: a
// constant 118.3125 MiB; and the cache's segments of activations, each its own (over 10 MiB, a multiple of 2 MiB):
// 8 layers x batch x 64 KiB of training (0.5 MiB per sample) and 8 x 2 x batch x 64 KiB of validation (1 MiB).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/size_units.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_files.h"

namespace gpumemtrace::test {
namespace {

using Json = nlohmann::json;

class Fit : public testing::Test {
 protected:
  // The training loop at `batch`, traced into dir/NAME.trace, with `params` given to run.
  static std::string train(const std::string& name, int batch, std::vector<std::string> params,
                           const EnvChanges& env = {}) {
    std::string trace = dir_->path() + "/" + name + ".trace";
    std::vector<std::string> args = {"run", "--sim", "-o", trace};
    for (const std::string& param : params) args.insert(args.end(), {"--param", param});
    args.insert(args.end(), {"--", bin_dir() + "/train_loop", "--batch", std::to_string(batch), "--steps", "5"});
    ProcessResult r = run_gpumemtrace(args, env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return trace;
  }

  static void SetUpTestSuite() {
    dir_ = new ScratchDir;
    b256_ = train("b256", 256, {"batch=256", "note=first"});
    b512_ = train("b512", 512, {"batch=512"});
    b1024_ = train("b1024", 1024, {}, {{"GPUMEMTRACE_PARAMS", "batch=1024"}});
    unnamed_ = train("unnamed", 512, {});
  }
  static void TearDownTestSuite() { delete dir_; }

  static ScratchDir* dir_;
  static std::string b256_, b512_, b1024_, unnamed_;
};

ScratchDir* Fit::dir_ = nullptr;
std::string Fit::b256_, Fit::b512_, Fit::b1024_, Fit::unnamed_;

TEST_F(Fit, RunRecordsItsParametersAndTheReportsShowThem) {
  ProcessResult summary = run_gpumemtrace({"summary", b256_});
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_NE(summary.out.find("\nparams: batch=256 note=first\n"), std::string::npos) << summary.out;
  Json json = Json::parse(run_gpumemtrace({"summary", "--json", b256_}).out);
  EXPECT_EQ(json["trace"]["params"], (Json{{"batch", "256"}, {"note", "first"}}));
  // Set by hand, without --param.
  EXPECT_EQ(Json::parse(run_gpumemtrace({"summary", "--json", b1024_}).out)["trace"]["params"], (Json{{"batch", "1024"}}));
  // None: no key, no line.
  EXPECT_FALSE(Json::parse(run_gpumemtrace({"summary", "--json", unnamed_}).out)["trace"].contains("params"));
  EXPECT_EQ(run_gpumemtrace({"summary", unnamed_}).out.find("params:"), std::string::npos);
  ProcessResult dump = run_gpumemtrace({"dump", b256_});
  EXPECT_NE(dump.out.find("param name=\"batch\" value=\"256\""), std::string::npos) << dump.out.substr(0, 2000);
}

TEST_F(Fit, ABadParameterIsACommandLineError) {
  ProcessResult r = run_gpumemtrace({"run", "--sim", "--param", "batch", "--", "/bin/true"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--param 'batch' is not name=value"), std::string::npos) << r.err;
  r = run_gpumemtrace({"run", "--sim", "--param", "b=1,2", "--", "/bin/true"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--param 'b=1,2': a value cannot hold ','"), std::string::npos) << r.err;
}

TEST_F(Fit, TheTrainingLoopOnRawBytes) {
  ProcessResult r = run_gpumemtrace({"fit", "--json", "--memory", "1GiB", b1024_, b256_, "--batch",
                                     unnamed_ + "=512", unnamed_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json json = Json::parse(r.out);
  ASSERT_EQ(json["runs"].size(), 3u);
  EXPECT_EQ(json["runs"][0], (Json{{"path", b256_}, {"batch", 256}, {"batch_from", "param batch"}}));
  EXPECT_EQ(json["runs"][1], (Json{{"path", unnamed_}, {"batch", 512}, {"batch_from", "--batch"}}));
  EXPECT_EQ(json["runs"][2], (Json{{"path", b1024_}, {"batch", 1024}, {"batch_from", "param batch"}}));
  ASSERT_EQ(json["devices"].size(), 1u);
  const Json& device = json["devices"][0];
  EXPECT_EQ(device["memory_bytes"], 1024 * kMiB);
  EXPECT_EQ(device["memory_from"], "--memory");
  uint64_t constant = 118 * kMiB + 5 * 64 * kKiB;
  EXPECT_EQ(device["constant_bytes"], constant);
  EXPECT_EQ(device["per_sample_bytes"], 3 * kMiB / 2);
  EXPECT_EQ(device["peak_bytes"], (Json{constant + 384 * kMiB, constant + 768 * kMiB, constant + 1536 * kMiB}));
  EXPECT_EQ(device["largest_error_bytes"], 0);
  // The two stacks of activation segments grow, validation's twice as fast; the others are constant.
  const Json& stacks = device["stacks"];
  ASSERT_GE(stacks.size(), 4u);
  EXPECT_EQ(stacks[0]["kind"], "per_sample");
  EXPECT_EQ(stacks[0]["per_sample_bytes"], kMiB);
  EXPECT_NE(stacks[0]["stack"].get<std::string>().find("forward (train_loop.cpp) ← evaluate (train_loop.cpp)"),
            std::string::npos) << stacks[0]["stack"];
  EXPECT_EQ(stacks[0]["measured_bytes"], (Json{256 * kMiB, 512 * kMiB, 1024 * kMiB}));
  EXPECT_EQ(stacks[1]["kind"], "per_sample");
  EXPECT_EQ(stacks[1]["per_sample_bytes"], kMiB / 2);
  EXPECT_EQ(stacks[1]["constant_bytes"], 0);
  EXPECT_EQ(stacks[1]["stack"].get<std::string>().find("evaluate"), std::string::npos) << stacks[1]["stack"];
  uint64_t constants = 0;
  for (size_t i = 2; i < stacks.size(); ++i) {
    EXPECT_EQ(stacks[i]["kind"], "constant") << stacks[i];
    constants += stacks[i]["constant_bytes"].get<uint64_t>();
  }
  EXPECT_EQ(constants, constant);
  // (1 GiB - 118.3125 MiB) / 1.5 MiB = 603.8: batch 603 takes 1,022.8125 MiB.
  EXPECT_EQ(device["raw_largest_batch"], 603);
  EXPECT_EQ(device["raw_bytes_at_largest_batch"], constant + 603 * 3 * kMiB / 2);
  EXPECT_EQ(device["allocator"], nullptr);
  EXPECT_EQ(json["largest_batch"], 603);

  // A margin of 100 MiB: (924 - 118.3125) / 1.5 = 537.1.
  Json margin = Json::parse(
      run_gpumemtrace({"fit", "--json", "--memory", "1GiB", "--margin", "100MiB", b256_, b1024_}).out);
  EXPECT_EQ(margin["margin_bytes"], 100 * kMiB);
  EXPECT_EQ(margin["largest_batch"], 537);
}

// Each --batch counts (a repeated option once kept only its first value), and it wins over the recorded batch.
TEST_F(Fit, EveryBatchGivenIsTakenOverTheRecordedOne) {
  ProcessResult r = run_gpumemtrace(
      {"fit", "--json", "--memory", "1GiB", "--batch", b256_ + "=300", "--batch", b512_ + "=600", b256_, b512_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json json = Json::parse(r.out);
  EXPECT_EQ(json["runs"][0], (Json{{"path", b256_}, {"batch", 300}, {"batch_from", "--batch"}}));
  EXPECT_EQ(json["runs"][1], (Json{{"path", b512_}, {"batch", 600}, {"batch_from", "--batch"}}));
}

TEST_F(Fit, TheTextSaysWhichStacksGrowAndTheAnswer) {
  ProcessResult r = run_gpumemtrace({"fit", "--memory", "1GiB", b256_, b1024_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  bytes at the peak = 118 MiB + 1.50 MiB x batch (the runs' peaks within 0 B of it)\n"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  grow with the batch (bytes per sample):\n      1.00 MiB  "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  constant:\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  raw bytes: batch 603 fits: 1023 MiB (1.19 MiB to spare); batch 604 needs 1.00 GiB "
                       "(320 KiB too much)\n"), std::string::npos) << r.out;
  EXPECT_TRUE(r.out.ends_with("\nLargest batch that fits: 603\n")) << r.out;
}

TEST_F(Fit, BadInputIsExit2WithTheReason) {
  ProcessResult r = run_gpumemtrace({"fit", b256_, unnamed_});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpumemtrace fit: " + unnamed_ + ": no batch size: the run recorded no `batch` parameter "
                   "(gpumemtrace run --param batch=N) and no --batch " + unnamed_ + "=N was given\n");
  r = run_gpumemtrace({"fit", b512_, "--batch", unnamed_ + "=512", unnamed_});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpumemtrace fit: the runs have 1 batch size (512): fit needs at least two different ones\n");
  std::string other = dir_->path() + "/other.trace";
  ASSERT_EQ(run_gpumemtrace({"run", "--sim", "-o", other, "--param", "batch=4", "--", bin_dir() + "/report_prog_known"})
                .exit_code, 0);
  r = run_gpumemtrace({"fit", b256_, other});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpumemtrace fit: " + b256_ + " is a run of " + bin_dir() + "/train_loop, " + other + " of " +
                       bin_dir() + "/report_prog_known: fit compares runs of one program\n");
  r = run_gpumemtrace({"fit", b256_});
  EXPECT_EQ(r.exit_code, 1);
  r = run_gpumemtrace({"fit", "--batch", "x.trace=8", b256_, b512_});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--batch x.trace=8: x.trace is not one of the runs"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gpumemtrace::test
