// How a report is rendered: what the command line says about the output of every renderer.
#pragma once

#include <cstdint>

namespace gpumemtrace::render {

struct RenderOptions {
  uint32_t columns = 80;  // text: the width of the terminal or of --width
  bool all_frames = false;  // text and folded: every frame, not only report::user_frames (--all-frames)
};

}  // namespace gpumemtrace::render
