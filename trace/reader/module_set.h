// The modules (executable and shared libraries) mapped in the process at a point of the trace: the set
// announced by the last ModulesBegin and the Module records after it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpumemtrace::trace {

struct ModuleInfo {
  uint64_t base = 0;  // load bias
  uint64_t low = 0;   // [low, high) covers every PT_LOAD segment
  uint64_t high = 0;
  std::string path;
  std::string build_id;  // raw bytes

  bool contains(uint64_t address) const { return address >= low && address < high; }
};

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
