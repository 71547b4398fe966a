// The tracer's stack trie: ids in creation order, shared callers shared, and the cache of whole stacks
// never answering for a different stack or for a trie that was cleared.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "interpose/recording/stack_interner.h"

namespace gpumemtrace::interpose {
namespace {

struct Interned {
  uint64_t id = 0;
  std::vector<std::pair<uint64_t, uint64_t>> new_nodes;  // (parent, ip)
};

Interned intern(StackInterner& trie, std::vector<uintptr_t> frames) {
  Interned out;
  out.id = trie.intern(frames.data(), frames.size(),
                       [&](uint64_t parent, uint64_t ip) { out.new_nodes.emplace_back(parent, ip); });
  return out;
}

TEST(StackInterner, NewNodesOutermostFirstAndSharedCallers) {
  StackInterner trie;
  Interned first = intern(trie, {0x30, 0x20, 0x10});  // innermost first
  EXPECT_EQ(first.id, 3u);
  EXPECT_EQ(first.new_nodes, (std::vector<std::pair<uint64_t, uint64_t>>{{0, 0x10}, {1, 0x20}, {2, 0x30}}));
  Interned sibling = intern(trie, {0x31, 0x20, 0x10});
  EXPECT_EQ(sibling.id, 4u);
  EXPECT_EQ(sibling.new_nodes, (std::vector<std::pair<uint64_t, uint64_t>>{{2, 0x31}}));
  EXPECT_EQ(intern(trie, {}).id, 0u);
}

TEST(StackInterner, RepeatedStacksKeepTheirIds) {
  StackInterner trie;
  std::vector<uint64_t> ids;
  for (uintptr_t site = 0; site < 3000; ++site) ids.push_back(intern(trie, {site + 1000, 0x20, 0x10}).id);
  for (int round = 0; round < 2; ++round) {
    for (uintptr_t site = 0; site < 3000; ++site) {
      Interned again = intern(trie, {site + 1000, 0x20, 0x10});
      EXPECT_EQ(again.id, ids[site]);
      EXPECT_TRUE(again.new_nodes.empty());
    }
  }
}

TEST(StackInterner, SameFramesAtAnotherDepthAreAnotherStack) {
  StackInterner trie;
  uint64_t shallow = intern(trie, {0x10, 0x10}).id;
  uint64_t deep = intern(trie, {0x10, 0x10, 0x10}).id;
  EXPECT_NE(shallow, deep);
  EXPECT_EQ(intern(trie, {0x10, 0x10}).id, shallow);
}

TEST(StackInterner, ClearStartsOverEvenForCachedStacks) {
  StackInterner trie;
  intern(trie, {0x99, 0x98});
  Interned before = intern(trie, {0x30, 0x20, 0x10});
  trie.clear();
  Interned after = intern(trie, {0x30, 0x20, 0x10});
  EXPECT_EQ(after.id, 3u);
  EXPECT_EQ(after.new_nodes.size(), 3u);
  EXPECT_NE(before.id, after.id);
}

}  // namespace
}  // namespace gpumemtrace::interpose
