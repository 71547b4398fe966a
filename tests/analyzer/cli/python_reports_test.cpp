// The reports of a Python program (examples/python/train_loop.py) traced on the simulated device, on
// every CPython 3.10-3.13 installed: stacks name the user's file, function and line, `growth` finds the
// accumulating list of losses by its Python frame and not the per-step temporary, and the text shows the
// user's code first unless --all-frames.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/python_interpreters.h"
#include "tests/support/source_lines.h"
#include "tests/support/subprocess.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {

using Json = nlohmann::json;

// The line of the example that holds `text`.
uint32_t example_line(const std::string& text) { return line_containing(PYTHON_TRAIN_LOOP, text); }

class PythonReports : public InstalledPythonTest {
 protected:
  void SetUp() override {
    InstalledPythonTest::SetUp();
    if (IsSkipped()) return;
    // With the tool's module on the path, each step is a phase: growth's windows are the steps.
    run_ = run_traced(interpreter_->executable, {"-B", PYTHON_TRAIN_LOOP, "--steps", "20"},
                      {{"PYTHONPATH", GMT_PYTHON_MODULE_DIR}});
    ASSERT_EQ(run_.result.exit_code, 0) << run_.result.out << run_.result.err;
  }
  ProcessResult report(std::vector<std::string> args) {
    args.push_back(run_.trace);
    return run_gpumemtrace(args);
  }
  // Python 3.10 code objects have no qualified name: the plain name is recorded there.
  std::string q(const std::string& qualname) const {
    return GetParam() >= 11 ? qualname : qualname.substr(qualname.rfind('.') + 1);
  }

  TracedRun run_;
};

TEST_P(PythonReports, GrowthFindsTheAccumulatingListByItsPythonFrames) {
  ProcessResult growth = report({"growth", "--json"});
  ASSERT_EQ(growth.exit_code, 0) << growth.err;
  Json json = Json::parse(growth.out);
  ASSERT_EQ(json["growth"].size(), 1u) << growth.out;  // the losses; not the activations freed every step
  EXPECT_EQ(json["growth_windows"]["phase"], "step");
  EXPECT_EQ(json["growth_windows"]["instances"], 20);
  EXPECT_EQ(json["growth_windows"]["windows"], 10);
  const Json& entry = json["growth"][0];
  // 10 windows of 2 steps; the floor of the last (steps 19 and 20) is the 18 losses kept before step 19.
  EXPECT_EQ(entry["bytes"], 18u << 20);
  EXPECT_EQ(entry["windows"], 9);
  std::vector<Json> python;
  for (const Json& frame : entry["stack"])
    if (frame["kind"] == "python") python.push_back(frame);
  ASSERT_GE(python.size(), 4u) << entry["stack"].dump();
  EXPECT_EQ(python[0]["function"], q("Cuda.alloc"));
  EXPECT_EQ(python[0]["line"], example_line("error = self.runtime.cudaMalloc("));
  EXPECT_EQ(python[1]["function"], q("Model.loss"));
  EXPECT_EQ(python[1]["line"], example_line("return self.cuda.alloc(MiB)"));
  EXPECT_EQ(python[2]["function"], "train_step");
  EXPECT_EQ(python[2]["line"], example_line("loss = model.loss()"));
  EXPECT_EQ(python[3]["function"], "main");
  EXPECT_TRUE(std::string(python[0]["file"]).ends_with("examples/python/train_loop.py")) << python[0]["file"];
}

TEST_P(PythonReports, TextShowsTheUsersCodeFirstAndEverythingWithAllFrames) {
  ProcessResult growth = report({"growth"});
  ASSERT_EQ(growth.exit_code, 0) << growth.err;
  std::string first = "      train_loop.py:" + std::to_string(example_line("error = self.runtime.cudaMalloc(")) +
                      " in " + q("Cuda.alloc") + "\n";
  EXPECT_NE(growth.out.find("rose in"), std::string::npos) << growth.out;
  EXPECT_NE(growth.out.find(first), std::string::npos) << growth.out;
  EXPECT_EQ(growth.out.find("_ctypes"), std::string::npos) << growth.out;
  EXPECT_EQ(growth.out.find("cudaMalloc ("), std::string::npos) << growth.out;

  ProcessResult all = report({"growth", "--all-frames"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE(all.out.find("cudaMalloc ("), std::string::npos) << all.out;  // the runtime's frame is back
  EXPECT_NE(all.out.find(first), std::string::npos) << all.out;
}

TEST_P(PythonReports, LeaksNameThePythonFunctionsThatAllocated) {
  ProcessResult leaks = report({"leaks"});
  ASSERT_EQ(leaks.exit_code, 0) << leaks.err;
  EXPECT_NE(leaks.out.find("32.0 MiB in 4 allocations of device 0"), std::string::npos) << leaks.out;
  EXPECT_NE(leaks.out.find("20.0 MiB in 20 allocations of device 0"), std::string::npos) << leaks.out;
  EXPECT_NE(leaks.out.find("train_loop.py:" + std::to_string(example_line("loss = model.loss()")) + " in train_step"),
            std::string::npos)
      << leaks.out;
}

INSTANTIATE_TEST_SUITE_P(Interpreters, PythonReports, testing::Values(10u, 11u, 12u, 13u), python_minor_name);

}  // namespace
}  // namespace gpumemtrace::test
