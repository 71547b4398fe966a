// A subcommand's command line, parsed with CLI11: options (--name VALUE, --name=VALUE, -xVALUE), then
// either one operand (a trace) or the rest of the line untouched (run's command). Errors become
// UsageError with gpumemtrace's wording; --help prints the help, laid out from the options declared.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace gpumemtrace::cli {

// The value of `option` as a number from 0 to max; throws UsageError otherwise.
uint64_t parse_count(const std::string& option, const std::string& value, uint64_t max);

class CommandLine {
 public:
  // The help is usage_and_purpose ("usage: ...", what the command does), the options, then epilogue.
  CommandLine(std::string_view usage_and_purpose, std::string_view epilogue);
  ~CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  // names: "--json", "-o,--output".
  void flag(const std::string& names, bool& value, std::string description);
  // value_name: "N", "SIZE" in the help. The value is given when the option was.
  void option(const std::string& names, std::string value_name, std::optional<std::string>& value,
              std::string description);
  // An option that may be given again: each value in the order given (--set A --set B).
  void repeated(const std::string& names, std::string value_name, std::vector<std::string>& values,
                std::string description);
  // Exactly one operand; `noun` names it in messages ("trace file").
  void operand(std::string noun, std::string& value);
  // Exactly `count` operands, in order (diff's A and B); `noun` names one in messages.
  void operands(std::string noun, std::vector<std::string>& values, size_t count);
  // `minimum` operands or more (fit's runs).
  void operands_from(std::string noun, std::vector<std::string>& values, size_t minimum);
  // The first operand and everything after it, untouched: options after it are its own.
  void rest(std::string noun, std::vector<std::string>& value);

  // False when --help was asked for: the help is printed. Throws UsageError.
  bool parse(std::span<const std::string> args);
  std::string help() const;

 private:
  struct HelpLine {
    std::string names;  // "-o, --output FILE"
    std::string description;
  };
  void take_operand(const std::vector<std::string>& leftovers) const;
  void take_rest(std::vector<std::string> leftovers) const;
  void take_operands(const std::vector<std::string>& leftovers) const;

  std::unique_ptr<CLI::App> app_;
  std::string usage_and_purpose_;
  std::string epilogue_;
  std::vector<HelpLine> help_lines_;
  bool help_ = false;
  std::string noun_;  // of the operand, or the rest
  CLI::Option* operand_ = nullptr;
  std::vector<std::string>* rest_ = nullptr;
  std::vector<std::string>* operands_ = nullptr;
  size_t operand_count_ = 0;
  bool operand_count_is_minimum_ = false;
};

// The value of an option: a whole number from 0 to max, or a size ("1MiB", "4096"). Throw UsageError.
uint64_t parse_number(const std::string& option, const std::string& value, uint64_t max);
uint64_t parse_size_option(const std::string& option, const std::string& value);
// A time since the trace started ("1.5s", "200ms", "350us", ns); throws UsageError.
uint64_t parse_time_option(const std::string& option, const std::string& value);

// --from TIME and --to TIME (export and the reports): only what was allocated in that window of the trace's
// time, which ends at --to (replay/event_selection.h).
struct TimeWindow {
  uint64_t from_ns = 0;
  uint64_t to_ns = UINT64_MAX;
};
void declare_time_window(CommandLine& line, std::optional<std::string>& from, std::optional<std::string>& to);
// Throws UsageError.
TimeWindow parse_time_window(const std::optional<std::string>& from, const std::optional<std::string>& to);

// --no-snapshots (export and the reports): the trace alone, without the PyTorch snapshots its records name
// (analyzer/sources/snapshot_join.h).
void declare_no_snapshots(CommandLine& line, bool& no_snapshots);

}  // namespace gpumemtrace::cli
