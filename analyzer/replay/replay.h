// The replay model: feeds on the records of a trace, one at a time, and keeps what the reports need.
//
//   replay::Replay replay;
//   while (const trace::Record* record = reader.next()) replay.on_record(*record, reader);
//   replay.finish(reader);
//
// Memory grows with the live set (one hash entry per live allocation), the number of distinct stacks
// (one Site per stack, device and memory category) and a fixed number of windows; never with the number
// of events. Every event costs O(1): the live set at the peak is kept lazily (see Site::at_peak), not
// copied at each new maximum.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "analyzer/replay/accounts.h"
#include "common/address_map.h"
#include "analyzer/replay/device_facts.h"
#include "analyzer/replay/allocation_listener.h"
#include "analyzer/replay/event_selection.h"
#include "analyzer/replay/heap_segments.h"
#include "analyzer/replay/heaps.h"
#include "analyzer/replay/phase_instances.h"
#include "analyzer/replay/phase_windows.h"
#include "analyzer/replay/phases.h"
#include "analyzer/replay/recent_frees.h"
#include "analyzer/replay/stack_table.h"
#include "analyzer/replay/time_slices.h"
#include "analyzer/replay/vmm_mappings.h"
#include "trace/reader/reader.h"

namespace gpumemtrace::replay {

struct ReplayOptions {
  uint32_t growth_windows = 32;     // growth series keep 32..64 equal slices per site
  uint32_t timeline_windows = 512;  // the timeline keeps 512..1024 equal slices per account
  uint32_t failures_with_detail = 1000;  // failures beyond this are counted, without their live set
  uint32_t live_sites_per_failure = 64;  // the largest sites of the live set kept with each failure
  // Of each device's destroyed heaps, those kept with their figures (the highest peaks); the others are
  // counted together (heaps.h, FoldedHeaps). Exports that draw every heap keep them all.
  uint64_t destroyed_heaps_kept = 100;
  EventSelection selection;              // the events taken (all of them by default)
  AllocationListener* listener = nullptr;  // told of every allocation taken, and of its end
  // The used view (heap_segments.h): the blocks of heaps count, the segments that hold them do not. Made
  // from a first reading of the trace (UsedView); unset: every allocation counts as the driver saw it.
  std::shared_ptr<const UsedView> used_view;
  // The used view comes as the first reading makes it (Replay::used_view_grew), for a used reading alongside it.
  bool used_view_streamed = false;
  // Growth windows that follow a phase's instances (phase_windows.h); unset: equal time slices.
  std::optional<PhaseWindowsPlan> growth_phase;
};

// The same bytes, as the process saw them at one moment.
struct SiteShare {
  SiteId site = 0;
  uint64_t bytes = 0;
  uint64_t count = 0;
};

// What a memory pool was known to hold, from its last PoolTrim or PoolUsage record.
struct PoolState {
  uint64_t pool = 0;
  int32_t device = trace::kNoDevice;
  uint64_t reserved_bytes = 0;
  uint64_t used_bytes = 0;
  uint64_t time_ns = 0;  // when it was last reported
  std::optional<uint64_t> release_threshold = std::nullopt;  // from a PoolThreshold record (CUPTI), if any
  bool reported = false;
  bool destroyed = false;
};

// A failed allocation and the state of its device at that moment.
struct Failure {
  uint64_t time_ns = 0;
  trace::Api api{};
  int32_t device = trace::kNoDevice;
  uint64_t requested_bytes = 0;
  uint64_t error = 0;
  uint64_t device_free = 0;   // from the record, else the last MemInfo of the device; 0 when unknown
  uint64_t device_total = 0;
  StackId stack = 0;
  AccountId account = 0;
  uint64_t live_bytes = 0;    // this process's memory of the account then (requested sizes)
  uint64_t live_count = 0;
  std::array<uint64_t, kMemoryKinds> kind_bytes{};
  uint64_t vmm_mapped_bytes = 0;
  bool has_detail = false;         // false beyond ReplayOptions::failures_with_detail
  std::vector<SiteShare> live_set;  // largest first, at most live_sites_per_failure
  uint64_t unlisted_bytes = 0;      // the live bytes of the sites beyond live_set
  uint64_t unlisted_sites = 0;
  std::vector<PoolState> pools;     // the PoolUsage records the tracer wrote with this failure
  HeapsAtFailure heaps;             // the sub-allocator heaps the request could have come from
  std::vector<NvmlDevice> nvml;     // the devices as NVML showed them right after (its DeviceState records)

