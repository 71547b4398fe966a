// Symbolizes the replay's stacks offline with elfutils (libdwfl/libdw), from the module map recorded in
// the trace: function (demangled), file, line and inlined calls where the module on disk has debug
// information (in the file, beside it through .gnu_debuglink, or under /usr/lib/debug by build id),
// else the ELF symbol, else module + offset. A module whose file is gone or no longer has the recorded
// build id is not trusted: one warning, and its frames are module + offset. Never touches the network:
// debuginfod is turned off for the process, and libdwfl's client for it is never loaded. ELF symbols are
// found by binary search (symbol_index.h) where libdwfl would scan the module's whole table per address.
//
// Python frames take their function (the qualified name), file and line from the stack table's Python
// code table, named native frames (of a PyTorch snapshot) their function and file from its function table:
// a Native frame without module; the marker of a cut stack becomes a Truncated frame.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/replay/stack_table.h"
#include "analyzer/symbolize/frame.h"

namespace gpumemtrace::symbolize {

class Symbolizer {
 public:
  using Warn = std::function<void(std::string_view message)>;

  // `stacks` must outlive the symbolizer.
  Symbolizer(const replay::StackTable& stacks, Warn warn);
  // Native frames only: Python frames come out with their kind and line but no names. `modules` must
  // outlive the symbolizer (the replay's StackTable owns them).
  Symbolizer(const std::vector<replay::ModuleRef>& modules, Warn warn);
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // The frames of one return address: inlined calls first. Cached per address.
  const std::vector<Frame>& frames(replay::FrameRef frame);
  // A whole stack, innermost first.
  std::vector<Frame> stack(std::span<const replay::FrameRef> frames);
  // A stack of the table given to the constructor, innermost first, cut after replay::kMaxShownFrames; none
  // for a symbolizer made from the modules alone.
  std::vector<Frame> stack(replay::StackId id);

 private:
  struct ModuleDebug;
  ModuleDebug& debug(uint32_t module);
  std::vector<Frame> lookup(replay::FrameRef frame);

  const std::vector<replay::ModuleRef>& modules_;
  const replay::StackTable* stacks_ = nullptr;
  const std::vector<replay::PythonCodeRef>* python_codes_ = nullptr;
  const std::vector<replay::NativeFunctionRef>* native_functions_ = nullptr;
  Warn warn_;
  std::vector<std::unique_ptr<ModuleDebug>> debug_;  // by module index, opened when first needed
  std::map<replay::FrameRef, std::vector<Frame>> cache_;
};

}  // namespace gpumemtrace::symbolize
