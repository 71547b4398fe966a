// The fast stack walker must see exactly the frames libunwind sees, through the program's own frames,
// libc's (qsort calls back into the program) and a thread's start, and give up rather than guess where
// it cannot follow (a signal frame).
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <thread>
#include <vector>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "interpose/stacks/native/fast_unwind.h"
#include "interpose/stacks/native/frame_rules.h"

namespace gpumemtrace::interpose {
namespace {

struct Stacks {
  std::vector<uintptr_t> fast;
  std::vector<uintptr_t> libunwind;
  long fast_result = 0;
};

// The most frames the fast walker is asked for.
size_t g_fast_limit = 512;

// Both walkers from the same frame. fast_backtrace reports its own frame first and then this one (at a
// different return address), libunwind this one first: the frames from the caller of this function on
// must agree.
__attribute__((noinline)) Stacks walk_both() {
  Stacks stacks;
  stacks.fast.resize(g_fast_limit);
  stacks.fast_result = fast_backtrace(stacks.fast.data(), stacks.fast.size());
  void* frames[512];
  int n = unw_backtrace(frames, 512);
  for (int i = 0; i < n; ++i) stacks.libunwind.push_back(reinterpret_cast<uintptr_t>(frames[i]));
  if (stacks.fast_result >= 0) stacks.fast.resize(static_cast<size_t>(stacks.fast_result));
  asm volatile("" ::: "memory");
  return stacks;
}

void expect_same_callers(const Stacks& stacks) {
  ASSERT_GE(stacks.fast_result, 2) << "the fast walker gave up";
  ASSERT_GE(stacks.libunwind.size(), 1u);
  std::vector<uintptr_t> fast(stacks.fast.begin() + 2, stacks.fast.end());
  std::vector<uintptr_t> slow(stacks.libunwind.begin() + 1, stacks.libunwind.end());
  // A walk cut at the limit holds the innermost frames.
  if (slow.size() > g_fast_limit - 2) slow.resize(g_fast_limit - 2);
  EXPECT_EQ(fast, slow);
  EXPECT_GT(fast.size(), 3u);
}

__attribute__((noinline)) Stacks recurse(int depth) {
  Stacks stacks = depth == 0 ? walk_both() : recurse(depth - 1);
  asm volatile("" ::: "memory");
  return stacks;
}

TEST(FastUnwind, DeepRecursionMatchesLibunwind) { expect_same_callers(recurse(40)); }

// Another path to walk_both, so that consecutive walks differ in the middle of the stack, not only on top.
__attribute__((noinline)) Stacks recurse_other(int depth, int switch_at) {
  Stacks stacks = depth == 0           ? walk_both()
                  : depth == switch_at ? recurse(depth - 1)
                                       : recurse_other(depth - 1, switch_at);
  asm volatile("" ::: "memory");
  return stacks;
}

// The walker reuses the part of the last walk that did not change: every mix of deeper, shallower and
// different frames must still give exactly libunwind's stack.
TEST(FastUnwind, ConsecutiveChangingStacksMatchLibunwind) {
  unsigned seed = 7;
  for (int i = 0; i < 500; ++i) {
    seed = seed * 1103515245 + 12345;
    int depth = static_cast<int>(seed >> 16) % 30;
    int switch_at = static_cast<int>(seed >> 8) % 30;
    Stacks stacks = seed & 1 ? recurse(depth) : recurse_other(depth, switch_at);
    expect_same_callers(stacks);
    if (HasFailure()) return;
  }
}

// Walks cut at a frame limit are reused too (a deep Python stack is always cut): the tail of the last
// walk is where the next one goes on from, when it needs more frames than the reused part gave.
TEST(FastUnwind, ConsecutiveWalksCutAtALimitMatchLibunwind) {
  unsigned seed = 11;
  for (size_t limit : {6u, 12u, 20u, 33u}) {
    g_fast_limit = limit;
    for (int i = 0; i < 300; ++i) {
      seed = seed * 1103515245 + 12345;
      int depth = static_cast<int>(seed >> 16) % 40;
      int switch_at = static_cast<int>(seed >> 8) % 40;
      Stacks stacks = seed & 1 ? recurse(depth) : recurse_other(depth, switch_at);
      EXPECT_EQ(stacks.fast_result, std::min<long>(static_cast<long>(limit), static_cast<long>(stacks.libunwind.size()) + 1));
      expect_same_callers(stacks);
      if (HasFailure()) break;
    }
  }
  g_fast_limit = 512;
}

// A frame of variable size: the compiler addresses it through rbp.
__attribute__((noinline)) Stacks with_alloca(size_t bytes) {
  auto* buffer = static_cast<volatile char*>(__builtin_alloca(bytes));
  buffer[0] = 1;
  Stacks stacks = walk_both();
  buffer[bytes - 1] = 2;
  return stacks;
}

TEST(FastUnwind, VariableSizedFrameMatchesLibunwind) { expect_same_callers(with_alloca(1000)); }

// An over-aligned local, alloca and arguments passed on the stack make gcc realign the stack through a
// pointer to the arguments (DRAP): the CFA is then an expression, *(rbp - N), and rbp is saved at rbp.
__attribute__((noinline)) Stacks realigned(size_t bytes, int a, int b, int c, int d, int e, int on_stack1,
                                           int on_stack2) {
  alignas(64) volatile char buffer[64];
  auto* more = static_cast<volatile char*>(__builtin_alloca(bytes));
  buffer[0] = static_cast<char>(a + b + c + d + e + on_stack1 + on_stack2);
  more[0] = buffer[0];
  Stacks stacks = walk_both();
  buffer[63] = more[0];
  return stacks;
}

TEST(FastUnwind, RealignedFrameMatchesLibunwind) { expect_same_callers(realigned(100, 1, 2, 3, 4, 5, 6, 7)); }

Stacks g_from_qsort;

TEST(FastUnwind, ThroughLibcMatchesLibunwind) {
  int values[2] = {2, 1};
  qsort(values, 2, sizeof(int), [](const void* a, const void* b) {
    g_from_qsort = walk_both();
    return *static_cast<const int*>(a) - *static_cast<const int*>(b);
  });
  expect_same_callers(g_from_qsort);
}

TEST(FastUnwind, ThreadStartMatchesLibunwind) {
  Stacks stacks;
  std::thread([&] { stacks = recurse(3); }).join();
  expect_same_callers(stacks);
}

Stacks g_in_handler;

TEST(FastUnwind, GivesUpAtASignalFrame) {
  struct sigaction action {}, previous{};
  action.sa_handler = [](int) { g_in_handler = walk_both(); };
  sigaction(SIGUSR1, &action, &previous);
  raise(SIGUSR1);
  sigaction(SIGUSR1, &previous, nullptr);
#if defined(__x86_64__)
  EXPECT_EQ(g_in_handler.fast_result, -1);
#endif
  EXPECT_GT(g_in_handler.libunwind.size(), 3u);
}

TEST(FrameRule, PacksIntoOneWord) {
  FrameRule rule;
  rule.kind = FrameRule::Kind::Step;
  rule.cfa = FrameRule::Cfa::DerefRbpOffset;
  rule.rbp_saved = true;
  rule.rbp_from_rbp = true;
  rule.cfa_offset = -123456;
  rule.rbp_offset = -16;
  FrameRule back = FrameRule::unpack(rule.pack());
  EXPECT_EQ(back.kind, rule.kind);
  EXPECT_EQ(back.cfa, rule.cfa);
  EXPECT_EQ(back.rbp_saved, rule.rbp_saved);
  EXPECT_EQ(back.rbp_from_rbp, rule.rbp_from_rbp);
  EXPECT_EQ(back.cfa_offset, rule.cfa_offset);
  EXPECT_EQ(back.rbp_offset, rule.rbp_offset);
  EXPECT_EQ(FrameRule{}.pack(), 0u);
}

}  // namespace
}  // namespace gpumemtrace::interpose
