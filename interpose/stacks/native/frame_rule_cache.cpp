#include "interpose/stacks/native/frame_rule_cache.h"

#include <pthread.h>

#include <mutex>

namespace gpumemtrace::interpose {

namespace frame_rule_cache {

Slot g_slots[kSlots];
std::atomic<uint64_t> g_generation{1};

namespace {

// Taken around fork too, so that a child never inherits it locked.
std::mutex g_write_mutex;
[[maybe_unused]] const int g_fork_guard = pthread_atfork([] { g_write_mutex.lock(); }, [] { g_write_mutex.unlock(); },
                                                         [] { g_write_mutex.unlock(); });

}  // namespace

FrameRule find_and_remember(uintptr_t pc) {
  uint64_t generation = frame_rule_generation();
  FrameRule rule = find_frame_rule(pc);
  std::lock_guard lock(g_write_mutex);
  // A library unloaded while the rule was being read: it may describe code that is gone.
  if (generation != frame_rule_generation()) return rule;
  for (size_t probe = 0, i = home_slot(pc); probe < kProbes; ++probe, i = (i + 1) & (kSlots - 1)) {
    uintptr_t present = g_slots[i].pc.load(std::memory_order_relaxed);
    if (present == pc) break;
    if (present == 0) {
      g_slots[i].rule.store(rule.pack(), std::memory_order_release);
      g_slots[i].pc.store(pc, std::memory_order_release);
      break;
    }
  }
  return rule;
}

}  // namespace frame_rule_cache

void forget_frame_rules() {
  using namespace frame_rule_cache;
  std::lock_guard lock(g_write_mutex);
  g_generation.fetch_add(1, std::memory_order_acq_rel);
  for (Slot& slot : g_slots) {
    if (slot.pc.load(std::memory_order_relaxed) == 0) continue;
    slot.pc.store(0, std::memory_order_relaxed);
    slot.rule.store(0, std::memory_order_release);
  }
}

}  // namespace gpumemtrace::interpose
