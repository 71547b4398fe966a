// libFuzzer target: any bytes read as a baseline file (analyzer/render/budget/baseline_json.cpp), then used the
// way `gpumemtrace diff` and `check --baseline` use one: diffed and checked, both ways, against itself
// and against the same ranks with no device memory, the results rendered as text, JSON and JUnit. A
// baseline that parses must also come back unchanged when written out and read again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "analyzer/render/budget/baseline_json.h"
#include "analyzer/render/budget/budget_output.h"
#include "analyzer/report/budget_check.h"
#include "analyzer/report/profile_diff.h"

namespace {

using namespace gpumemtrace;

fmt::memory_buffer written(const std::vector<report::RunProfile>& profiles) {
  fmt::memory_buffer out;
  render::render_baseline(profiles, out);
  return out;
}

void diff_and_check(const std::vector<report::RunProfile>& before, const std::vector<report::RunProfile>& after) {
  report::ProfileDiff diff = report::diff_profiles(before, after, 3);
  fmt::memory_buffer out;
  render::text_diff(diff, out);
  render::json_diff(diff, out);

  report::CheckOptions options;
  options.limits.max_peak = 1;
  options.limits.max_leak = 0;
  options.limits.max_ooms = 0;
  options.baseline = &before;
  options.tolerance.percent = 5.0;
  options.tolerance.bytes = uint64_t{1} << 20;
  report::CheckModel model = report::check_budgets(after, options);
  render::text_check(model, out);
  render::json_check(model, out);
  render::junit_check(model, out);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<report::RunProfile> profiles;
  try {
    profiles = render::parse_baseline(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const render::BaselineError&) {
    return 0;  // the analyzer says what is wrong and exits 2
  }
  fmt::memory_buffer once = written(profiles);
  fmt::memory_buffer twice = written(render::parse_baseline(std::string_view(once.data(), once.size())));
  if (std::string_view(once.data(), once.size()) != std::string_view(twice.data(), twice.size())) std::abort();

  std::vector<report::RunProfile> emptied = profiles;
  for (report::RunProfile& profile : emptied) profile.devices.clear();
  diff_and_check(profiles, profiles);
  diff_and_check(profiles, emptied);
  diff_and_check(emptied, profiles);
  return 0;
}
