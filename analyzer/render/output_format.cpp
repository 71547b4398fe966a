#include "analyzer/render/output_format.h"

namespace gpumemtrace::render {

extern const OutputFormat csv_format;
extern const OutputFormat folded_format;
extern const OutputFormat html_format;
extern const OutputFormat json_format;
extern const OutputFormat memory_viz_format;
extern const OutputFormat perfetto_format;
extern const OutputFormat pprof_format;
extern const OutputFormat text_format;

namespace {
const OutputFormat* const kFormats[] = {&text_format,     &json_format, &html_format,      &folded_format, &pprof_format,
                                        &perfetto_format, &csv_format,  &memory_viz_format};
}  // namespace

std::span<const OutputFormat* const> output_formats() { return kFormats; }

const OutputFormat* find_output_format(std::string_view name) {
  for (const OutputFormat* format : kFormats)
    if (format->name == name) return format;
  return nullptr;
}

std::string output_format_names(bool exports) {
  std::string out;
  for (const OutputFormat* format : kFormats)
    if (exports ? format->start_export != nullptr : format->render != nullptr)
      out += (out.empty() ? "" : ", ") + std::string(format->name);
  return out;
}

}  // namespace gpumemtrace::render
