#include "bench/runner/measured_run.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace gpumemtrace::bench {

namespace {

double now_seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6; }

// RssAnon of a running process in KiB, 0 when it is gone.
long anonymous_rss_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("RssAnon:", 0) == 0) return std::strtol(line.c_str() + 8, nullptr, 10);
  }
  return 0;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

Measurement run_measured(const std::vector<std::string>& argv, const RunOptions& options) {
  char err_template[] = "/tmp/gpumemtrace-bench-stderr-XXXXXX";
  int err_fd = mkstemp(err_template);
  if (err_fd < 0) throw std::runtime_error(std::string("mkstemp: ") + std::strerror(errno));
  std::string err_path = err_template;
  close(err_fd);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, options.stdout_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_TRUNC, 0644);
  std::vector<std::string> args = argv;
  std::vector<std::string> envs = environment_with(options.env);
  auto c_args = c_strings(args);
  auto c_envs = c_strings(envs);

  Measurement result;
  double start = now_seconds();
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, c_args[0], &actions, nullptr, c_args.data(), c_envs.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    std::remove(err_path.c_str());
    throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
  }
  int status = 0;
  rusage usage{};
  for (;;) {
    pid_t done = wait4(pid, &status, options.sample_memory ? WNOHANG : 0, &usage);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) throw std::runtime_error(std::string("wait4: ") + std::strerror(errno));
    if (options.sample_memory) {
      long anon = anonymous_rss_kib(pid);
      if (anon > result.peak_anon_kib) result.peak_anon_kib = anon;
      usleep(2000);
    }
  }
  result.wall_seconds = now_seconds() - start;
  result.cpu_seconds = seconds(usage.ru_utime) + seconds(usage.ru_stime);
  result.max_rss_kib = usage.ru_maxrss;
  std::string errors = read_file(err_path);
  std::remove(err_path.c_str());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string command;
    for (const auto& arg : argv) command += (command.empty() ? "" : " ") + arg;
    throw std::runtime_error(command + " failed (status " + std::to_string(status) + "): " + errors);
  }
  return result;
}

}  // namespace gpumemtrace::bench
