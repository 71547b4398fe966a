// `gpumemtrace run`: finds the tracer beside itself, passes the tracer's environment, exits as the command
// did. A copy of the binary in a scratch prefix (bin/, lib/) with a stand-in tracer library makes these
// independent of the real tracer; the last test checks the build tree's own layout.
#include <gtest/gtest.h>

#include <filesystem>
#include <list>
#include <map>
#include <sstream>

#include <fmt/core.h>

#include "common/size_units.h"
#include "tests/support/decode_helpers.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_files.h"
#include "trace/packed/packed_format.h"
#include "trace/packed/unpack.h"

namespace gpumemtrace::test {
namespace {

namespace fs = std::filesystem;

std::map<std::string, std::string> parse_env(const std::string& text) {
  std::map<std::string, std::string> env;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    size_t eq = line.find('=');
    if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return env;
}

class RunCommand : public testing::Test {
 protected:
  // A prefix with bin/gpumemtrace and, if asked, lib/libgpumemtrace.so and a simulated device folder.
  std::string make_prefix(bool with_library = true, const std::string& sim_dir = "") {
    std::string prefix = scratch_.emplace_back().path();
    fs::create_directories(prefix + "/bin");
    fs::copy_file(analyzer_path(), prefix + "/bin/gpumemtrace");
    if (with_library) {
      fs::create_directories(prefix + "/lib");
      fs::copy_file(STAND_IN_TRACER_PATH, prefix + "/lib/libgpumemtrace.so");
    }
    if (!sim_dir.empty()) fs::create_directories(prefix + "/" + sim_dir);
    return prefix;
  }

  ProcessResult run(const std::string& prefix, std::vector<std::string> args, const EnvChanges& env = {}) {
    args.insert(args.begin(), {prefix + "/bin/gpumemtrace", "run"});
    return run_process(args, env);
  }

