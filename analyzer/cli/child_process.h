// Runs a command as a child the way a shell would and waits for it. While waiting, SIGINT and SIGQUIT are
// ignored (the terminal sends them to the child too) and SIGTERM and SIGHUP are passed on to the child.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace gpumemtrace::cli {

struct ChildResult {
  pid_t pid = 0;
  int start_error = 0;  // errno of a failed exec (the child never ran), else 0
  int exit_code = 0;    // the child's exit code, or 128 + the signal that killed it
};

// prepare runs in the child, after fork and before exec, with the child's pid (setenv is safe there:
// the analyzer is single-threaded). argv[0] is searched on PATH. while_running, if given, runs in the parent
// once the child has started, before the wait (with the wait's signal dispositions).
ChildResult run_child(const std::vector<std::string>& argv, const std::function<void(pid_t self)>& prepare,
                      const std::function<void(pid_t child)>& while_running = {});

}  // namespace gpumemtrace::cli
