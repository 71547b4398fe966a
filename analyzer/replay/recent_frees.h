// The last frees of one address space, remembered in a fixed direct-mapped table: enough to tell a double
// free from a free of an address never seen, and to put an allocation back when the driver refused its
// free (its FreeFailed comes soon after the Free, though other threads' records may come between), in
// constant memory however long the trace. 2048 slots of 24 bytes: small enough to stay in cache while the
// replay runs, large enough to span the frees between a Free and its FreeFailed.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

namespace gpumemtrace::replay {

template <typename Entry>
class RecentFrees {
 public:
  // The address UINT64_MAX marks a free slot, so a free of that address is not remembered.
  void remember(uint64_t address, const Entry& entry) { slot(address) = Slot{address, entry}; }
  void forget(uint64_t address) {
    if (Slot& s = slot(address); s.address == address) s.address = kEmpty;
  }
  std::optional<Entry> take(uint64_t address) {
    Slot& s = slot(address);
    if (s.address != address || address == kEmpty) return std::nullopt;
    s.address = kEmpty;
    return s.entry;
  }
  bool contains(uint64_t address) { return address != kEmpty && slot(address).address == address; }

 private:
  static constexpr uint64_t kEmpty = UINT64_MAX;
  static constexpr unsigned kSlotBits = 11;
  struct Slot {
    uint64_t address = kEmpty;
    Entry entry{};
  };
  Slot& slot(uint64_t address) { return slots_[(address * 0x9E3779B97F4A7C15ULL) >> (64 - kSlotBits)]; }

  std::array<Slot, size_t{1} << kSlotBits> slots_{};
};

}  // namespace gpumemtrace::replay
