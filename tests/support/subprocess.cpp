#include "tests/support/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace gpumemtrace::test {

ProcessResult run_process(const std::vector<std::string>& argv, const EnvChanges& env) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);

  std::vector<std::string> args = argv;
  std::vector<std::string> envs = environment_with(env);
  auto c_args = c_strings(args);
  auto c_envs = c_strings(envs);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, c_args[0], &actions, nullptr, c_args.data(), c_envs.data());
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (rc != 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
  }

  ProcessResult result;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  char buffer[65536];
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  rusage usage{};
  while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  result.max_rss_kib = static_cast<uint64_t>(usage.ru_maxrss);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.term_signal = WTERMSIG(status);
  return result;
}

EnvChanges sim_env(EnvChanges extra) {
  const char* old = std::getenv("LD_LIBRARY_PATH");
  std::string path = sim_dir();
  if (old && *old) path += std::string(":") + old;
  extra.emplace("LD_LIBRARY_PATH", path);
  return extra;
}

std::string bin_dir() { return GPUMEMTRACE_TEST_BIN_DIR; }
std::string analyzer_path() { return GPUMEMTRACE_TEST_ANALYZER; }

ProcessResult run_gpumemtrace(const std::vector<std::string>& args, const EnvChanges& env) {
  std::vector<std::string> argv{analyzer_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, env);
}
std::string lib_dir() { return GPUMEMTRACE_TEST_LIB_DIR; }
std::string sim_dir() { return GPUMEMTRACE_TEST_SIM_DIR; }
std::string test_data_dir() { return GPUMEMTRACE_TEST_DATA_DIR; }

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace gpumemtrace::test
