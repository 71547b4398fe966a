#include "analyzer/cli/run_profiles.h"

#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "analyzer/cli/progress.h"
#include "analyzer/render/baseline_json.h"
#include "analyzer/sources/trace_set.h"
#include "analyzer/symbolize/symbolizer.h"

namespace gpumemtrace::cli {

namespace {

report::RunProfile load_trace(const std::string& path) {
  report::Analysis analysis;
  try {
    Progress progress(path);
    analysis = report::analyze(path, {}, std::ref(progress));
  } catch (const trace::OpenError& error) {
    throw InputError(path, error.what());
  }
  if (analysis.trace.corrupt) throw InputError(path, analysis.trace.error);
  const replay::StackTable& stacks = analysis.replay->stacks();
  symbolize::Symbolizer symbolizer(stacks, [](std::string_view warning) {
    fmt::print(stderr, "gpumemtrace: warning: {}\n", warning);
  });
  return report::run_profile(analysis, [&](replay::StackId id) { return symbolizer.stack(stacks.frames(id)); });
}

}  // namespace

std::vector<report::RunProfile> load_traces(const std::string& path) {
  std::vector<std::string> paths;
  try {
    paths = report::trace_paths(path);
  } catch (const report::TraceSetError& error) {
    throw InputError(path, error.what());
  }
  std::vector<report::RunProfile> profiles;
  for (const std::string& trace : paths) {
    report::RunProfile profile = load_trace(trace);
    if (paths.size() > 1 && profile.devices.empty()) continue;
    profiles.push_back(std::move(profile));
  }
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
  if (std::filesystem::is_regular_file(path, error) && !report::looks_like_trace(path)) return load_baseline(path);
  return load_traces(path);
}

}  // namespace gpumemtrace::cli
