// The baseline file (`gpumemtrace baseline -o FILE`): the run profiles (analyzer/report/run_profile.h) as
// small, stable JSON meant to be committed and read in a diff: one figure per line, one stack per line,
// no times, pids or paths, so two identical runs give the same bytes. docs/reports.md shows the layout.
#pragma once

#include <fmt/format.h>

#include <span>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "analyzer/report/run_profile.h"

namespace gpumemtrace::render {

inline constexpr int kBaselineVersion = 1;

void render_baseline(std::span<const report::RunProfile> profiles, fmt::memory_buffer& out);

// What is wrong with a baseline file: not JSON, another version, a field missing or of the wrong type.
class BaselineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws BaselineError.
std::vector<report::RunProfile> parse_baseline(std::string_view text);

}  // namespace gpumemtrace::render
