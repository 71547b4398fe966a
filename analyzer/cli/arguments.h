// Small helpers for the subcommands' command lines.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gpumemtrace::cli {

bool is_help_option(std::string_view arg);  // -h, --help

// If args[i] is the option (`--name VALUE`, `--name=VALUE`, `-x VALUE`, `-xVALUE`), returns its value and
// leaves i on the last argument it used. Throws UsageError when the value is missing.
std::optional<std::string> option_value(std::span<const std::string> args, size_t& i, std::string_view long_name,
                                        std::string_view short_name = {});

// Throws UsageError for an argument that looks like an option nobody recognized.
void reject_unknown_option(std::string_view arg);

}  // namespace gpumemtrace::cli
