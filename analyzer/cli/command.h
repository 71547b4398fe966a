// The gpumemtrace subcommands: each lives in its own file and is listed in command_table.cpp.
#pragma once

#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpumemtrace::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 1;     // bad command line, or the tool is not set up (library missing)
inline constexpr int kExitBadTrace = 2;  // unreadable, foreign, wrong-version or corrupt trace
inline constexpr int kExitSystem = 3;    // the system refused: the output cannot be written, out of memory
inline constexpr int kExitOverBudget = 1;  // `check` only: a limit was exceeded (check's bad command line is 2)

// The end of every analyzing command's --help.
inline constexpr std::string_view kExitStatusHelp =
    "Exit status: 0 when the trace was analyzed (also a truncated one: the report says it is incomplete),\n"
    "1 for a bad command line, 2 when the file is not a readable trace (one line on stderr), 3 for a system\n"
    "error (the output cannot be written, out of memory).\n";

struct Command {
  std::string_view name;
  std::string_view summary;                        // one line in `gpumemtrace --help`
  int (*main)(std::span<const std::string> args);  // the arguments after the command name
};

std::span<const Command* const> commands();
const Command* find_command(std::string_view name);

// Thrown for a bad command line; main prints it on one line and exits with kExitUsage.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Prints "gpumemtrace: PATH: MESSAGE" and returns kExitBadTrace.
int trace_error(std::string_view path, std::string_view message);
// Prints "gpumemtrace COMMAND: MESSAGE" and returns `status`: the commands whose errors are not of one trace.
int command_error(std::string_view command, std::string_view message, int status = kExitBadTrace);
// Prints "gpumemtrace: warning: MESSAGE" on stderr.
void print_warning(std::string_view message);

// What stderr says of paths and names (from a trace, a file or the command line) is escaped as
// common/terminal_text.h says: trace_error, print_warning and main's messages print through it.

}  // namespace gpumemtrace::cli