  bool out_of_memory() const { return error == format::kErrorOutOfMemory; }
};

// Trace records that do not add up. Counted and reported; the replay carries on.
struct Inconsistencies {
  uint64_t unknown_frees = 0;          // a free of an address that is not live and was not freed lately
  uint64_t double_frees = 0;           // a free of an address freed lately and not allocated since
  uint64_t reallocated_live = 0;       // an allocation at an address still live: the old one is dropped
  uint64_t unknown_unmaps = 0;         // a MemUnmap that covers no mapping
  uint64_t unmatched_failed_frees = 0;  // a FreeFailed with no recorded free to undo
  uint64_t restored_allocations = 0;   // FreeFailed after a recorded free: the allocation was put back
  uint64_t refused_invalid_frees = 0;  // a free of a dead or unknown address that the driver refused: the
                                       // program's bug, faithfully recorded (not counted in total())

  uint64_t total() const {
    return unknown_frees + double_frees + reallocated_live + unknown_unmaps + unmatched_failed_frees;
  }
};

class Replay {
 public:
  explicit Replay(ReplayOptions options = {});
  Replay(const Replay&) = delete;
  Replay& operator=(const Replay&) = delete;

  void on_record(const trace::Record& record, const trace::Reader& reader);
  // After the last record: whether the trace is complete, and the time it ends.
  void finish(const trace::Reader& reader);

  bool complete() const { return complete_; }
  uint64_t end_time_ns() const { return end_time_ns_; }
  uint64_t first_event_ns() const { return growth_clock_.origin_ns(); }

  const StackTable& stacks() const { return stacks_; }
  const Accounts& accounts() const { return accounts_; }
  const std::vector<Site>& sites() const { return sites_; }
  const std::vector<Failure>& failures() const { return failures_; }
  uint64_t failures_without_detail() const { return failures_without_detail_; }
  const std::vector<PoolState>& pools() const { return pools_; }
  const Inconsistencies& inconsistencies() const { return inconsistencies_; }
  const PhaseTracker& phases() const { return phases_; }
  const HeapTracker& heaps() const { return heaps_; }
  const PhaseInstances& phase_instances() const { return instances_; }
  const DeviceFacts& device_facts() const { return device_facts_; }
  const ReplayOptions& options() const { return options_; }

  // Heap memory (heap_segments.h): the allocations that became heap memory, as a UsedView for the used
  // reading; and, in the used reading, the allocations it took for segments by mistake (to read again).
  UsedView used_view() const;
  const std::vector<uint64_t>& mistaken_segments() const;
  // The first reading as it goes (for a used reading alongside it): the records read so far, its marks, and
  // how many times a mark already made had its bytes raised.
  uint64_t records_read() const { return record_; }
  const std::vector<SegmentMark>& segment_marks() const { return segment_marks_.marks(); }
  uint64_t segment_marks_raised() const { return segment_marks_.raised(); }
  // The used reading alongside the first (options.used_view_streamed): its view has grown (SegmentsAhead::
  // view_grew); once `complete`, the options make a replay of the whole view. And whether it judged an
  // allocation before its mark came (then it is not the used view's reading).
  void used_view_grew(bool complete);
  bool used_view_misjudged() const { return segments_ahead_ && segments_ahead_->misjudged(); }

  // A site's live bytes and count at its account's peak.
  SiteShare at_peak(SiteId site) const;
  // Per growth window: the least each site held during the window (from the first event on; or per group
  // of the instances of options().growth_phase).
  std::vector<uint64_t> growth_floors(SiteId site) const;
  const TimeSlices& growth_clock() const { return growth_clock_; }
  // Per timeline window: the most an account held (all its kinds, or one kind).
  std::vector<uint64_t> timeline(AccountId account) const;
  std::vector<uint64_t> timeline(AccountId account, trace::MemoryKind kind) const;
  const TimeSlices& timeline_clock() const { return timeline_clock_; }

