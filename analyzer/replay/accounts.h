// Where the replay adds up bytes: an Account per device (device memory: cuMemAlloc, async pools, VMM
// physical memory and arrays), one for all managed memory and one for all pinned host memory; and a Site
// per (stack, device, category), the unit every report groups by.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "analyzer/replay/stack_table.h"
#include "analyzer/replay/windowed_series.h"
#include "trace/reader/records.h"

namespace gpumemtrace::replay {

using format::kMemoryKinds;

using Category = format::MemoryCategory;

using AccountId = uint32_t;
using SiteId = uint32_t;

struct Account {
  Category category = Category::Device;
  int32_t device = trace::kNoDevice;  // for Category::Device

  uint64_t live_bytes = 0;
  uint64_t live_count = 0;
  uint64_t peak_bytes = 0;    // the first time the maximum of live_bytes was reached
  uint64_t peak_count = 0;
  uint64_t peak_time_ns = 0;
  uint32_t peak_epoch = 0;    // how many times a new maximum was reached
  uint64_t allocations = 0;
  uint64_t frees = 0;
  uint64_t failed_allocations = 0;
  std::array<uint64_t, kMemoryKinds> kind_bytes{};          // live bytes by memory kind
  std::array<uint64_t, kMemoryKinds> kind_bytes_at_peak{};
  uint64_t vmm_mapped_bytes = 0;  // bytes of this device's physical allocations mapped somewhere
  uint64_t vmm_mapped_at_peak = 0;
  uint64_t meminfo_free = 0;      // the last cuMemGetInfo the program asked for (0, 0: none)
  uint64_t meminfo_total = 0;

  WindowedSeries<Reduce::Max> timeline;
  std::array<WindowedSeries<Reduce::Max>, kMemoryKinds> kind_timeline;
};

struct Site {
  StackId stack = 0;
  int32_t device = trace::kNoDevice;
  Category category = Category::Device;
  AccountId account = 0;

  uint64_t bytes = 0;  // live now
  uint64_t count = 0;
  uint64_t allocations = 0;  // over the whole trace
  uint64_t allocated_bytes = 0;

  // The value at the account's latest peak, valid while peak_epoch equals the account's: a site records
  // it just before its first change after a new peak; a site unchanged since the peak still holds it.
  uint64_t peak_bytes = 0;
  uint64_t peak_count = 0;
  uint32_t peak_epoch = UINT32_MAX;

  WindowedSeries<Reduce::Min> floor;  // the least it held in each growth window
};

class Accounts {
 public:
  static constexpr AccountId kManaged = 0;
  static constexpr AccountId kHostPinned = 1;

  Accounts();

  AccountId for_kind(trace::MemoryKind kind, int32_t device);
  AccountId for_device(int32_t device);  // creates the device's account when first seen
  const Account* find_device(int32_t device) const;

  Account& operator[](AccountId id) { return *accounts_[id]; }
  const Account& operator[](AccountId id) const { return *accounts_[id]; }
  uint32_t size() const { return static_cast<uint32_t>(accounts_.size()); }
  // The device accounts, by device ordinal.
  std::vector<AccountId> devices() const;

 private:
  std::vector<std::unique_ptr<Account>> accounts_;
  int32_t last_device_ = trace::kNoDevice;
  AccountId last_device_account_ = 0;
};

}  // namespace gpumemtrace::replay
