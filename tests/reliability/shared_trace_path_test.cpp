// Two live processes given one trace path. The trace is written through a shared mapping: a second process
// that truncated the file would kill the first with SIGBUS. Each program must end as it does untraced, the
// second trace go to PATH.PID with one line on stderr saying so, and both traces be whole.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "tests/support/trace_facts.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {

constexpr int kPairs = 5000;  // enough for the parent to write past where the child's trace ended (SIGBUS before the fix)

size_t lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

std::vector<uint64_t> alloc_sizes(const TraceFacts& facts) {
  std::vector<uint64_t> sizes;
  for (const trace::Alloc& alloc : facts.allocs) sizes.push_back(alloc.size);
  return sizes;
}

std::vector<uint64_t> sizes_from(uint64_t base, int count) {
  std::vector<uint64_t> sizes;
  for (int i = 0; i < count; ++i) sizes.push_back(base + static_cast<uint64_t>(i));
  return sizes;
}

std::string program() { return bin_dir() + "/reliability_prog_shared_path"; }

// GPUMEMTRACE_OUTPUT names one file, for the traced program and the child it forks (which uses the GPU):
// the child's trace opens while the parent writes into its own.
TEST(SharedTracePath, ForkedChildGivenTheSameOutputGetsATraceOfItsOwn) {
  std::string dir = make_temp_dir(), fixed = dir + "/fixed.trace";
  ProcessResult untraced = run_process({program(), "fork", std::to_string(kPairs)}, sim_env());
  ASSERT_EQ(untraced.exit_code, 0) << untraced.err;
  ProcessResult traced = run_process({program(), "fork", std::to_string(kPairs)},
                                     sim_env({{"LD_PRELOAD", tracer_preload()},
                                              {"GPUMEMTRACE_OUTPUT", fixed},
                                              {"GPUMEMTRACE_OUTPUT_ROOT", std::nullopt},
                                              {"GPUMEMTRACE_ROOT_PID", std::nullopt}}));
  ASSERT_EQ(traced.term_signal, 0) << "killed by signal " << traced.term_signal << "\n" << traced.err;
  EXPECT_EQ(traced.exit_code, 0) << traced.err;
  // The output names the child's pid, which differs between runs: compare its shape, then the exit status.
  ASSERT_TRUE(traced.out.starts_with("child ")) << traced.out;
  EXPECT_EQ(traced.out.substr(traced.out.find(':')), untraced.out.substr(untraced.out.find(':')));
  std::string child = traced.out.substr(6, traced.out.find(':') - 6);

  std::string moved = fixed + "." + child;
  EXPECT_EQ(traced.err, "gpumemtrace[" + child + "]: " + fixed +
                            " is being written by another process: this trace goes to " + moved + "\n");
  TraceFacts parent = read_trace(fixed);
  EXPECT_TRUE(parent.complete()) << parent.error;
  EXPECT_EQ(alloc_sizes(parent), sizes_from(2000, kPairs));
  EXPECT_EQ(parent.frees.size(), static_cast<size_t>(kPairs));
  TraceFacts forked = read_trace(moved);
  EXPECT_TRUE(forked.complete()) << forked.error;
  EXPECT_EQ(forked.pid, std::stoull(child));
  EXPECT_EQ(alloc_sizes(forked), sizes_from(1000, kPairs));
  EXPECT_EQ(forked.frees.size(), static_cast<size_t>(kPairs));

  // The analyzer finds both in their directory.
  ProcessResult summary = run_gpumemtrace({"summary", dir});
  EXPECT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_NE(summary.out.find(child), std::string::npos) << summary.out;
}

// Without /proc (a mount namespace where it is unmounted) the unnamed file cannot be linked later: the trace
// is named at once (trace_file.h), and a forked child given the same path still gets a trace of its own.
TEST(SharedTracePath, WithoutProcTheTraceIsNamedAtOnceAndTheChildStillGetsItsOwn) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // A sanitizer's runtime reads its options (/proc/self/environ) and the threads it stops (/proc/PID/task) from
  // /proc: without it, LeakSanitizer fails every exit whatever ASAN_OPTIONS says.
  GTEST_SKIP() << "the sanitizers need /proc";
#endif
  if (run_process({"unshare", "-m", "sh", "-c", "umount -l /proc"}).exit_code != 0)
    GTEST_SKIP() << "no private mount namespace here";
  std::string dir = make_temp_dir(), fixed = dir + "/fixed.trace";
  std::string script = "umount -l /proc && LD_PRELOAD=\"$1\" exec \"$2\" fork " + std::to_string(kPairs);
  ProcessResult traced = run_process({"unshare", "-m", "sh", "-c", script, "sh", tracer_preload(), program()},
                                     sim_env({{"GPUMEMTRACE_OUTPUT", fixed},
                                              {"GPUMEMTRACE_OUTPUT_ROOT", std::nullopt},
                                              {"GPUMEMTRACE_ROOT_PID", std::nullopt}}));
  ASSERT_EQ(traced.term_signal, 0) << traced.err;
  ASSERT_EQ(traced.exit_code, 0) << traced.err;
  ASSERT_TRUE(traced.out.starts_with("child ")) << traced.out;
  std::string child = traced.out.substr(6, traced.out.find(':') - 6);
  EXPECT_EQ(traced.err, "gpumemtrace[" + child + "]: " + fixed + " is being written by another process: this trace goes to " +
                            fixed + "." + child + "\n");
  EXPECT_EQ(alloc_sizes(read_trace(fixed)), sizes_from(2000, kPairs));
  EXPECT_EQ(alloc_sizes(read_trace(fixed + "." + child)), sizes_from(1000, kPairs));
}

