#include "analyzer/cli/rank_reports.h"

#include <fmt/core.h>

#include "analyzer/cli/command.h"
#include "analyzer/cli/run_profiles.h"
#include "analyzer/render/rank_output.h"

namespace gpumemtrace::cli {

namespace {

// "0, 1, 2, 3" (the ranks the traces have), for a --rank that none has.
std::string known_ranks(const std::vector<report::RankTrace>& traces) {
  std::string out;
  for (const report::RankTrace& trace : traces)
    if (trace.profile.rank) out += (out.empty() ? "" : ", ") + std::to_string(*trace.profile.rank);
  return out.empty() ? "none of them has a rank" : "ranks " + out;
}

}  // namespace

int run_rank_report(const ReportArguments& arguments, const ReportCommand& command) {
  std::string_view format = arguments.format->name;
  if (format != "text" && format != "json")
    throw UsageError(fmt::format("--format {} is for one trace: a directory gives text or json", format));

  std::vector<report::RankTrace> traces;
  std::vector<report::UnreadableTrace> unreadable;
  try {
    read_traces(
        arguments.path, arguments.replay, arguments.source,
        [&](const analysis::Analysis& analysis, const report::SymbolizeStack& symbolize) {
          traces.push_back({report::run_profile(analysis, symbolize),
                            report::build_report(analysis, arguments.selection, symbolize, command.build),
                            report::device_placement(*analysis.replay)});
        },
        [&](const std::string& path, const std::string& reason) {
          trace_error(path, reason);
          unreadable.push_back({path, reason});
        });
  } catch (const InputError& error) {
    return trace_error(error.path, error.what());
  }
  if (traces.empty()) return trace_error(arguments.path, "no trace in this directory could be read");
  if (arguments.rank.rank && std::none_of(traces.begin(), traces.end(), [&](const report::RankTrace& trace) {
        return trace.profile.rank == arguments.rank.rank;
      }))
    throw UsageError(fmt::format("--rank {}: no trace of that rank in {} ({})", *arguments.rank.rank, arguments.path,
                                 known_ranks(traces)));

  report::RankReport model = report::rank_report(arguments.path, std::move(traces), std::move(unreadable),
                                                 *command.ranks, arguments.rank, arguments.selection.device);
  fmt::memory_buffer out;
  if (format == "json") render::json_rank_report(model, render_options(arguments), out);
  else render::text_rank_report(model, render_options(arguments), out);
  write_report(arguments, out);
  return kExitOk;
}

}  // namespace gpumemtrace::cli
