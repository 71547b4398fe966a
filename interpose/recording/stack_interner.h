// Interns call stacks as paths in a trie of instruction addresses, outermost frame at the root, like
// heaptrack's TraceTree: an event carries one id (its innermost node), and only nodes never seen before
// are written to the trace.
//
// A program allocates from few distinct stacks over and over, so a small cache of whole stacks (by a hash
// of their frames, compared in full on a hit) answers most lookups with one comparison instead of a hash
// lookup per frame.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace gpumemtrace::interpose {

class StackInterner {
 public:
  // `frames` innermost first. Calls new_node(parent, ip) for each node created, in creation order
  // (ids 1, 2, ... since the last clear). Returns the id of the innermost frame's node, 0 for no frames.
  template <typename NewNode>
  uint64_t intern(const uintptr_t* frames, size_t count, NewNode&& new_node) {
    return intern(frames, count, hash(frames, count), new_node);
  }
  // The same with hash(frames, count) computed beforehand (outside the caller's lock).
  template <typename NewNode>
  uint64_t intern(const uintptr_t* frames, size_t count, uint64_t stack_hash, NewNode&& new_node) {
    if (count == 0) return 0;
    CachedStack& cached = cache_[stack_hash % kCachedStacks];
    if (cached.id != 0 && cached.hash == stack_hash && cached.frames.size() == count &&
        std::equal(frames, frames + count, cached.frames.begin())) {
      return cached.id;
    }
    uint64_t node = 0;
    for (size_t i = count; i-- > 0;) {
      auto [it, inserted] = children_.try_emplace(Key{node, frames[i]}, children_.size() + 1);
      if (inserted) new_node(node, frames[i]);
      node = it->second;
    }
    cached.hash = stack_hash;
    cached.frames.assign(frames, frames + count);
    cached.id = node;
    return node;
  }
  void clear() {
    children_.clear();
    for (CachedStack& cached : cache_) cached.id = 0;
  }
  size_t size() const { return children_.size(); }

  // Four independent lanes, so the multiplications overlap instead of waiting on each other.
  static uint64_t hash(const uintptr_t* frames, size_t count) {
    uint64_t lane[4] = {count, 0x9E3779B97F4A7C15ull, 0xC2B2AE3D27D4EB4Full, 0x165667B19E3779F9ull};
    size_t i = 0;
    for (; i + 4 <= count; i += 4) {
      for (size_t l = 0; l < 4; ++l) lane[l] = (lane[l] ^ frames[i + l]) * 0xFF51AFD7ED558CCDull;
    }
    for (; i < count; ++i) lane[i % 4] = (lane[i % 4] ^ frames[i]) * 0xFF51AFD7ED558CCDull;
    uint64_t h = lane[0] ^ (lane[1] >> 7) ^ (lane[2] << 11) ^ (lane[3] >> 17);
    return h ^ (h >> 31);
  }

 private:
  static constexpr size_t kCachedStacks = 1024;

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
  struct CachedStack {
    uint64_t hash = 0;
    uint64_t id = 0;  // 0: empty
    std::vector<uintptr_t> frames;
  };

  std::unordered_map<Key, uint64_t, KeyHash> children_;
  std::array<CachedStack, kCachedStacks> cache_;
};

}  // namespace gpumemtrace::interpose
