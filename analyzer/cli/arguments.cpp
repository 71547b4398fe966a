#include "analyzer/cli/arguments.h"

#include "analyzer/cli/command.h"

namespace gpumemtrace::cli {

bool is_help_option(std::string_view arg) { return arg == "-h" || arg == "--help"; }

std::optional<std::string> option_value(std::span<const std::string> args, size_t& i, std::string_view long_name,
                                        std::string_view short_name) {
  std::string_view arg = args[i];
  std::string_view name;
  if (arg == long_name || (!short_name.empty() && arg == short_name)) {
    name = arg;
  } else if (arg.starts_with(long_name) && arg.size() > long_name.size() && arg[long_name.size()] == '=') {
    return std::string(arg.substr(long_name.size() + 1));
  } else if (!short_name.empty() && arg.starts_with(short_name) && arg.size() > short_name.size()) {
    return std::string(arg.substr(short_name.size()));
  } else {
    return std::nullopt;
  }
  if (i + 1 >= args.size()) throw UsageError("option " + std::string(name) + " needs a value");
  return args[++i];
}

void reject_unknown_option(std::string_view arg) {
  if (arg.size() > 1 && arg.front() == '-') throw UsageError("unknown option '" + std::string(arg) + "'");
}

}  // namespace gpumemtrace::cli
