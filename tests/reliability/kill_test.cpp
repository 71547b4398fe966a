// SIGKILL at random moments of a multi-threaded workload: every allocation the program was told had
// succeeded (and logged) before the kill is in the trace, and every trace left behind is analyzed with
// exit 0 and flagged incomplete. GPUMEMTRACE_TEST_KILLS sets the number of kills (100 by default).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>
#include <thread>

#include "tests/support/trace_facts.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {

pid_t spawn(std::vector<std::string> argv, const EnvChanges& changes) {
  std::vector<std::string> env = environment_with(changes);
  auto c_argv = c_strings(argv);
  auto c_env = c_strings(env);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, c_argv[0], &actions, nullptr, c_argv.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

off_t file_size(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? st.st_size : 0;
}

std::multiset<uint64_t> acknowledged_sizes(const std::string& log) {
  std::string bytes = read_file(log);
  std::multiset<uint64_t> sizes;
  for (size_t at = 0; at + 8 <= bytes.size(); at += 8) {
    uint64_t size;
    std::memcpy(&size, bytes.data() + at, 8);
    sizes.insert(size);
  }
  return sizes;
}

int kills() {
  const char* value = std::getenv("GPUMEMTRACE_TEST_KILLS");
  return value ? std::atoi(value) : 100;
}

TEST(KilledAtRandom, EveryAcknowledgedEventIsInTheTraceAndEveryTraceIsAnalyzed) {
  std::mt19937 random(20261123);  // fixed: a failure names its kill, and the same run reproduces it
  std::uniform_int_distribution<int> delay_us(0, 100000);
  const int count = kills();
  uint64_t acknowledged_total = 0;
  for (int k = 0; k < count; ++k) {
    std::string dir = make_temp_dir();
    std::string trace = dir + "/root.trace", log = dir + "/acknowledged";
    int delay = delay_us(random);
    SCOPED_TRACE("kill " + std::to_string(k) + ", " + std::to_string(delay) + " us after the first acknowledgement");
    pid_t pid = spawn({bin_dir() + "/reliability_prog_acknowledged", log, "4"},
                      sim_env({{"LD_PRELOAD", tracer_preload()},
                               {"GPUMEMTRACE_OUTPUT_ROOT", trace},
                               {"GPUMEMTRACE_ROOT_PID", std::nullopt}}));
    ASSERT_GT(pid, 0);
    // The moments are those of the workload: from its first acknowledged event on.
    auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (file_size(log) == 0 && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(delay));
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;

    std::multiset<uint64_t> acknowledged = acknowledged_sizes(log);
    ASSERT_FALSE(acknowledged.empty());
    acknowledged_total += acknowledged.size();
    TraceFacts facts = read_trace(trace);
    ASSERT_EQ(facts.status, trace::Status::Truncated) << facts.error;
    std::multiset<uint64_t> traced;
    for (const auto& a : facts.allocs) traced.insert(a.size);
    size_t lost = 0;
    for (uint64_t size : acknowledged) lost += traced.count(size) == 0;
    ASSERT_EQ(lost, 0u) << "of " << acknowledged.size() << " acknowledged allocations";

    ProcessResult summary = run_gpumemtrace({"summary", trace});
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    EXPECT_NE(summary.out.find("\nINCOMPLETE: the trace stops at "), std::string::npos) << summary.out.substr(0, 600);
  }
  RecordProperty("acknowledged_events", std::to_string(acknowledged_total));
  std::printf("%d kills, %llu acknowledged allocations, 0 lost\n", count,
              static_cast<unsigned long long>(acknowledged_total));
}

// SIGKILL while the tracer makes its trace, in the first milliseconds of a traced process: whatever file it
// left must analyze (exit 0, incomplete). A file extended before its header was written read as 8 MiB of
// zeros ("not a gpumemtrace trace"). The trace is named only once its first records are in it
// (trace_file.h). The kills fall in the first 10 ms, or in twice the time a first run took to make its
// trace when the machine is slower than that, so that many land around the trace's making.
TEST(KilledAtRandom, EveryFileLeftByAKillWhileTheTraceIsMadeIsAnalyzed) {
  auto start = [](const std::string& dir) {
    return spawn({bin_dir() + "/reliability_prog_acknowledged", dir + "/acknowledged", "4"},
                 sim_env({{"LD_PRELOAD", tracer_preload()},
                          {"GPUMEMTRACE_OUTPUT_ROOT", dir + "/root.trace"},
                          {"GPUMEMTRACE_ROOT_PID", std::nullopt}}));
  };
  auto end = [](pid_t pid) {
    kill(pid, SIGKILL);
    int status = 0;
    return waitpid(pid, &status, 0) == pid;
  };
  // Two runs let alone until their trace appears; the second is the measure (the first loads cold caches).
  std::chrono::microseconds made{};
  for (int probe = 0; probe < 2; ++probe) {
    std::string dir = make_temp_dir();
    auto began = std::chrono::steady_clock::now();
    pid_t pid = start(dir);
    ASSERT_GT(pid, 0);
    while (file_size(dir + "/root.trace") == 0 && std::chrono::steady_clock::now() < began + std::chrono::seconds(30))
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    made = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - began);
    ASSERT_TRUE(end(pid));
  }
  int window_us = std::max(10000, static_cast<int>(2 * made.count()));

  std::mt19937 random(20261127);
  std::uniform_int_distribution<int> delay_us(0, window_us);
  const int count = kills();
  int left = 0, with_events = 0;
  for (int k = 0; k < count; ++k) {
    std::string dir = make_temp_dir();
    int delay = delay_us(random);
    SCOPED_TRACE("kill " + std::to_string(k) + ", " + std::to_string(delay) + " us after the start");
    pid_t pid = start(dir);
    ASSERT_GT(pid, 0);
    std::this_thread::sleep_for(std::chrono::microseconds(delay));
    ASSERT_TRUE(end(pid));
    // Every file in the directory but the program's own log is the tracer's.
    for (const std::filesystem::directory_entry& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().filename() == "acknowledged") continue;
      ++left;
      ProcessResult summary = run_gpumemtrace({"summary", entry.path().string()});
      ASSERT_EQ(summary.exit_code, 0) << entry.path() << " (" << file_size(entry.path()) << " bytes): " << summary.err;
      EXPECT_NE(summary.out.find("INCOMPLETE"), std::string::npos) << summary.out.substr(0, 600);
      with_events += read_trace(entry.path()).allocs.empty() ? 0 : 1;
    }
  }
  // Many kills come after the tracer started: the test saw traces being made, not only processes not started.
  EXPECT_GE(left, count / 10);
  std::printf("%d kills 0-%d us after the start (a first trace appeared after %lld us): %d traces left, all analyzed "
              "(%d with allocations)\n",
              count, window_us, static_cast<long long>(made.count()), left, with_events);
}

}  // namespace
}  // namespace gpumemtrace::test
