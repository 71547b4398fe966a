// Frame rules (frame_rules.h) by code address, shared by all threads: looked up without a lock on every
// frame of every captured stack, computed from the unwind tables only the first time an address is seen.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "interpose/stacks/native/frame_rules.h"

namespace gpumemtrace::interpose {

namespace frame_rule_cache {

// Open addressing with short probes. A slot's pc is stored after its rule (release), so a reader that sees
// the pc sees the rule; a reader re-checks the pc after reading the rule, in case forget_frame_rules()
// emptied the slot meanwhile. Slots are never changed otherwise: when the probes find no room, the rule
// is simply not cached.
struct Slot {
  std::atomic<uintptr_t> pc{0};
  std::atomic<uint64_t> rule{0};
};
inline constexpr size_t kSlots = size_t{1} << 16;  // 1 MiB of zero pages until used
inline constexpr size_t kProbes = 8;
extern Slot g_slots[kSlots];
extern std::atomic<uint64_t> g_generation;

inline size_t home_slot(uintptr_t pc) { return static_cast<size_t>((pc * 0x9E3779B97F4A7C15ull) >> 48) & (kSlots - 1); }

// Computes the rule and caches it.
FrameRule find_and_remember(uintptr_t pc);

}  // namespace frame_rule_cache

// The rule for the instruction at pc, from the cache or computed now.
inline FrameRule cached_frame_rule(uintptr_t pc) {
  using namespace frame_rule_cache;
  for (size_t probe = 0, i = home_slot(pc); probe < kProbes; ++probe, i = (i + 1) & (kSlots - 1)) {
    uintptr_t present = g_slots[i].pc.load(std::memory_order_acquire);
    if (present == 0) break;
    if (present != pc) continue;
    uint64_t rule = g_slots[i].rule.load(std::memory_order_acquire);
    if (rule != 0 && g_slots[i].pc.load(std::memory_order_relaxed) == pc) return FrameRule::unpack(rule);
    break;
  }
  return find_and_remember(pc);
}

// Forgets every rule: an unloaded library's addresses may now hold other code (called around dlclose).
void forget_frame_rules();

// Changes whenever the rules are forgotten, so that walks made with the old rules are not reused.
inline uint64_t frame_rule_generation() { return frame_rule_cache::g_generation.load(std::memory_order_acquire); }

}  // namespace gpumemtrace::interpose
