// gpumemtrace: dispatches to the subcommand named by the first argument.
#include <fmt/core.h>

#include <exception>
#include <string>
#include <vector>

#include "analyzer/cli/arguments.h"
#include "analyzer/cli/command.h"

using namespace gpumemtrace::cli;

namespace {

void print_tool_help() {
  fmt::print(
      "usage: gpumemtrace COMMAND [ARGS...]\n"
      "\n"
      "Records every GPU memory allocation of a program, with its call stack, and analyzes the trace.\n"
      "\n"
      "commands:\n");
  for (const Command* command : commands()) fmt::print("  {:<13} {}\n", command->name, command->summary);
  fmt::print(
      "\n"
      "'gpumemtrace COMMAND --help' describes a command; 'gpumemtrace --version' prints the version.\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    fmt::print(stderr, "usage: gpumemtrace COMMAND [ARGS...] (see gpumemtrace --help)\n");
    return kExitUsage;
  }
  if (is_help_option(args[0]) || (args[0] == "help" && args.size() == 1)) {
    print_tool_help();
    return kExitOk;
  }
  if (args[0] == "--version") {
    fmt::print("gpumemtrace {}\n", GPUMEMTRACE_VERSION);
    return kExitOk;
  }
  if (args[0] == "help") args = {args[1], "--help"};

  const Command* command = find_command(args[0]);
  if (!command) {
    fmt::print(stderr, "gpumemtrace: unknown command '{}' (see gpumemtrace --help)\n", args[0]);
    return kExitUsage;
  }
  try {
    return command->main(std::span<const std::string>(args).subspan(1));
  } catch (const UsageError& error) {
    fmt::print(stderr, "gpumemtrace {}: {} (see gpumemtrace {} --help)\n", command->name, error.what(), command->name);
    return kExitUsage;
  } catch (const std::exception& error) {  // the system refused something (fork, /proc): not the user's fault
    fmt::print(stderr, "gpumemtrace {}: {}\n", command->name, error.what());
    return kExitUsage;
  }
}
