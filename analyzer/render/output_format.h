// The output formats of the reports, chosen with --format. Each format is one renderer file that turns
// any report::Report into bytes, and one row in the table of output_format.cpp.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "analyzer/report/report.h"

namespace gpumemtrace::render {

struct RenderOptions {
  uint32_t columns = 80;  // text: the width of the terminal or of --width
  bool all_frames = false;  // text: every frame, not only report::user_frames (--all-frames)
};

struct OutputFormat {
  std::string_view name;         // the value of --format
  std::string_view description;  // one line in --help
  void (*render)(const report::Report& report, const RenderOptions& options, fmt::memory_buffer& out);
};

std::span<const OutputFormat* const> output_formats();
const OutputFormat* find_output_format(std::string_view name);
// "text, json"
std::string output_format_names();

}  // namespace gpumemtrace::render
