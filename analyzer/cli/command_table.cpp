#include <fmt/core.h>

#include "analyzer/cli/command.h"
#include "common/terminal_text.h"

namespace gpumemtrace::cli {

extern const Command baseline_command;
extern const Command check_command;
extern const Command diff_command;
extern const Command dump_command;
extern const Command export_command;
extern const Command fragmentation_command;
extern const Command growth_command;
extern const Command html_command;
extern const Command info_command;
extern const Command leaks_command;
extern const Command oom_command;
extern const Command pack_command;
extern const Command peak_command;
extern const Command phases_command;
extern const Command run_command;
extern const Command snapshot_command;
extern const Command summary_command;
extern const Command timeline_command;
extern const Command top_command;
extern const Command whatif_command;
extern const Command fit_command;

namespace {
const Command* const kCommands[] = {&run_command,    &dump_command,  &pack_command,    &summary_command, &peak_command,
                                    &leaks_command,  &growth_command, &oom_command,    &fragmentation_command,
                                    &timeline_command, &phases_command, &export_command, &html_command,
                                    &check_command,    &baseline_command, &diff_command,  &snapshot_command,
                                    &whatif_command, &fit_command, &info_command,
                                    &top_command};
}  // namespace

std::span<const Command* const> commands() { return kCommands; }

const Command* find_command(std::string_view name) {
  for (const Command* command : kCommands)
    if (command->name == name) return command;
  return nullptr;
}

int trace_error(std::string_view path, std::string_view message) {
  fmt::print(stderr, "gpumemtrace: {}: {}\n", terminal_text(path), terminal_text(message));
  return kExitBadTrace;
}

int command_error(std::string_view command, std::string_view message, int status) {
  fmt::print(stderr, "gpumemtrace {}: {}\n", command, terminal_text(message));
  return status;
}

void print_warning(std::string_view message) { fmt::print(stderr, "gpumemtrace: warning: {}\n", terminal_text(message)); }

}  // namespace gpumemtrace::cli
