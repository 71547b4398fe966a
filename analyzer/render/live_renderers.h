// The renderers of `gpumemtrace top`'s frame (report/live_model.h): the summary's sections that change while a
// program runs, with the live model's extras. The JSON is {"summary": what `summary --json` prints, "live": ...},
// so a script reads the same figures either way.
#pragma once

#include <fmt/format.h>

#include "analyzer/render/render_options.h"
#include "analyzer/report/live_model.h"

namespace gpumemtrace::render {

void render_live_text(const report::LiveView& view, const RenderOptions& options, fmt::memory_buffer& out);
void render_live_json(const report::LiveView& view, const RenderOptions& options, fmt::memory_buffer& out);

}  // namespace gpumemtrace::render
