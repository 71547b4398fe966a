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

struct Command {
  std::string_view name;
  std::string_view summary;                        // one line in `gpumemtrace --help`
  std::string_view help;                           // `gpumemtrace NAME --help`
  int (*main)(std::span<const std::string> args);  // the arguments after the command name
};

std::span<const Command* const> commands();
const Command* find_command(std::string_view name);

// Thrown by a command for a bad command line; main prints it on one line and exits with kExitUsage.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Prints "gpumemtrace: PATH: MESSAGE" and returns kExitBadTrace.
int trace_error(std::string_view path, std::string_view message);

}  // namespace gpumemtrace::cli
