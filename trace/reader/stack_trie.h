// The stack trie of a trace: node id -> (parent, instruction address). A stack id names its innermost
// frame's node; walking parents up to the root (id 0) gives the outer frames.
#pragma once

#include <cstdint>
#include <vector>

namespace gpumemtrace::trace {

class StackTrie {
 public:
  struct Node {
    uint32_t parent;
    uint32_t depth;  // frames from the root to this node, this one included
    uint64_t ip;
  };

  StackTrie() : nodes_(1, Node{0, 0, 0}) {}

  // Ids count from 1 again; generation() tells the tries apart.
  void reset() {
    nodes_.assign(1, Node{0, 0, 0});
    ++generation_;
  }
  uint32_t add(uint32_t parent, uint64_t ip) {
    nodes_.push_back(Node{parent, nodes_[parent].depth + 1, ip});
    return static_cast<uint32_t>(nodes_.size() - 1);
  }
  // The number of frames of a stack id (0 for the root).
  uint32_t depth(uint32_t id) const { return nodes_[id].depth; }

  // Valid ids are 0 (the root: an empty stack) to size().
  uint32_t size() const { return static_cast<uint32_t>(nodes_.size() - 1); }
  bool contains(uint64_t id) const { return id < nodes_.size(); }
  const Node& node(uint32_t id) const { return nodes_[id]; }
  uint32_t generation() const { return generation_; }

  // The frames of a stack id, innermost first.
  std::vector<uint64_t> frames(uint32_t id) const {
    std::vector<uint64_t> out;
    for (; id != 0; id = nodes_[id].parent) out.push_back(nodes_[id].ip);
    return out;
  }

 private:
  std::vector<Node> nodes_;  // nodes_[0] is the root
  uint32_t generation_ = 0;
};

}  // namespace gpumemtrace::trace
