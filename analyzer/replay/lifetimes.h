// Pairs each allocation a replay takes with its free, for outputs that list allocations (a CSV row each,
// the largest allocations as Perfetto slices). `ended` is called once per allocation: when it is freed,
// and at finish() for those still live (freed_ns empty), in the order they were made. A free the driver
// refused right after recording it is undone: the allocation goes on.
//
// Memory: one entry per live allocation it keeps (those of at least smallest_kept() bytes).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "common/address_map.h"
#include "analyzer/replay/allocation_listener.h"

namespace gpumemtrace::replay {

class Lifetimes : public AllocationListener {
 public:
  using Ended = std::function<void(const AllocationEvent& allocation, std::optional<uint64_t> freed_ns)>;

  explicit Lifetimes(Ended ended) : ended_(std::move(ended)) {}

  // Allocations smaller than this from now on are not kept, and never reported.
  void keep_from(uint64_t bytes) { smallest_kept_ = bytes; }
  uint64_t smallest_kept() const { return smallest_kept_; }

  void allocated(const AllocationEvent& allocation) override;
  void freed(uint64_t key, uint64_t time_ns) override;
  void restored(uint64_t key, uint64_t time_ns) override;
  // The trace ends: the allocations still live end without a free.
  void finish();

 private:
  struct Pending {
    AllocationEvent allocation;
    uint64_t freed_ns = 0;
  };
  void settle();  // the free held back is final

  Ended ended_;
  uint64_t smallest_kept_ = 0;
  AddressMap<AllocationEvent> live_;
  std::optional<Pending> pending_;  // the last free, until the next event shows it was not refused
};

}  // namespace gpumemtrace::replay
