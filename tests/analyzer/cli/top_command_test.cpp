// gpumemtrace top on a running traced program: programs/step_workload.cpp on the simulated device, paused in
// step 12 (its activations live, the step open) while the tests read its trace, then released. Its figures then:
// 64 MiB of weights, 12 × 4 MiB kept, 32 MiB of activations = 144 MiB in 14 allocations; 25 allocations, 11 frees.
// The simulated NVML lists another process on the device: pid 4242, "python train.py", 256 MiB.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "common/size_units.h"
#include "tests/support/source_lines.h"
#include "tests/support/subprocess.h"
#include "tests/support/traced_run.h"

extern char** environ;

namespace gpumemtrace::test {
namespace {

using Json = nlohmann::json;

// `gpumemtrace run --sim` of the step workload, paused in step 12 until release().
class PausedProgram : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = make_temp_dir();
    trace_ = dir_ + "/paused.trace";
    std::string fifo = dir_ + "/release";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    int out[2];
    ASSERT_EQ(pipe(out), 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    setenv("STEP_WORKLOAD_PAUSE_AT", "12", 1);
    setenv("STEP_WORKLOAD_FIFO", fifo.c_str(), 1);
    setenv("GPUMEMTRACE_SIM_OTHERS_MEMORY", "4242:python train.py:256MiB", 1);
    std::string analyzer = analyzer_path(), program = bin_dir() + "/report_prog_steps";
    std::vector<std::string> args = {analyzer, "run", "--sim-memory", "1GiB", "-o", trace_, "--", program, "20", "4", "32"};
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    ASSERT_EQ(posix_spawn(&run_pid_, analyzer.c_str(), &actions, nullptr, argv.data(), environ), 0);
    unsetenv("STEP_WORKLOAD_PAUSE_AT");
    unsetenv("STEP_WORKLOAD_FIFO");
    unsetenv("GPUMEMTRACE_SIM_OTHERS_MEMORY");
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    FILE* from_program = fdopen(out[0], "r");
    ASSERT_EQ(std::fscanf(from_program, "paused %ld", &pid_), 1);
    fclose(from_program);
    release_ = open(fifo.c_str(), O_WRONLY | O_CLOEXEC);  // returns once the program reads it: it is paused
    ASSERT_GE(release_, 0);
  }
  void TearDown() override {
    release();
    if (run_pid_ > 0) waitpid(run_pid_, &run_status_, 0);
  }
  // The program finishes its 20 steps and exits; `run` with it.
  int release() {
    if (release_ >= 0) close(release_);
    release_ = -1;
    if (run_pid_ > 0 && waitpid(run_pid_, &run_status_, 0) == run_pid_) run_pid_ = 0;
    return run_status_;
  }

