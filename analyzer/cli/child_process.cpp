#include "analyzer/cli/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <system_error>

namespace gpumemtrace::cli {

namespace {

volatile sig_atomic_t g_child_pid = 0;

void forward_to_child(int signal) {
  if (g_child_pid > 0) kill(static_cast<pid_t>(g_child_pid), signal);
}

constexpr int kIgnored[] = {SIGINT, SIGQUIT};
constexpr int kForwarded[] = {SIGTERM, SIGHUP};

// Sets the parent's dispositions for the wait and puts the old ones back after it.
class WaitSignals {
 public:
  WaitSignals() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    struct sigaction forward {};
    forward.sa_handler = forward_to_child;
    forward.sa_flags = SA_RESTART;
    sigemptyset(&forward.sa_mask);
    for (size_t i = 0; i < 2; ++i) {
      sigaction(kIgnored[i], &ignore, &saved_[i]);
      sigaction(kForwarded[i], &forward, &saved_[2 + i]);
    }
  }
  ~WaitSignals() {
    for (size_t i = 0; i < 2; ++i) {
      sigaction(kIgnored[i], &saved_[i], nullptr);
      sigaction(kForwarded[i], &saved_[2 + i], nullptr);
    }
  }

 private:
  struct sigaction saved_[4]{};
};

[[noreturn]] void exec_in_child(const std::vector<std::string>& argv, int error_pipe) {
  std::vector<char*> c_argv;
  for (const std::string& arg : argv) c_argv.push_back(const_cast<char*>(arg.c_str()));
  c_argv.push_back(nullptr);
  execvp(c_argv[0], c_argv.data());
  int error = errno;
  ssize_t ignored = write(error_pipe, &error, sizeof error);
  (void)ignored;
  _exit(127);
}

int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::system_error(errno, std::generic_category(), "waitpid");
  }
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

}  // namespace

ChildResult run_child(const std::vector<std::string>& argv, const std::function<void(pid_t self)>& prepare,
                      const std::function<void(pid_t child)>& while_running) {
  // The child reports a failed exec through this pipe; a successful exec closes it.
  int error_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe");

  // Signals wait until the parent's handlers are in place (and the child runs with the caller's mask).
  sigset_t wait_signals, saved_mask;
  sigemptyset(&wait_signals);
  for (int signal : kIgnored) sigaddset(&wait_signals, signal);
  for (int signal : kForwarded) sigaddset(&wait_signals, signal);
  sigprocmask(SIG_BLOCK, &wait_signals, &saved_mask);

  pid_t pid = fork();
  if (pid < 0) {
    int error = errno;
    sigprocmask(SIG_SETMASK, &saved_mask, nullptr);
    close(error_pipe[0]);
    close(error_pipe[1]);
    throw std::system_error(error, std::generic_category(), "fork");
  }
  if (pid == 0) {
    close(error_pipe[0]);
    sigprocmask(SIG_SETMASK, &saved_mask, nullptr);
    try {
      prepare(getpid());
    } catch (...) {
      _exit(127);  // never return into the parent's code
    }
    exec_in_child(argv, error_pipe[1]);
  }

  close(error_pipe[1]);
  ChildResult result;
  result.pid = pid;
  {
    g_child_pid = pid;
    WaitSignals signals;  // pending SIGINT/SIGQUIT are dropped, SIGTERM/SIGHUP forwarded, once unblocked
    sigprocmask(SIG_SETMASK, &saved_mask, nullptr);
    int exec_error = 0;
    ssize_t n;
    while ((n = read(error_pipe[0], &exec_error, sizeof exec_error)) < 0 && errno == EINTR) {
    }
    close(error_pipe[0]);
    if (n == sizeof exec_error) result.start_error = exec_error;
    if (!result.start_error && while_running) while_running(pid);
    result.exit_code = wait_for(pid);
    g_child_pid = 0;
  }
  return result;
}

}  // namespace gpumemtrace::cli
