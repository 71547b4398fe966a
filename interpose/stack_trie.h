// Interns call stacks as paths in a trie of instruction addresses, outermost frame at the root, like
// heaptrack's TraceTree: an event carries one id (its innermost node), and only nodes never seen before
// are written to the trace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace gpumemtrace::interpose {

class StackTrie {
 public:
  // `frames` innermost first. Calls new_node(parent, ip) for each node created, in creation order
  // (ids 1, 2, ... since the last clear). Returns the id of the innermost frame's node, 0 for no frames.
  template <typename NewNode>
  uint64_t intern(const uintptr_t* frames, size_t count, NewNode&& new_node) {
    uint64_t node = 0;
    for (size_t i = count; i-- > 0;) {
      auto [it, inserted] = children_.try_emplace(Key{node, frames[i]}, children_.size() + 1);
      if (inserted) new_node(node, frames[i]);
      node = it->second;
    }
    return node;
  }
  void clear() { children_.clear(); }
  size_t size() const { return children_.size(); }

 private:
  struct Key {
    uint64_t parent;
    uintptr_t ip;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& key) const {
      uint64_t h = key.ip * 0x9E3779B97F4A7C15ull ^ (key.parent + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
      return static_cast<size_t>(h ^ (h >> 29));
    }
  };
  std::unordered_map<Key, uint64_t, KeyHash> children_;
};

}  // namespace gpumemtrace::interpose
