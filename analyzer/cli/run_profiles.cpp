#include "analyzer/cli/run_profiles.h"

#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "analyzer/cli/command.h"
#include "analyzer/cli/progress.h"
#include "analyzer/render/budget/baseline_json.h"
#include "analyzer/sources/trace_set.h"
#include "analyzer/symbolize/symbolizer.h"

namespace gpumemtrace::cli {

analysis::Analysis read_trace(const std::string& path, const replay::ReplayOptions& options,
                              const analysis::SourceOptions& source) {
  // The progress is shown by the later readings too (a second one for the used view): it lives with the analysis.
  auto progress = std::make_shared<Progress>(path);
  analysis::Analysis analysis = analysis::analyze(
      path, options, [progress](std::string_view doing, uint64_t done, uint64_t total) { (*progress)(doing, done, total); },
      source);
  if (analysis.trace.joined)
    for (const std::string& unreadable : analysis.trace.joined->unreadable)
      print_warning(unreadable + ": the trace is analyzed without this PyTorch snapshot");
  return analysis;
}

size_t read_traces(const std::string& path, const replay::ReplayOptions& options,
                   const analysis::SourceOptions& source, const OnTrace& on_trace, const OnUnreadable& on_unreadable) {
  std::vector<std::string> paths;
  try {
    paths = sources::trace_paths(path);
  } catch (const sources::TraceSetError& error) {
    throw InputError(path, error.what());
  }
  for (const std::string& trace : paths) {
    analysis::Analysis analysis;
    try {
      analysis = read_trace(trace, options, source);
    } catch (const trace::OpenError& error) {
      on_unreadable(trace, error.what());
      continue;
    }
    if (analysis.trace.corrupt) {
      on_unreadable(trace, analysis.trace.error);
      continue;
    }
    const replay::StackTable& stacks = analysis.replay->stacks();
    symbolize::Symbolizer symbolizer(stacks, print_warning);
    on_trace(analysis, [&](replay::StackId id) { return symbolizer.stack(id); });
  }
  return paths.size();
}

std::vector<report::RunProfile> load_traces(const std::string& path, const replay::ReplayOptions& options) {
  std::vector<report::RunProfile> profiles;
  size_t traces = read_traces(
      path, options, {.join_snapshots = false},
      [&](const analysis::Analysis& analysis, const report::SymbolizeStack& symbolize) {
        profiles.push_back(report::run_profile(analysis, symbolize));
      },
      [](const std::string& trace, const std::string& reason) { throw InputError(trace, reason); });
  std::erase_if(profiles, [&](const report::RunProfile& profile) { return report::left_out_of_set(profile, traces); });
  report::sort_by_rank(profiles);
  return profiles;
}

std::vector<report::RunProfile> load_baseline(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, std::error_code(errno, std::generic_category()).message());
  std::stringstream text;
  text << in.rdbuf();
  try {
    std::vector<report::RunProfile> profiles = render::parse_baseline(text.str());
    for (report::RunProfile& profile : profiles) profile.source = path;
    return profiles;
  } catch (const render::BaselineError& error) {
    throw InputError(path, error.what());
  }
}

std::vector<report::RunProfile> load_runs(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_regular_file(path, error) && !sources::looks_like_trace(path)) return load_baseline(path);
  return load_traces(path);
}

}  // namespace gpumemtrace::cli
