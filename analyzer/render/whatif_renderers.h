// The renderers of `gpumemtrace whatif`'s model (report/whatif_model.h): text (text_whatif.cpp) and JSON
// (json_whatif.cpp).
#pragma once

#include <fmt/format.h>

#include "analyzer/report/whatif_model.h"

namespace gpumemtrace::render {

void render_whatif_text(const report::WhatifModel& model, fmt::memory_buffer& out);
void render_whatif_json(const report::WhatifModel& model, fmt::memory_buffer& out);

}  // namespace gpumemtrace::render
