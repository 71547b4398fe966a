// The renderers of `gpumemtrace fit`'s model (report/batch_fit.h): text (text_fit.cpp) and JSON (json_fit.cpp).
#pragma once

#include <fmt/format.h>

#include "analyzer/report/batch_fit.h"

namespace gpumemtrace::render {

void render_fit_text(const report::BatchFit& model, fmt::memory_buffer& out);
void render_fit_json(const report::BatchFit& model, fmt::memory_buffer& out);

}  // namespace gpumemtrace::render
