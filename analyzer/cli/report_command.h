// What the report commands (summary, peak, leaks, growth, oom, fragmentation, timeline) share: their
// options, reading the trace through the replay model (with progress on a terminal), symbolized stacks,
// and the exit codes: 0 analyzed, 1 usage, 2 not a readable trace (one line on stderr).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/cli/json_tree.h"
#include "analyzer/replay/replay.h"
#include "analyzer/sources/analysis.h"
#include "analyzer/report/site_ranking.h"
#include "analyzer/symbolize/symbolizer.h"

namespace gpumemtrace::cli {

struct ReportOptions {
  std::string path;
  bool json = false;
  std::optional<int32_t> device;
  size_t top = 10;
  uint64_t min_size = 0;
  std::optional<uint32_t> width;  // timeline only
};

class ReportContext {
 public:
  ReportContext(const ReportOptions& options, const report::Analysis& analysis, symbolize::Symbolizer& symbolizer)
      : options_(options), analysis_(analysis), symbolizer_(symbolizer) {}

  const ReportOptions& options() const { return options_; }
  const report::TraceInfo& trace() const { return analysis_.trace; }
  const replay::Replay& replay() const { return *analysis_.replay; }
  // The sites to show: the --device, --min-size and --top options.
  report::SiteFilter filter(bool device_memory_only = true) const;
  // A stack, symbolized (cached per stack).
  const std::vector<symbolize::Frame>& stack(replay::StackId stack);

 private:
  const ReportOptions& options_;
  const report::Analysis& analysis_;
  symbolize::Symbolizer& symbolizer_;
  std::map<replay::StackId, std::vector<symbolize::Frame>> stacks_;
};

struct ReportCommand {
  std::string_view name;
  std::string_view usage_and_purpose;  // the first part of --help; the common options follow
  size_t default_top = 10;
  bool takes_width = false;
  // The report under the trace line (text), and its members after "trace" (JSON).
  void (*text)(ReportContext& context, fmt::memory_buffer& out);
  void (*json)(ReportContext& context, JsonTree& json);
};

int run_report(std::span<const std::string> args, const ReportCommand& command);

}  // namespace gpumemtrace::cli
