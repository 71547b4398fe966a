// The memo of a pickle being read: value ids by memo index, as Python's unpickler keeps them in a dict.
// Picklers number the entries 0, 1, 2, ... (MEMOIZE takes the memo's size as its index), so those are in a
// vector; any other index (a hostile BINPUT 4000000000) in a map. An entry may be forgotten (a streaming
// reader dropped its value): it still counts in the size, as MEMOIZE needs, and get() says so.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace gpumemtrace::pytorch {

class PickleMemo {
 public:
  using Id = uint32_t;
  static constexpr Id kForgotten = UINT32_MAX;

  // How many entries were stored: the index MEMOIZE gives the next one.
  uint64_t size() const { return dense_.size() + sparse_.size(); }

  void put(uint64_t index, Id id) {
    if (index < dense_.size())
      dense_[index] = id;
    else if (index == dense_.size() && !sparse_.contains(index))
      dense_.push_back(id);
    else
      sparse_[index] = id;
  }
  // The entry's slot, or nullptr when it was never stored.
  Id* find(uint64_t index) {
    if (index < dense_.size()) return &dense_[index];
    auto it = sparse_.find(index);
    return it == sparse_.end() ? nullptr : &it->second;
  }

 private:
  std::vector<Id> dense_;
  std::unordered_map<uint64_t, Id> sparse_;
};

}  // namespace gpumemtrace::pytorch
