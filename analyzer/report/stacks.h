// The symbolized stacks of a report. Models refer to stacks by the replay's id; the frames are looked up
// here, so renderers never touch the replay or the symbolizer.
#pragma once

#include <functional>
#include <map>
#include <vector>

#include "analyzer/replay/stack_table.h"
#include "analyzer/symbolize/frame.h"

namespace gpumemtrace::report {

using Frames = std::vector<symbolize::Frame>;  // innermost first

// Symbolizes one stack of the replay (the command passes the symbolizer; tests may pass anything).
using SymbolizeStack = std::function<Frames(replay::StackId)>;

struct Stacks {
  std::map<replay::StackId, Frames> frames;

  const Frames& operator[](replay::StackId id) const { return frames.at(id); }
};

}  // namespace gpumemtrace::report