// A `gpumemtrace run` started in the background, its stdout and stderr in files.
struct Background {
  pid_t pid = -1;
  std::string out, err;
};

Background start_run(const std::vector<std::string>& args, const std::string& dir, const std::string& tag) {
  Background run{-1, dir + "/" + tag + ".out", dir + "/" + tag + ".err"};
  std::vector<std::string> argv{analyzer_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> env = environment_with(sim_env({{"GPUMEMTRACE_OUTPUT", std::nullopt}}));
  auto c_argv = c_strings(argv);
  auto c_env = c_strings(env);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, run.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, run.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (posix_spawn(&run.pid, c_argv[0], &actions, nullptr, c_argv.data(), c_env.data()) != 0) run.pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return run;
}

int wait_exit(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool wait_for(const std::string& path) {
  for (int i = 0; i < 30000; ++i) {
    if (file_exists(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// Two runs at once given the same -o: the second starts while the first writes its trace. `output` is -o
// as given; `path` the file it names.
void two_runs_with_one_output(const std::string& dir, const std::string& output, const std::string& path) {
  std::vector<std::string> first_args{"run", "--sim", "-o", output, "--", program(), "wait", dir, "first", "4096"};
  Background first = start_run(first_args, dir, "first");
  ASSERT_GT(first.pid, 0);
  ASSERT_TRUE(wait_for(dir + "/first.ready"));
  std::ofstream(dir + "/second.go").close();  // the second does not wait
  ProcessResult second = run_gpumemtrace({"run", "--sim", "-o", output, "--", program(), "wait", dir, "second", "8192"},
                                         {{"GPUMEMTRACE_OUTPUT", std::nullopt}});
  // The first is still running: its trace is open (and mapped) all through the second run.
  ASSERT_FALSE(file_exists(dir + "/first.go"));
  std::ofstream(dir + "/first.go").close();
  int first_exit = wait_exit(first.pid);

  EXPECT_EQ(first_exit, 0) << read_file(first.err);
  EXPECT_EQ(read_file(first.out), "first done\n");
  std::string first_err = read_file(first.err);
  EXPECT_TRUE(first_err.starts_with("gpumemtrace: trace written to " + path + " (")) << first_err;
  EXPECT_EQ(lines(first_err), 1u) << first_err;
  EXPECT_EQ(second.term_signal, 0);
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.out, "second done\n");
  // One line from the tracer says where the trace went; `run` names the same file.
  ASSERT_EQ(lines(second.err), 2u) << second.err;
  size_t goes = second.err.find(path + " is being written by another process: this trace goes to " + path + ".");
  ASSERT_NE(goes, std::string::npos) << second.err;
  std::string moved = second.err.substr(second.err.find("goes to ") + 8);
  moved = moved.substr(0, moved.find('\n'));
  EXPECT_NE(second.err.find("gpumemtrace: trace written to " + moved + " ("), std::string::npos) << second.err;

  TraceFacts first_trace = read_trace(path);
  EXPECT_TRUE(first_trace.complete()) << first_trace.error;
  EXPECT_EQ(alloc_sizes(first_trace), (std::vector<uint64_t>{4096, 4097}));
  TraceFacts second_trace = read_trace(moved);
  EXPECT_TRUE(second_trace.complete()) << second_trace.error;
  EXPECT_EQ(alloc_sizes(second_trace), (std::vector<uint64_t>{8192, 8193}));
  EXPECT_NE(first_trace.pid, second_trace.pid);
}

TEST(SharedTracePath, TwoRunsGivenTheSameOutput) {
  std::string dir = make_temp_dir();
  two_runs_with_one_output(dir, dir + "/same.trace", dir + "/same.trace");
}

// Without a rank variable every process is rank 0: `-o mem-%r.trace` names one file for all.
TEST(SharedTracePath, RankPatternWithoutARankNamesOneFile) {
  std::string dir = make_temp_dir();
  for (const char* rank : {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"}) ASSERT_EQ(getenv(rank), nullptr);
  two_runs_with_one_output(dir, dir + "/mem-%r.trace", dir + "/mem-0.trace");
}

// A trace left by a process that has ended is replaced, not kept beside a new name.
TEST(SharedTracePath, ATraceLeftByAnEndedRunIsReplaced) {
  std::string dir = make_temp_dir(), path = dir + "/again.trace";
  for (const char* size : {"100", "200"}) {
    std::ofstream(dir + "/again.go").close();
    ProcessResult run = run_gpumemtrace({"run", "--sim", "-o", path, "--", program(), "wait", dir, "again", size},
                                        {{"GPUMEMTRACE_OUTPUT", std::nullopt}});
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_TRUE(run.err.starts_with("gpumemtrace: trace written to " + path + " (")) << run.err;
  }
  TraceFacts facts = read_trace(path);
  EXPECT_EQ(alloc_sizes(facts), (std::vector<uint64_t>{200, 201}));
  EXPECT_FALSE(file_exists(path + ".1"));
}

}  // namespace
}  // namespace gpumemtrace::test
