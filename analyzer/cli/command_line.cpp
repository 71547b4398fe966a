#include "analyzer/cli/command_line.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>

#include "analyzer/cli/command.h"
#include "common/size_units.h"
#include "common/time_units.h"

namespace gpumemtrace::cli {

namespace {

bool looks_like_option(std::string_view arg) { return arg.size() > 1 && arg.front() == '-'; }

// "-o,--output" and "FILE" as the help shows them: "-o, --output FILE".
std::string help_names(const std::string& names, std::string_view value_name) {
  std::string out;
  for (char c : names) out += c == ',' ? std::string(", ") : std::string(1, c);
  if (!value_name.empty()) out += " " + std::string(value_name);
  return out;
}

}  // namespace

uint64_t parse_count(const std::string& option, const std::string& value, uint64_t max) {
  if (value.empty() || value.size() > 10 || value.find_first_not_of("0123456789") != std::string::npos ||
      std::stoull(value) > max)
    throw UsageError(option + " " + value + " is not a number from 0 to " + std::to_string(max));
  return std::stoull(value);
}

CommandLine::CommandLine(std::string_view usage_and_purpose, std::string_view epilogue)
    : app_(std::make_unique<CLI::App>()), usage_and_purpose_(usage_and_purpose), epilogue_(epilogue) {
  app_->set_help_flag();
  app_->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app_->allow_extras();  // unknown options and extra operands get gpumemtrace's messages, below
  app_->add_flag("-h,--help", help_);
}

CommandLine::~CommandLine() = default;

void CommandLine::flag(const std::string& names, bool& value, std::string description) {
  app_->add_flag(names, value);
  help_lines_.push_back({help_names(names, {}), std::move(description)});
}

void CommandLine::option(const std::string& names, std::string value_name, std::optional<std::string>& value,
                         std::string description) {
  app_->add_option_function<std::string>(names, [&value](const std::string& given) { value = given; });
  help_lines_.push_back({help_names(names, value_name), std::move(description)});
}

void CommandLine::repeated(const std::string& names, std::string value_name, std::vector<std::string>& values,
                           std::string description) {
  // Every occurrence, one value each (a std::string option keeps only one of them, and without
  // allow_extra_args(false) a vector option takes the operands after it too).
  auto add = [&values](const std::vector<std::string>& given) { values.insert(values.end(), given.begin(), given.end()); };
  app_->add_option_function<std::vector<std::string>>(names, add)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
  help_lines_.push_back({help_names(names, value_name), std::move(description)});
}

void CommandLine::operand(std::string noun, std::string& value) {
  operand_ = app_->add_option("operand", value);
  noun_ = std::move(noun);
}

void CommandLine::operands(std::string noun, std::vector<std::string>& values, size_t count) {
  noun_ = std::move(noun);
  operands_ = &values;
  operand_count_ = count;
}

void CommandLine::operands_from(std::string noun, std::vector<std::string>& values, size_t minimum) {
  operands(std::move(noun), values, minimum);
  operand_count_is_minimum_ = true;
}

void CommandLine::rest(std::string noun, std::vector<std::string>& value) {
  app_->prefix_command();
  noun_ = std::move(noun);
  rest_ = &value;
}

bool CommandLine::parse(std::span<const std::string> args) {
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes the arguments last first
  try {
    app_->parse(reversed);
  } catch (const CLI::ArgumentMismatch& error) {
    // An option that takes a value came last.
    if (!args.empty() && looks_like_option(args.back())) throw UsageError("option " + args.back() + " needs a value");
    throw UsageError(error.what());
  } catch (const CLI::ParseError& error) {
    throw UsageError(error.what());
  }
  if (help_) {
    fmt::print("{}", help());
    return false;
  }
  if (rest_)
    take_rest(app_->remaining());
  else if (operands_)
    take_operands(app_->remaining());
  else
    take_operand(app_->remaining());
  return true;
}

// What CLI11 left: unknown options, extra operands, and "--" when nothing declared follows it.
void CommandLine::take_operand(const std::vector<std::string>& leftovers) const {
  bool operands_only = false;
  for (const std::string& arg : leftovers) {
    if (arg == "--" && !operands_only) {
      operands_only = true;
    } else if (!operands_only && looks_like_option(arg)) {
      throw UsageError("unknown option '" + arg + "'");
    } else {
      throw UsageError("expects one " + noun_ + ", got '" + operand_->as<std::string>() + "' and '" + arg + "'");
    }
  }
  if (!operand_->count()) throw UsageError("expects a " + noun_);
}

void CommandLine::take_operands(const std::vector<std::string>& leftovers) const {
  bool operands_only = false;
  operands_->clear();
  for (const std::string& arg : leftovers) {
    if (arg == "--" && !operands_only)
      operands_only = true;
    else if (!operands_only && looks_like_option(arg))
      throw UsageError("unknown option '" + arg + "'");
    else
      operands_->push_back(arg);
  }
  if (operand_count_is_minimum_ && operands_->size() < operand_count_)
    throw UsageError(fmt::format("expects at least {} {}s, got {}", operand_count_, noun_, operands_->size()));
  if (!operand_count_is_minimum_ && operands_->size() != operand_count_)
    throw UsageError(fmt::format("expects {} {}s, got {}", operand_count_, noun_, operands_->size()));
}

// Everything from the first argument that is not an option: a leading "--" goes, an unknown option
// before the command is an error.
void CommandLine::take_rest(std::vector<std::string> leftovers) const {
  if (!leftovers.empty() && leftovers.front() == "--")
    leftovers.erase(leftovers.begin());
  else if (!leftovers.empty() && looks_like_option(leftovers.front()))
    throw UsageError("unknown option '" + leftovers.front() + "'");
  if (leftovers.empty()) throw UsageError("expects a " + noun_);
  *rest_ = std::move(leftovers);
}

uint64_t parse_number(const std::string& option, const std::string& value, uint64_t max) {
  if (value.empty() || value.size() > 10 || value.find_first_not_of("0123456789") != std::string::npos ||
      std::stoull(value) > max)
    throw UsageError(option + " " + value + " is not a number from 0 to " + std::to_string(max));
  return std::stoull(value);
}

uint64_t parse_size_option(const std::string& option, const std::string& value) {
  std::optional<uint64_t> bytes = parse_size(value);
  if (!bytes) throw UsageError(option + " " + value + " is not a size (e.g. 1MiB, 4096)");
  return *bytes;
}

void declare_time_window(CommandLine& line, std::optional<std::string>& from, std::optional<std::string>& to) {
  line.option("--from", "TIME", from, "only what was allocated from TIME on (since the trace started: 1.5s, 200ms)");
  line.option("--to", "TIME", to, "only what was allocated until TIME; the trace ends at TIME");
}

void declare_no_snapshots(CommandLine& line, bool& no_snapshots) {
  line.flag("--no-snapshots", no_snapshots,
            "the trace alone: without the PyTorch snapshots its tracer wrote beside it (TRACE.torch-*.pickle), "
            "whose blocks are joined to its segments by default");
}

uint64_t parse_time_option(const std::string& option, const std::string& value) {
  std::optional<uint64_t> ns = parse_duration(value);
  if (!ns) throw UsageError(option + " " + value + " is not a time since the trace started (e.g. 1.5s, 200ms, 350us)");
  return *ns;
}

TimeWindow parse_time_window(const std::optional<std::string>& from, const std::optional<std::string>& to) {
  TimeWindow window;
  if (from) window.from_ns = parse_time_option("--from", *from);
  if (to) window.to_ns = parse_time_option("--to", *to);
  if (window.from_ns > window.to_ns) throw UsageError("--from " + *from + " is after --to " + *to);
  return window;
}

std::string CommandLine::help() const {
  std::vector<HelpLine> lines = help_lines_;
  lines.push_back({"-h, --help", "this text"});
  size_t width = 0;
  for (const HelpLine& line : lines) width = std::max(width, line.names.size());
  std::string out = usage_and_purpose_ + "\noptions:\n";
  for (const HelpLine& line : lines) out += fmt::format("  {:<{}}  {}\n", line.names, width, line.description);
  return out + "\n" + epilogue_;
}

}  // namespace gpumemtrace::cli
