// gpumemtrace: dispatches to the subcommand named by the first argument, and turns what went wrong into
// the exit status (command.h): 1 a bad command line, 3 a system error.
#include <fmt/core.h>

#include <exception>
#include <new>
#include <string>
#include <vector>

#include "analyzer/cli/command.h"
#include "analyzer/cli/standard_output.h"
#include "analyzer/format/output_format.h"
#include "common/terminal_text.h"

using namespace gpumemtrace::cli;
using gpumemtrace::terminal_text;

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
      "The reports print text, or another format with --format ({}).\n"
      "'gpumemtrace COMMAND --help' describes a command; 'gpumemtrace --version' prints the version.\n"
      "\n"
      "Exit status: 0 analyzed, 1 bad command line, 2 unreadable input, 3 system error (the output cannot be\n"
      "written, out of memory); `run` exits with the program's own status once the program has started;\n"
      "`check` exits 1 when a limit is exceeded and 2 for a bad command line (see gpumemtrace check --help).\n",
      gpumemtrace::render::output_format_names());
}

int run_command(const Command& command, std::span<const std::string> args) {
  try {
    return command.main(args);
  } catch (const UsageError& error) {
    fmt::print(stderr, "gpumemtrace {}: {} (see gpumemtrace {} --help)\n", command.name, terminal_text(error.what()),
               command.name);
    return kExitUsage;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "gpumemtrace {}: out of memory\n", command.name);
    return kExitSystem;
  } catch (const std::exception& error) {  // the system refused something (output, fork, /proc)
    fmt::print(stderr, "gpumemtrace {}: {}\n", command.name, terminal_text(error.what()));
    return kExitSystem;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    fmt::print(stderr, "usage: gpumemtrace COMMAND [ARGS...] (see gpumemtrace --help)\n");
    return kExitUsage;
  }
  if (args[0] == "-h" || args[0] == "--help" || (args[0] == "help" && args.size() == 1)) {
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
    fmt::print(stderr, "gpumemtrace: unknown command '{}' (see gpumemtrace --help)\n", terminal_text(args[0]));
    return kExitUsage;
  }
  return run_command(*command, std::span<const std::string>(args).subspan(1));
}
