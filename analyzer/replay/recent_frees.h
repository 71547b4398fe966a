// The last frees, remembered in a fixed direct-mapped table: enough to tell a double free from a free of
// an address never seen, and to put an allocation back when the driver refused its free (FreeFailed
// follows its Free at once), in constant memory however long the trace.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

namespace gpumemtrace::replay {

template <typename Entry>
class RecentFrees {
 public:
  void remember(uint8_t space, uint64_t address, const Entry& entry) {
    slot(address) = Slot{address, entry, space, true};
  }
  void forget(uint8_t space, uint64_t address) {
    if (Slot& s = slot(address); holds(s, space, address)) s.used = false;
  }
  std::optional<Entry> take(uint8_t space, uint64_t address) {
    Slot& s = slot(address);
    if (!holds(s, space, address)) return std::nullopt;
    s.used = false;
    return s.entry;
  }
  bool contains(uint8_t space, uint64_t address) { return holds(slot(address), space, address); }

 private:
  static constexpr size_t kSlots = 4096;
  struct Slot {
    uint64_t address = 0;
    Entry entry{};
    uint8_t space = 0;
    bool used = false;
  };
  static bool holds(const Slot& s, uint8_t space, uint64_t address) {
    return s.used && s.address == address && s.space == space;
  }
  Slot& slot(uint64_t address) { return slots_[(address * 0x9E3779B97F4A7C15ULL) >> 52]; }  // 12 bits

  std::array<Slot, kSlots> slots_{};
};

}  // namespace gpumemtrace::replay