  std::list<ScratchDir> scratch_;
  std::string prefix_ = make_prefix();
  std::string dir_ = scratch_.emplace_back().path();
};

TEST_F(RunCommand, ExitsWithTheCommandsExitCode) {
  ProcessResult r = run(prefix_, {"-o", dir_ + "/t.trace", "--", "/bin/sh", "-c", "exit 7"});
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.err, "gpumemtrace: no trace was written (see warnings above)\n");
  EXPECT_EQ(run(prefix_, {"/bin/true"}).exit_code, 0);
}

TEST_F(RunCommand, PassesTheTracerEnvironment) {
  // (verify_asan_link_order=0: gpumemtrace itself runs with this LD_PRELOAD in sanitizer builds.)
  ProcessResult r = run(
      prefix_, {"--", "/usr/bin/env"},
      {{"LD_PRELOAD", STAND_IN_TRACER_PATH}, {"GPUMEMTRACE_OUTPUT", {}}, {"ASAN_OPTIONS", "verify_asan_link_order=0"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto env = parse_env(r.out);
  EXPECT_EQ(env["LD_PRELOAD"], prefix_ + "/lib/libgpumemtrace.so:" STAND_IN_TRACER_PATH);
  std::string pid = env["GPUMEMTRACE_ROOT_PID"];
  ASSERT_FALSE(pid.empty());
  EXPECT_EQ(pid.find_first_not_of("0123456789"), std::string::npos) << pid;
  std::string root = (fs::current_path() / ("gpumemtrace-" + pid + ".trace")).string();
  EXPECT_EQ(env["GPUMEMTRACE_OUTPUT_ROOT"], root);
  EXPECT_EQ(env["GPUMEMTRACE_OUTPUT"], root + ".%p");
}

TEST_F(RunCommand, CuptiSwitchesCuptiOnBesideThePreloadedHooks) {
  ProcessResult r = run(prefix_, {"--cupti", "--", "/usr/bin/env"},
                        {{"LD_PRELOAD", {}}, {"GPUMEMTRACE_CUPTI", {}}, {"CUDA_INJECTION64_PATH", {}}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto env = parse_env(r.out);
  EXPECT_EQ(env["LD_PRELOAD"], prefix_ + "/lib/libgpumemtrace.so");
  EXPECT_EQ(env["GPUMEMTRACE_CUPTI"], "1");
  EXPECT_EQ(env.count("CUDA_INJECTION64_PATH"), 0u);
}

TEST_F(RunCommand, InjectNamesTheTracerForTheDriverInsteadOfPreloadingIt) {
  ProcessResult r = run(prefix_, {"--inject", "-o", dir_ + "/t.trace", "--", "/usr/bin/env"},
                        {{"LD_PRELOAD", {}}, {"GPUMEMTRACE_CUPTI", {}}, {"CUDA_INJECTION64_PATH", {}}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto env = parse_env(r.out);
  EXPECT_EQ(env["CUDA_INJECTION64_PATH"], prefix_ + "/lib/libgpumemtrace.so");
  EXPECT_EQ(env.count("LD_PRELOAD"), 0u);
  EXPECT_EQ(env["GPUMEMTRACE_OUTPUT_ROOT"], dir_ + "/t.trace");
  // No driver here loads the variable's library: the run says why there is no trace.
  EXPECT_EQ(r.err, "gpumemtrace: no trace was written: no CUDA driver loaded the tracer (--inject needs one)\n");
}

TEST_F(RunCommand, OutputPatternIsExpandedForTheTopProcess) {
  EnvChanges env = {{"LD_PRELOAD", {}}, {"GPUMEMTRACE_OUTPUT", {}}, {"RANK", "3"}};
  ProcessResult r = run(prefix_, {"-o", dir_ + "/x-%r.gmt", "--", "/usr/bin/env"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto vars = parse_env(r.out);
  EXPECT_EQ(vars["GPUMEMTRACE_OUTPUT_ROOT"], dir_ + "/x-3.gmt");
  EXPECT_EQ(vars["GPUMEMTRACE_OUTPUT"], dir_ + "/x-3.gmt.%p");  // children beside it

  env["RANK"] = std::nullopt;
  env["SLURM_PROCID"] = "5";
  r = run(prefix_, {"-o", dir_ + "/y-%r-%p-100%%.gmt", "--", "/usr/bin/env"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  vars = parse_env(r.out);
  EXPECT_EQ(vars["GPUMEMTRACE_OUTPUT_ROOT"], dir_ + "/y-5-" + vars["GPUMEMTRACE_ROOT_PID"] + "-100%.gmt");
  EXPECT_EQ(vars["GPUMEMTRACE_OUTPUT"], dir_ + "/y-5-" + vars["GPUMEMTRACE_ROOT_PID"] + "-100%%.gmt.%p");
}

TEST_F(RunCommand, OutputPathIsMadeAbsoluteAndAUsersPatternIsKept) {
  for (std::vector<std::string> option : std::vector<std::vector<std::string>>{{"-o", "relative.trace"},
                                                                               {"--output", "relative.trace"},
                                                                               {"--output=relative.trace"},
                                                                               {"-orelative.trace"}}) {
    option.push_back("/usr/bin/env");
    ProcessResult r = run(prefix_, option, {{"GPUMEMTRACE_OUTPUT", "/tmp/mine-%p.trace"}});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto env = parse_env(r.out);
    EXPECT_EQ(env["GPUMEMTRACE_OUTPUT_ROOT"], (fs::current_path() / "relative.trace").string());
    EXPECT_EQ(env["GPUMEMTRACE_OUTPUT"], "/tmp/mine-%p.trace");
  }
}

TEST_F(RunCommand, PercentInTheTracePathIsEscapedInThePattern) {
  ProcessResult r = run(prefix_, {"-o", dir_ + "/100%/t.trace", "/usr/bin/env"}, {{"GPUMEMTRACE_OUTPUT", {}}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(parse_env(r.out)["GPUMEMTRACE_OUTPUT"], dir_ + "/100%%/t.trace.%p");
}

TEST_F(RunCommand, ReportsTheTraceItWrote) {
  ProcessResult r =
      run(prefix_, {"-o", dir_ + "/t.trace", "/bin/sh", "-c", "printf abc > \"$GPUMEMTRACE_OUTPUT_ROOT\""});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "gpumemtrace: trace written to " + dir_ + "/t.trace (3 B)\n");
}

TEST_F(RunCommand, PackPacksTheFinishedTraceOrLeavesItAsWritten) {
  std::vector<uint8_t> plain = every_record_trace().bytes();
  std::string source = write_file(dir_ + "/source.trace", plain);
  ProcessResult r = run(prefix_, {"--pack", "-o", dir_ + "/t.trace", "/bin/sh", "-c", "cp \"$0\" \"$GPUMEMTRACE_OUTPUT_ROOT\"", source});
  EXPECT_EQ(r.exit_code, 0);
  std::string text = read_file(dir_ + "/t.trace");
  std::vector<uint8_t> now(text.begin(), text.end());
  EXPECT_TRUE(packed::is_packed(now));
  EXPECT_EQ(packed::unpack(now), plain);
  EXPECT_EQ(r.err, "gpumemtrace: trace written to " + dir_ + "/t.trace (" + format_size(plain.size()) +
                       ")\ngpumemtrace: trace packed into " + format_size(now.size()) + " (" +
                       fmt::format("{:.2f}", static_cast<double>(now.size()) / 21) + " bytes per event)\n");

  ProcessResult bad = run(prefix_, {"--pack", "-o", dir_ + "/bad.trace", "/bin/sh", "-c", "printf abc > \"$GPUMEMTRACE_OUTPUT_ROOT\""});
  EXPECT_EQ(bad.exit_code, 0);
  EXPECT_EQ(bad.err, "gpumemtrace: trace written to " + dir_ + "/bad.trace (3 B)\ngpumemtrace: warning: the trace was not "
                     "packed (it stays as written): not a gpumemtrace trace\n");
  EXPECT_EQ(read_file(dir_ + "/bad.trace"), "abc");
}

TEST_F(RunCommand, AnOldFileIsNotTakenForTheTrace) {
  write_file(dir_ + "/old.trace", {'x'});
  ProcessResult r = run(prefix_, {"-o", dir_ + "/old.trace", "/bin/true"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "gpumemtrace: no trace was written (see warnings above)\n");
}

TEST_F(RunCommand, CommandKilledBySignalExitsWith128PlusTheSignal) {
  EXPECT_EQ(run(prefix_, {"/bin/sh", "-c", "kill -KILL $$"}).exit_code, 128 + 9);
}

TEST_F(RunCommand, IgnoresInterruptAndForwardsTerminate) {
  ProcessResult r =
      run(prefix_, {"/bin/sh", "-c", "kill -INT $PPID; kill -QUIT $PPID; kill -TERM $PPID; exec sleep 20"});
  EXPECT_EQ(r.term_signal, 0);
  EXPECT_EQ(r.exit_code, 128 + 15);
  EXPECT_EQ(r.err, "gpumemtrace: no trace was written (see warnings above)\n");
}

TEST_F(RunCommand, CommandThatCannotStartExitsLikeAShell) {
  ProcessResult missing = run(prefix_, {dir_ + "/no-such-program"});
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_EQ(missing.err, "gpumemtrace: cannot run " + dir_ + "/no-such-program: No such file or directory\n");
  write_file(dir_ + "/not-executable", {'#', '!', '/', 'b', 'i', 'n', '/', 's', 'h', '\n'});
  ProcessResult denied = run(prefix_, {dir_ + "/not-executable"});
  EXPECT_EQ(denied.exit_code, 126);
  EXPECT_EQ(denied.err, "gpumemtrace: cannot run " + dir_ + "/not-executable: Permission denied\n");
}

TEST_F(RunCommand, SimPutsTheSimulatedDeviceFirstOnTheLibraryPath) {
  std::string build_tree = make_prefix(true, "lib/sim");
  ProcessResult r = run(build_tree, {"--sim", "/usr/bin/env"}, {{"LD_LIBRARY_PATH", "/opt/x"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto env = parse_env(r.out);
  EXPECT_EQ(env["LD_LIBRARY_PATH"], build_tree + "/lib/sim:/opt/x");
  // The simulated runtime is also preloaded, after the tracer: PyTorch's libraries would find NVIDIA's through
  // their DT_RPATH first.
  EXPECT_EQ(env["LD_PRELOAD"], build_tree + "/lib/libgpumemtrace.so:" + build_tree + "/lib/sim/libcudart.so.13");
  EXPECT_EQ(env["TORCH_CUDA_EXPANDABLE_SEGMENTS_IPC"], "0");
  EXPECT_EQ(env.count("GPUMEMTRACE_SIM_MEMORY"), 0u);

  std::string installed = make_prefix(true, "lib/gpumemtrace/sim");
  r = run(installed, {"--sim-memory", "1.5GiB", "--sim-devices=2", "--", "/usr/bin/env"},
          {{"LD_LIBRARY_PATH", {}}, {"TORCH_CUDA_EXPANDABLE_SEGMENTS_IPC", "1"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  env = parse_env(r.out);
  EXPECT_EQ(env["LD_LIBRARY_PATH"], installed + "/lib/gpumemtrace/sim");
  EXPECT_EQ(env["TORCH_CUDA_EXPANDABLE_SEGMENTS_IPC"], "1") << "the user's own setting is kept";
  EXPECT_EQ(env["GPUMEMTRACE_SIM_MEMORY"], "1.5GiB");
  EXPECT_EQ(env["GPUMEMTRACE_SIM_DEVICES"], "2");
}

TEST_F(RunCommand, SimWithoutTheSimulatedDeviceFailsClearly) {
  ProcessResult r = run(prefix_, {"--sim", "/bin/true"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "gpumemtrace: the simulated device is not installed (looked in " + prefix_ + "/lib/sim and " +
                       prefix_ + "/lib/gpumemtrace/sim)\n");
}

TEST_F(RunCommand, MissingTracerLibraryFailsClearly) {
  std::string prefix = make_prefix(false);
  ProcessResult r = run(prefix, {"/bin/true"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "gpumemtrace: the tracer library is missing: " + prefix +
                       "/lib/libgpumemtrace.so (build or reinstall gpumemtrace)\n");
}

TEST_F(RunCommand, UsageErrorsExitOne) {
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{{},
                                                                             {"--"},
                                                                             {"-o"},
                                                                             {"--sim-memory", "lots", "/bin/true"},
                                                                             {"--sim-devices", "two", "/bin/true"},
                                                                             {"--frobnicate", "/bin/true"},
                                                                             {"-o", dir_, "/bin/true"}}) {
    ProcessResult r = run(prefix_, args);
    EXPECT_EQ(r.exit_code, 1) << (args.empty() ? "" : args[0]);
    EXPECT_TRUE(r.err.starts_with("gpumemtrace run: ")) << r.err;
    EXPECT_TRUE(r.err.ends_with("(see gpumemtrace run --help)\n")) << r.err;
  }
}

TEST_F(RunCommand, HelpIsForRunUnlessItFollowsTheCommand) {
  ProcessResult help = run(prefix_, {"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(help.out.starts_with("usage: gpumemtrace run ")) << help.out;
  ProcessResult echoed = run(prefix_, {"/usr/bin/printf", "%s\n", "--help"});
  EXPECT_EQ(echoed.exit_code, 0);
  EXPECT_EQ(echoed.out, "--help\n");
}

// The build tree itself: build/bin/gpumemtrace finds build/lib/libgpumemtrace.so once the tracer is built,
// and says clearly that it is missing before.
TEST_F(RunCommand, BuildTreeLayout) {
  std::string library = lib_dir() + "/libgpumemtrace.so";
  ProcessResult r =
      run_gpumemtrace({"run", "-o", dir_ + "/t.trace", "/bin/sh", "-c", "exit 7"});
  if (fs::exists(library)) {
    EXPECT_EQ(r.exit_code, 7) << r.err;
  } else {
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err, "gpumemtrace: the tracer library is missing: " + library + " (build or reinstall gpumemtrace)\n");
  }
}

}  // namespace
}  // namespace gpumemtrace::test
