#include "analyzer/replay/lifetimes.h"

#include <algorithm>
#include <vector>

namespace gpumemtrace::replay {

void Lifetimes::settle() {
  if (!pending_) return;
  Pending done = *pending_;
  pending_.reset();
  ended_(done.allocation, done.freed_ns);
}

void Lifetimes::allocated(const AllocationEvent& allocation) {
  settle();
  if (allocation.size < smallest_kept_) return;
  live_.insert_or_assign(allocation.key, allocation);
}

void Lifetimes::freed(uint64_t key, uint64_t time_ns) {
  settle();
  AllocationEvent allocation;
  if (live_.erase(key, &allocation)) pending_ = Pending{allocation, time_ns};
}

void Lifetimes::restored(uint64_t key, uint64_t) {
  if (pending_ && pending_->allocation.key == key) {
    live_.insert_or_assign(key, pending_->allocation);
    pending_.reset();
  }
}

void Lifetimes::finish() {
  settle();
  std::vector<AllocationEvent> live;
  live.reserve(live_.size());
  live_.for_each([&](uint64_t, const AllocationEvent& allocation) { live.push_back(allocation); });
  std::sort(live.begin(), live.end(), [](const AllocationEvent& a, const AllocationEvent& b) {
    return a.time_ns != b.time_ns ? a.time_ns < b.time_ns : a.key < b.key;
  });
  for (const AllocationEvent& allocation : live) ended_(allocation, std::nullopt);
}

}  // namespace gpumemtrace::replay
