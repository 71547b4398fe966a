// The modules (executable and shared libraries) mapped in the process at a point of the trace: the set
// announced by the last ModulesBegin and the Module records after it.
#pragma once

#include <cstdint>
#include <vector>

#include "gpumemtrace/trace_records.h"

namespace gpumemtrace::trace {

class ModuleSet {
 public:
  uint64_t generation() const { return generation_; }
  const std::vector<ModuleInfo>& modules() const { return modules_; }  // sorted by low address

  void begin(uint64_t generation) {
    generation_ = generation;
    modules_.clear();
  }
  void add(ModuleInfo module);

  // The module whose range holds the address, or nullptr.
  const ModuleInfo* find(uint64_t address) const;

 private:
  uint64_t generation_ = 0;
  std::vector<ModuleInfo> modules_;
};

}  // namespace gpumemtrace::trace
