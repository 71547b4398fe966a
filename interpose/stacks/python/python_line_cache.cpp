#include "interpose/stacks/python/python_line_cache.h"

namespace gpumemtrace::interpose::python {

size_t LineCache::index(const LineKey& key) {
  uint64_t h = (static_cast<uint64_t>(key.code) >> 4) * 0x9E3779B97F4A7C15ull +
               static_cast<uint64_t>(static_cast<uint32_t>(key.lasti)) * 0xC2B2AE3D27D4EB4Full;
  return static_cast<size_t>(h >> (64 - kSlotBits));
}

bool LineCache::lookup(const LineKey& key, int32_t* line) const {
  const Slot& slot = slots_[index(key)];
  uint32_t before = slot.seq.load(std::memory_order_acquire);
  if (before & 1) return false;
  LineKey slot_key{slot.code.load(std::memory_order_relaxed), slot.linetable.load(std::memory_order_relaxed),
                   slot.first_line.load(std::memory_order_relaxed), slot.lasti.load(std::memory_order_relaxed)};
  int32_t slot_line = slot.line.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (slot.seq.load(std::memory_order_relaxed) != before) return false;
  if (slot_key != key) return false;
  *line = slot_line;
  return true;
}

void LineCache::store(const LineKey& key, int32_t line) {
  Slot& slot = slots_[index(key)];
  uint32_t seq = slot.seq.load(std::memory_order_relaxed);
  if ((seq & 1) || !slot.seq.compare_exchange_strong(seq, seq + 1, std::memory_order_acquire)) return;
  std::atomic_thread_fence(std::memory_order_release);
  slot.code.store(key.code, std::memory_order_relaxed);
  slot.linetable.store(key.linetable, std::memory_order_relaxed);
  slot.first_line.store(key.first_line, std::memory_order_relaxed);
  slot.lasti.store(key.lasti, std::memory_order_relaxed);
  slot.line.store(line, std::memory_order_relaxed);
  slot.seq.store(seq + 2, std::memory_order_release);
}

void LineCache::clear() {
  for (Slot& slot : slots_) {
    uint32_t seq = slot.seq.load(std::memory_order_relaxed);
    if ((seq & 1) || !slot.seq.compare_exchange_strong(seq, seq + 1, std::memory_order_acquire)) continue;
    std::atomic_thread_fence(std::memory_order_release);
    slot.code.store(0, std::memory_order_relaxed);
    slot.seq.store(seq + 2, std::memory_order_release);
  }
}

}  // namespace gpumemtrace::interpose::python
