#include "analyzer/render/output_format.h"

namespace gpumemtrace::render {

extern const OutputFormat html_format;
extern const OutputFormat json_format;
extern const OutputFormat text_format;

namespace {
const OutputFormat* const kFormats[] = {&text_format, &json_format, &html_format};
}  // namespace

std::span<const OutputFormat* const> output_formats() { return kFormats; }

const OutputFormat* find_output_format(std::string_view name) {
  for (const OutputFormat* format : kFormats)
    if (format->name == name) return format;
  return nullptr;
}

std::string output_format_names() {
  std::string out;
  for (const OutputFormat* format : kFormats) out += (out.empty() ? "" : ", ") + std::string(format->name);
  return out;
}

}  // namespace gpumemtrace::render