 private:
  struct Live {
    uint64_t size = 0;
    SiteId site = 0;
    trace::MemoryKind kind{};  // of the allocating API: a free may name another (cudaFree of async memory)
  };
  // Allocations live in three address spaces: pointers, VMM handles and CUarrays; in the used view, heaps'
  // blocks in a fourth.
  enum class Space : uint8_t { Pointer, VmmHandle, Array, Block };
  static Space space_of(trace::MemoryKind kind) {
    if (kind == trace::MemoryKind::VmmPhysical) return Space::VmmHandle;
    return kind == trace::MemoryKind::Array ? Space::Array : Space::Pointer;
  }
  AddressMap<Live>& live_map(Space space) { return live_[static_cast<size_t>(space)]; }
  RecentFrees<Live>& recent_frees(Space space) { return recent_frees_[static_cast<size_t>(space)]; }

  bool after_window(const trace::Record& record) const;  // after the selection's to_ns
  void on_event(uint64_t time_ns);
  void on_alloc(const trace::Alloc& alloc, const trace::Reader& reader);
  void on_free(const trace::Free& free);
  void on_free_failed(const trace::FreeFailed& failed);
  void on_alloc_failed(const trace::AllocFailed& failed, const trace::Reader& reader);
  void on_pool_report(uint64_t pool, int32_t device, uint64_t reserved, uint64_t used, uint64_t time_ns);
  void on_pool_usage(const trace::PoolUsage& usage);
  void on_map(const trace::MemMap& map);
  void on_unmap(const trace::MemUnmap& unmap);
  void on_heap_create(const trace::HeapCreate& create);
  void on_block(const trace::SubAlloc& block, const trace::Reader& reader);
  void free_block(uint64_t address);
  // The used reading: the blocks of a heap that is reset or destroyed are freed.
  void free_blocks(uint64_t heap);
  // Marks the live allocations inside [address, address + size) as heap memory; the first one's place.
  std::optional<Live> mark_segments(uint64_t address, uint64_t size);

  SiteId site_of(StackId stack, int32_t device, trace::MemoryKind kind);
  SiteId find_or_add_site(StackId stack, int32_t device, Category category, trace::MemoryKind kind);
  void add(const Live& live, uint64_t time_ns);
  void remove(const Live& live);
  void change_site(Site& site, int64_t bytes, int64_t count);
  PoolState& pool(uint64_t handle);
  uint64_t device_live_bytes() const;  // over every device
  // An allocation's name for the phase instances: its address in its address space.
  static uint64_t instance_key(Space space, uint64_t address) { return address << 2 | static_cast<uint64_t>(space); }

  ReplayOptions options_;
  StackTable stacks_;
  Accounts accounts_;
  std::vector<Site> sites_;
  AddressMap<SiteId> site_ids_;  // (stack, device, category) packed
  static constexpr SiteId kNoSite = UINT32_MAX;
  std::vector<SiteId> last_site_by_stack_;  // by StackId: the site it allocated for last, or kNoSite
  std::array<AddressMap<Live>, 4> live_;
  std::array<RecentFrees<Live>, 4> recent_frees_;
  std::array<AddressMap<bool>, 4> left_out_;  // live allocations the selection left out, for their frees
  bool selecting_ = false;                    // the selection leaves something out
  VmmMappings mappings_;
  std::vector<PoolState> pools_;
  std::unordered_map<uint64_t, size_t> pool_index_;  // handle → index in pools_
  PhaseTracker phases_;
  HeapTracker heaps_;
  PhaseInstances instances_;
  uint64_t record_ = 0;              // records read, this one included
  uint64_t allocations_taken_ = 0;  // the ordinal of the last allocation taken
  SegmentMarks segment_marks_;      // not in the used reading
  std::optional<SegmentsAhead> segments_ahead_;  // the used reading only
  std::optional<PhaseFloors> phase_floors_;
  std::vector<Failure> failures_;
  uint64_t failures_without_detail_ = 0;
  std::optional<size_t> pool_reports_go_to_;  // the failure the PoolUsage records being read belong to
  std::optional<size_t> nvml_states_go_to_;   // the last out-of-memory failure kept, for NVML's oom states
  DeviceFacts device_facts_;
  struct BadFree {
    uint64_t address = 0;
    bool double_free = false;
  };
  std::optional<BadFree> last_bad_free_;  // the free just read, when it was not of a live address
  Inconsistencies inconsistencies_;
  TimeSlices growth_clock_;
  TimeSlices timeline_clock_;
  bool complete_ = false;
  uint64_t end_time_ns_ = 0;
};

}  // namespace gpumemtrace::replay