  std::string pid() const { return std::to_string(pid_); }
  std::string dir_, trace_;
  long pid_ = 0;
  pid_t run_pid_ = 0;
  int run_status_ = -1;
  int release_ = -1;
};

std::string stack_line(const std::string& function) {
  std::string source = STEP_WORKLOAD_SOURCE;
  auto line = [&](const std::string& text) { return std::to_string(line_containing(source, text)); };
  return "allocate (step_workload.cpp:" + line("if (cudaMalloc(&ptr, bytes)") + ") ← " + function +
         " (step_workload.cpp:" + line("void* ptr = allocate(bytes);  // the line that keeps") + ")";
}

TEST_F(PausedProgram, TopOnceJsonHasTheSummaryOfTheTraceAtThatMoment) {
  ProcessResult top = run_gpumemtrace({"top", "--once", "--json", pid()});
  ProcessResult summary = run_gpumemtrace({"summary", "--json", trace_});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_EQ(top.err, "");
  Json frame = Json::parse(top.out);
  Json expected = Json::parse(summary.out);
  EXPECT_EQ(frame["summary"], expected);  // every figure, the trace header's path and event count included
  const Json& device = frame["summary"]["devices"][0];
  EXPECT_EQ(device["final_bytes"], 144 * kMiB);
  EXPECT_EQ(device["peak_bytes"], 144 * kMiB);
  EXPECT_EQ(device["allocations"], 25);
  EXPECT_EQ(device["frees"], 11);
  EXPECT_EQ(frame["summary"]["trace"]["complete"], false);

  const Json& live = frame["live"];
  EXPECT_EQ(live["pid"], pid_);
  EXPECT_EQ(live["ended"], false);
  EXPECT_EQ(live["phase"], "step");
  EXPECT_EQ(live["step_phase"], "step");
  EXPECT_EQ(live["step"]["number"], 12);
  EXPECT_EQ(live["step"]["ended"], false);
  EXPECT_EQ(live["step"]["allocated_bytes"], 36 * kMiB);  // 4 MiB kept + 32 MiB of activations so far
  EXPECT_EQ(live["last_ended_step"]["number"], 11);
  EXPECT_EQ(live["last_ended_step"]["left_live_bytes"], 4 * kMiB);
  EXPECT_EQ(live["last_ended_step"]["left_live"][0]["stack"][3]["function"], "keep_for_logging");
  ASSERT_EQ(live["nvml"].size(), 1u);
  EXPECT_EQ(live["nvml"][0]["moment"], "start");
  EXPECT_EQ(live["nvml"][0]["total_bytes"], 1024 * kMiB);
  EXPECT_EQ(live["nvml"][0]["free_bytes"], 768 * kMiB);
  EXPECT_EQ(live["nvml"][0]["other_processes"],
            Json::parse(R"([{"pid": 4242, "command": "python train.py", "bytes": 268435456}])"));
  EXPECT_EQ(release(), 0);
}

TEST_F(PausedProgram, TopOnceTextShowsTheStepAndTheStacks) {
  ProcessResult top = run_gpumemtrace({"top", "--once", pid()});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_TRUE(top.out.starts_with("gpumemtrace top: process " + pid() + " is running, at ")) << top.out;
  EXPECT_NE(top.out.find("\nphase now: step\nstep: 12 of phase step, running since "), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("\ngrew in step 11: 4.00 MiB in 1 allocation made in it still live at its end\n"
                         "    4.00 MiB      1×  device 0           " +
                         stack_line("keep_for_logging")),
            std::string::npos)
      << top.out;
  EXPECT_NE(top.out.find("\n    48.0 MiB     12×  device 0           " + stack_line("keep_for_logging")),
            std::string::npos)
      << top.out;
  EXPECT_NE(top.out.find("when the trace stops 144 MiB in 14 allocations; 25 allocations, 11 frees"), std::string::npos)
      << top.out;
  EXPECT_NE(top.out.find("\nNVML device 0 (start "), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("): 768 MiB free of 1.00 GiB; pid 4242 (python train.py) 256 MiB\n"), std::string::npos)
      << top.out;
  EXPECT_EQ(release(), 0);

  // The process has ended: it can no longer be attached to, and its trace is complete.
  ProcessResult gone = run_gpumemtrace({"top", "--once", pid()});
  EXPECT_EQ(gone.exit_code, 2);
  EXPECT_EQ(gone.err, "gpumemtrace top: there is no process " + pid() + "\n");
  ProcessResult file = run_gpumemtrace({"top", "--once", "--json", trace_});
  ASSERT_EQ(file.exit_code, 0) << file.err;
  Json frame = Json::parse(file.out);
  EXPECT_EQ(frame["live"]["ended"], true);
  EXPECT_EQ(frame["live"]["pid"], nullptr);
  EXPECT_EQ(frame["live"]["step"]["number"], 20);
  EXPECT_EQ(frame["summary"]["devices"][0]["allocations"], 41);
  EXPECT_EQ(frame["summary"]["devices"][0]["final_bytes"], 0);
}

// Runs `command` on a pseudo-terminal (script(1)) as a user would, its screen written to `screen`, the keys
// typed read from `keys` (else none); returns its pid.
pid_t spawn_on_terminal(const std::string& command, const std::string& screen, int keys = -1) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, screen.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (keys >= 0)
    posix_spawn_file_actions_adddup2(&actions, keys, STDIN_FILENO);
  else
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  // In the C locale: the frame's UTF-8 must be drawn whatever the locale. script runs $SHELL -c, here /bin/sh
  // whatever the caller's SHELL (an empty one is no shell at all); `exec`, or dash would stay in between and
  // die of the terminal's SIGINT itself.
  std::vector<std::string> args = {"env", "SHELL=/bin/sh", "script", "-qec",
                                   "exec env TERM=xterm LC_ALL=C " + command, "/dev/null"};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  EXPECT_EQ(posix_spawnp(&pid, "env", &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

int wait_status(pid_t pid) {
  int status = -1;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST_F(PausedProgram, TheLiveViewRedrawsUntilTheProcessEndsAndLeavesTheLastFrame) {
  std::string screen = dir_ + "/screen";
  pid_t top = spawn_on_terminal(analyzer_path() + " top --interval 0.1 " + pid(), screen);
  std::string running = "gpumemtrace top: process " + pid() + " is running, at ";
  // A whole frame: the screen file is written as the frame is drawn, its header first and "q: quit" last.
  auto drawn_whole = [&] {
    std::string shown = read_file(screen);
    return shown.find(running) != std::string::npos && shown.find("q: quit") != std::string::npos;
  };
  for (int tries = 0; tries < 200 && !drawn_whole(); ++tries) usleep(50'000);
  std::string drawn = read_file(screen);
  EXPECT_NE(drawn.find(running), std::string::npos) << drawn;
  EXPECT_NE(drawn.find("q: quit"), std::string::npos) << drawn;
  EXPECT_NE(drawn.find("12×  device 0"), std::string::npos) << drawn;  // UTF-8 drawn, whatever the locale
  EXPECT_EQ(release(), 0);
  EXPECT_EQ(wait_status(top), 0);
  std::string shown = read_file(screen);
  size_t last = shown.find("gpumemtrace top: process " + pid() + " has ended, at ");
  ASSERT_NE(last, std::string::npos) << shown;
  std::string frame = shown.substr(last);  // after the screen was given back: plain lines
  EXPECT_NE(frame.find("step: 20 of phase step, ended at "), std::string::npos) << frame;
  EXPECT_NE(frame.find("\r\n    4.00 MiB      1×  device 0           " + stack_line("keep_for_logging")),
            std::string::npos)
      << frame;
}

// q and Ctrl-C (typed on the terminal: its SIGINT) leave the view cleanly; the process runs on.
TEST_F(PausedProgram, QAndCtrlCQuitTheViewAndLeaveTheProcessRunning) {
  for (std::string key : {"q", "\x03"}) {
    std::string screen = dir_ + "/screen";
    int keys[2];
    ASSERT_EQ(pipe2(keys, O_CLOEXEC), 0);
    pid_t top = spawn_on_terminal(analyzer_path() + " top --interval 0.1 " + pid(), screen, keys[0]);
    close(keys[0]);
    std::string running = "gpumemtrace top: process " + pid() + " is running, at ";
    for (int tries = 0; tries < 200 && read_file(screen).find(running) == std::string::npos; ++tries) usleep(50'000);
    ASSERT_EQ(write(keys[1], key.data(), key.size()), 1);
    EXPECT_EQ(wait_status(top), 0) << "key " << static_cast<int>(key[0]);
    close(keys[1]);
    std::string shown = read_file(screen);
    EXPECT_NE(shown.find(running), std::string::npos) << shown;
    EXPECT_EQ(shown.find(" has ended, at "), std::string::npos) << shown;
    EXPECT_NE(shown.rfind("\x1b[?1049l"), std::string::npos) << shown;  // the terminal's own screen is back
    EXPECT_EQ(kill(static_cast<pid_t>(pid_), 0), 0);
  }
  EXPECT_EQ(release(), 0);
}

TEST(TopCommand, RunTopShowsTheProgramToItsEndAndKeepsItsOutput) {
  std::string dir = make_temp_dir();
  std::string screen = dir + "/screen", trace = dir + "/run.trace";
  // On 150 MiB step 14 needs 96 + 4·14 = 152 MiB: the program prints that it ran out of memory and exits 3.
  pid_t run = spawn_on_terminal(analyzer_path() + " run --top --sim-memory 150MiB -o " + trace + " -- " + bin_dir() +
                                    "/report_prog_steps 20 4 32",
                                screen);
  EXPECT_EQ(wait_status(run), 3);
  std::string shown = read_file(screen);
  size_t last = shown.find(" has ended, at ");
  ASSERT_NE(last, std::string::npos) << shown;
  std::string frame = shown.substr(last);
  EXPECT_NE(frame.find("step: 14 of phase step, running since "), std::string::npos) << frame;
  EXPECT_NE(frame.find(" on device 0: cudaMalloc of 32.0 MiB with 30.0 MiB free of 150 MiB\r\n"), std::string::npos)
      << frame;
  EXPECT_EQ(read_file(trace + ".out"), "out of memory in step 14\n");
  EXPECT_EQ(shown.find("out of memory in step 14"), std::string::npos) << shown;
  EXPECT_NE(shown.find("gpumemtrace: the output of " + bin_dir() + "/report_prog_steps is in " + trace + ".out"),
            std::string::npos)
      << shown;
}

TEST(TopCommand, BadInputIsAClearErrorWithExitStatus2) {
  ProcessResult none = run_gpumemtrace({"top", "--once", "999999999"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(none.err, "gpumemtrace top: there is no process 999999999\n");

  std::string self = std::to_string(getpid());  // this test: alive, not traced
  ProcessResult untraced = run_gpumemtrace({"top", "--once", self});
  EXPECT_EQ(untraced.exit_code, 2);
  EXPECT_EQ(untraced.err,
            "gpumemtrace top: process " + self + " is not traced by gpumemtrace (libgpumemtrace.so is not loaded in it)\n");

  ProcessResult missing = run_gpumemtrace({"top", "--once", "/nonexistent/x.trace"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(missing.err.starts_with("gpumemtrace: /nonexistent/x.trace: ")) << missing.err;
  EXPECT_EQ(missing.out, "");

  std::string dir = make_temp_dir();
  std::string text = dir + "/notes.txt";
  FILE* file = std::fopen(text.c_str(), "w");
  std::fputs("not a trace\n", file);
  std::fclose(file);
  ProcessResult foreign = run_gpumemtrace({"top", "--once", text});
  EXPECT_EQ(foreign.exit_code, 2);
  EXPECT_TRUE(foreign.err.starts_with("gpumemtrace: " + text + ": ")) << foreign.err;

  ProcessResult json_live = run_gpumemtrace({"top", "--json", self});
  EXPECT_EQ(json_live.exit_code, 1);
  EXPECT_EQ(json_live.err, "gpumemtrace top: --json needs --once: the live view is for a terminal (see gpumemtrace top --help)\n");
  ProcessResult no_terminal = run_gpumemtrace({"top", self});  // stdout is a pipe here
  EXPECT_EQ(no_terminal.exit_code, 1);
  EXPECT_EQ(no_terminal.err, "gpumemtrace top: the live view needs a terminal: give --once (and --json) for one frame (see "
            "gpumemtrace top --help)\n");
  ProcessResult run_top = run_gpumemtrace({"run", "--top", "--sim", "--", "/bin/true"});
  EXPECT_EQ(run_top.exit_code, 1);
  EXPECT_EQ(run_top.err, "gpumemtrace run: --top needs a terminal (`gpumemtrace top --once PID` prints one frame "
                         "without) (see gpumemtrace run --help)\n");
  ProcessResult interval = run_gpumemtrace({"top", "--once", "--interval", "0", self});
  EXPECT_EQ(interval.exit_code, 1);
  EXPECT_EQ(interval.err, "gpumemtrace top: --interval 0 is not a number of seconds from 0.1 to 3600 (see gpumemtrace top --help)\n");
}

}  // namespace
}  // namespace gpumemtrace::test
