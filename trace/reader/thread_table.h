// The threads of a trace by index (from 1, in order of appearance).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpumemtrace::trace {

struct ThreadInfo {
  uint64_t tid = 0;
  std::string name;
};

class ThreadTable {
 public:
  uint32_t size() const { return static_cast<uint32_t>(threads_.size()); }
  bool contains(uint64_t index) const { return index >= 1 && index <= threads_.size(); }
  const ThreadInfo& operator[](uint32_t index) const { return threads_[index - 1]; }
  void add(uint64_t tid, std::string_view name) { threads_.push_back(ThreadInfo{tid, std::string(name)}); }

 private:
  std::vector<ThreadInfo> threads_;
};

}  // namespace gpumemtrace::trace
