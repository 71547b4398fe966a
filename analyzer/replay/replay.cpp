#include "analyzer/replay/replay.h"

#include <algorithm>
#include <type_traits>
#include <variant>

namespace gpumemtrace::replay {

namespace {

size_t kind_index(trace::MemoryKind kind) { return static_cast<size_t>(kind); }

}  // namespace

Replay::Replay(ReplayOptions options)
    : options_(options),
      selecting_(!options.selection.selects_everything()),
      heaps_(options.destroyed_heaps_kept, !options.used_view),
      growth_clock_(options.growth_windows),
      timeline_clock_(options.timeline_windows) {
  if (options_.used_view) segments_ahead_.emplace(*options_.used_view, options_.used_view_streamed);
  if (options_.growth_phase) phase_floors_.emplace(*options_.growth_phase);
}

void Replay::on_record(const trace::Record& record, const trace::Reader& reader) {
  ++record_;
  if (!std::holds_alternative<trace::DeviceProcess>(record)) device_facts_.end_state();
  if (selecting_ && after_window(record)) return;
  // Nearly every record is one of these two: handled before the visitor below is made (it stores a capture per
  // handler on every call: a fifth of a plain trace's reading went there).
  if (const auto* alloc = std::get_if<trace::Alloc>(&record)) return on_alloc(*alloc, reader);
  if (const auto* free = std::get_if<trace::Free>(&record)) return on_free(*free);
  // Every record type has its handler here: a new one does not compile until it is added.
  std::visit(trace::Exhaustive{
                 [&](const trace::Alloc& r) { on_alloc(r, reader); },
                 [&](const trace::Free& r) { on_free(r); },
                 [&](const trace::AllocFailed& r) { on_alloc_failed(r, reader); },
                 [&](const trace::FreeFailed& r) { on_free_failed(r); },
                 [&](const trace::MemMap& r) { on_map(r); },
                 [&](const trace::MemUnmap& r) { on_unmap(r); },
                 [&](const trace::PoolCreate& r) {
                   on_event(r.time_ns);
                   PoolState& state = pool(r.pool);
                   state = PoolState{.pool = r.pool, .device = r.device, .time_ns = r.time_ns};
                 },
                 [&](const trace::PoolDestroy& r) {
                   on_event(r.time_ns);
                   pool(r.pool).destroyed = true;
                 },
                 [&](const trace::PoolTrim& r) {
                   on_event(r.time_ns);
                   on_pool_report(r.pool, trace::kNoDevice, r.reserved_after, r.used_after, r.time_ns);
                 },
                 [&](const trace::PoolUsage& r) { on_pool_usage(r); },
                 [&](const trace::PoolThreshold& r) {
                   on_event(r.time_ns);
                   pool(r.pool).release_threshold = r.release_threshold;
                 },
                 [&](const trace::MemInfo& r) {
                   on_event(r.time_ns);
                   if (r.device == trace::kNoDevice) return;
                   Account& account = accounts_[accounts_.for_device(r.device)];
                   account.meminfo_free = r.free_bytes;
                   account.meminfo_total = r.total_bytes;
                 },
                 [&](const trace::PhasePush& r) {
                   on_event(r.time_ns);
                   if (phases_.on(r))
                     instances_.on_push(r.thread, phases_.path_of_thread(r.thread), r.time_ns, device_live_bytes());
                 },
                 [&](const trace::PhasePop& r) {
                   on_event(r.time_ns);
                   if (std::optional<size_t> place = phases_.on(r))
                     instances_.on_pop(r.thread, *place, r.time_ns, device_live_bytes());
                 },
                 trace::handle<trace::RangeStart, trace::RangeEnd>([&](const auto& r) {
                   on_event(r.time_ns);
                   phases_.on(r);
                 }),
                 trace::handle<trace::PhaseDomain, trace::PhaseName>([&](const auto& r) { phases_.on(r); }),
                 [&](const trace::HeapCreate& r) { on_heap_create(r); },
                 [&](const trace::SubAlloc& r) { on_block(r, reader); },
                 [&](const trace::SubFree& r) {
                   on_event(r.time_ns);
                   heaps_.at_window(timeline_clock_.window());
                   heaps_.on(r);
                   if (segments_ahead_ && r.heap != 0) free_block(r.address);
                 },
                 trace::handle<trace::HeapDestroy, trace::HeapReset>([&](const auto& r) {
                   on_event(r.time_ns);
                   if (segments_ahead_) free_blocks(r.heap);
                   heaps_.at_window(timeline_clock_.window());
                   heaps_.on(r);
                 }),
                 // A block freed but held until the GPU is done with it: still used.
                 trace::handle<trace::SubName, trace::SubFreeRequested>([&](const auto& r) {
                   on_event(r.time_ns);
                   heaps_.at_window(timeline_clock_.window());
                   heaps_.on(r);
                 }),
                 // PyTorch's snapshots are files of their own; these records only say where and when.
                 trace::handle<trace::AddressReserve, trace::AddressFree, trace::TorchHook, trace::TorchSnapshot,
                               trace::End>([&](const auto& r) { on_event(r.time_ns); }),
                 // The whole device (NVML) and the contexts: not this process's allocations (device_facts.h).
                 [&](const trace::DeviceState& r) {
                   std::optional<size_t> failure = nvml_states_go_to_;
                   std::optional<size_t> pools = pool_reports_go_to_;
                   on_event(r.time_ns);
                   bool oom = r.moment == static_cast<uint64_t>(format::DeviceStateMoment::OutOfMemory);
                   device_facts_.on(r, oom && failure ? &failures_[*failure].nvml : nullptr);
                   pool_reports_go_to_ = pools;
                 },
                 [&](const trace::DeviceProcess& r) { device_facts_.on(r); },
                 [&](const trace::Context& r) {
                   on_event(r.time_ns);
                   device_facts_.on(r);
                 },
                 [&](const trace::Placement& r) { device_facts_.on(r); },
                 // What the reader already keeps (stacks, modules, Python codes, native functions, threads,
                 // the process), or not memory. The stack table takes Python codes and native functions from
                 // the reader when it resolves a stack.
                 trace::handle<trace::Process, trace::ModulesBegin, trace::Module, trace::StacksReset,
                               trace::StackNode, trace::PythonCode, trace::NativeFunction, trace::ThreadNew,
                               trace::ThreadSwitch, trace::Fork, trace::Source, trace::Param>(
                     [](const auto&) {}),
             },
             record);
}

bool Replay::after_window(const trace::Record& record) const {
  return std::visit(
      [&](const auto& r) {
        if constexpr (std::is_base_of_v<trace::Event, std::decay_t<decltype(r)>>)
          return r.time_ns > options_.selection.to_ns;
        else
          return false;
      },
      record);
}

[[gnu::always_inline]] inline void Replay::on_event(uint64_t time_ns) {
  pool_reports_go_to_.reset();
  last_bad_free_.reset();
  end_time_ns_ = std::max(end_time_ns_, time_ns);
  growth_clock_.advance(time_ns, [&](uint32_t window) {
    for (Site& site : sites_) site.floor.halve(window);
  });
  timeline_clock_.advance(time_ns, [&](uint32_t window) {
    for (AccountId id = 0; id < accounts_.size(); ++id) {
      Account& account = accounts_[id];
      account.timeline.halve(window);
      for (auto& series : account.kind_timeline) series.halve(window);
    }
    heaps_.halve(window);
  });
}

[[gnu::always_inline]] inline SiteId Replay::site_of(StackId stack, int32_t device, trace::MemoryKind kind) {
  Category category = format::memory_category(kind);
  if (category != Category::Device) device = category == Category::Managed ? device : trace::kNoDevice;
  // A stack nearly always allocates one kind of memory on one device: try its last site before hashing.
  if (stack < last_site_by_stack_.size() && last_site_by_stack_[stack] != kNoSite) {
    const Site& last = sites_[last_site_by_stack_[stack]];
    if (last.device == device && last.category == category) return last_site_by_stack_[stack];
  }
  return find_or_add_site(stack, device, category, kind);
}

SiteId Replay::find_or_add_site(StackId stack, int32_t device, Category category, trace::MemoryKind kind) {
  // The reader keeps devices below 2^31, so stack, device + 1 and category fit in 64 bits.
  uint64_t key = uint64_t{stack} << 32 | static_cast<uint64_t>(static_cast<uint32_t>(device + 1)) << 2 |
                 static_cast<uint64_t>(category);
  if (SiteId* id = site_ids_.find(key)) return last_site_by_stack_[stack] = *id;
  SiteId id = static_cast<SiteId>(sites_.size());
  Site& site = sites_.emplace_back();
  site.stack = stack;
  site.device = device;
  site.category = category;
  site.account = accounts_.for_kind(kind, device);
  site_ids_.insert_or_assign(key, id);
  if (stack >= last_site_by_stack_.size()) last_site_by_stack_.resize(stack + 1, kNoSite);
  return last_site_by_stack_[stack] = id;
}

[[gnu::always_inline]] inline void Replay::change_site(Site& site, int64_t bytes, int64_t count) {
  const Account& account = accounts_[site.account];
  if (site.peak_epoch != account.peak_epoch) {  // first change since the latest peak: keep the value it had
    site.peak_bytes = site.bytes;
    site.peak_count = site.count;
    site.peak_epoch = account.peak_epoch;
  }
  if (phase_floors_) {
    PathId path = options_.growth_phase->path;
    phase_floors_->change(static_cast<SiteId>(&site - sites_.data()), site.bytes, instances_.windows(path),
                          instances_.window_open(path));
  }
  site.bytes += static_cast<uint64_t>(bytes);
  site.count += static_cast<uint64_t>(count);
  site.floor.set(growth_clock_.window(), site.bytes);
}

[[gnu::always_inline]] inline void Replay::add(const Live& live, uint64_t time_ns) {
  Site& site = sites_[live.site];
  change_site(site, static_cast<int64_t>(live.size), 1);
  Account& account = accounts_[site.account];
  account.live_bytes += live.size;
  account.live_count += 1;
  account.kind_bytes[kind_index(live.kind)] += live.size;
  uint32_t window = timeline_clock_.window();
  account.timeline.set(window, account.live_bytes);
  account.kind_timeline[kind_index(live.kind)].set(window, account.kind_bytes[kind_index(live.kind)]);
  if (account.live_bytes > account.peak_bytes) {
    account.peak_bytes = account.live_bytes;
    account.peak_count = account.live_count;
    account.peak_time_ns = time_ns;
    account.kind_bytes_at_peak = account.kind_bytes;
    account.vmm_mapped_at_peak = account.vmm_mapped_bytes;
    ++account.peak_epoch;
  }
}

[[gnu::always_inline]] inline void Replay::remove(const Live& live) {
  Site& site = sites_[live.site];
  change_site(site, -static_cast<int64_t>(live.size), -1);
  Account& account = accounts_[site.account];
  account.live_bytes -= live.size;
  account.live_count -= 1;
  account.kind_bytes[kind_index(live.kind)] -= live.size;
  uint32_t window = timeline_clock_.window();
  account.timeline.set(window, account.live_bytes);
  account.kind_timeline[kind_index(live.kind)].set(window, account.kind_bytes[kind_index(live.kind)]);
}

void Replay::on_alloc(const trace::Alloc& alloc, const trace::Reader& reader) {
  if (selecting_ && !options_.selection.takes_allocation(alloc.time_ns, alloc.kind(), alloc.device, alloc.size)) {
    left_out_[static_cast<size_t>(space_of(alloc.kind()))].insert_or_assign(alloc.address, true);
    return;
  }
  if (!growth_clock_.started()) {
    growth_clock_.start(alloc.time_ns);
    timeline_clock_.start(alloc.time_ns);
  }
  on_event(alloc.time_ns);
  trace::MemoryKind kind = alloc.kind();
  Space space = space_of(kind);
  uint64_t key = instance_key(space, alloc.address);
  StackId stack = stacks_.intern(reader, alloc.stack);
  ++allocations_taken_;
  // The allocation's entry, made now (one probe for the lookup and the insertion) and filled in below: nothing
  // in between inserts into this map.
  auto [entry, added] = live_map(space).try_emplace(alloc.address, Live{});
  if (!added) {  // its free is missing from the trace
    ++inconsistencies_.reallocated_live;
    remove(*entry);
    if (options_.listener) options_.listener->freed(key, alloc.time_ns);
  }
  if (selecting_) left_out_[static_cast<size_t>(space)].erase(alloc.address);
  recent_frees(space).forget(alloc.address);
  uint64_t size = alloc.size;
  if (segments_ahead_) {
    // A segment: its bytes in heap memory never count here, the heap's blocks do.
    if (std::optional<uint64_t> covered = segments_ahead_->allocated(key, record_, allocations_taken_)) {
      size -= std::min(size, *covered);
      if (size == 0) {
        live_map(space).erase(alloc.address);
        return;
      }
    }
  } else if (space == Space::Pointer && heaps_.has_live_memory()) {
    if (uint64_t covered = heaps_.covered(alloc.address, alloc.size)) segment_marks_.mark(key, record_, covered);
  }
  Live live{size, site_of(stack, alloc.device, kind), kind};
  *entry = live;
  Site& site = sites_[live.site];
  site.allocations += 1;
  site.allocated_bytes += size;
  accounts_[site.account].allocations += 1;
  add(live, alloc.time_ns);
  if (options_.listener)
    options_.listener->allocated(
        {key, alloc.time_ns, alloc.api, kind, alloc.device, alloc.address, size, sites_[live.site].stack, alloc.stream});
  if (phases_.seen()) instances_.on_alloc(alloc.thread, key, live.site, size, alloc.time_ns, device_live_bytes());
}

void Replay::on_free(const trace::Free& free) {
  on_event(free.time_ns);
  Space space = space_of(free.kind());
  uint64_t key = instance_key(space, free.address);
  segment_marks_.freed(key);
  bool segment = segments_ahead_ && segments_ahead_->freed(key, record_);
  Live live;
  if (!live_map(space).erase(free.address, &live)) {
    if (segment) return;  // wholly heap memory: never counted
    if (selecting_ && left_out_[static_cast<size_t>(space)].erase(free.address)) return;
    bool twice = recent_frees(space).contains(free.address);
    ++(twice ? inconsistencies_.double_frees : inconsistencies_.unknown_frees);
    last_bad_free_ = BadFree{free.address, twice};
    return;
  }
  recent_frees(space).remember(free.address, live);
  accounts_[sites_[live.site].account].frees += 1;
  remove(live);
  if (options_.listener) options_.listener->freed(key, free.time_ns);
  if (phases_.seen()) instances_.on_free(key, live.site, live.size);
}

void Replay::on_free_failed(const trace::FreeFailed& failed) {
  std::optional<BadFree> bad_free = last_bad_free_;
  on_event(failed.time_ns);
  Space space = space_of(format::api_info(failed.api).kind);
  if (bad_free && bad_free->address == failed.address) {  // the driver agreed: the address was not live
    --(bad_free->double_free ? inconsistencies_.double_frees : inconsistencies_.unknown_frees);
    ++inconsistencies_.refused_invalid_frees;
  } else if (std::optional<Live> live = recent_frees(space).take(failed.address)) {
    ++inconsistencies_.restored_allocations;
    live_map(space).insert_or_assign(failed.address, *live);
    accounts_[sites_[live->site].account].frees -= 1;
    add(*live, failed.time_ns);
    if (options_.listener) options_.listener->restored(instance_key(space, failed.address), failed.time_ns);
  } else {
    ++inconsistencies_.unmatched_failed_frees;
  }
}

void Replay::on_alloc_failed(const trace::AllocFailed& failed, const trace::Reader& reader) {
  if (selecting_ &&
      !options_.selection.takes_failure(failed.time_ns, format::api_info(failed.api).kind, failed.device))
    return;
  if (!growth_clock_.started()) {
    growth_clock_.start(failed.time_ns);
    timeline_clock_.start(failed.time_ns);
  }
  on_event(failed.time_ns);
  trace::MemoryKind kind = format::api_info(failed.api).kind;
  AccountId account_id = accounts_.for_kind(kind, failed.device);
  Account& account = accounts_[account_id];
  account.failed_allocations += 1;

  Failure failure;
  failure.time_ns = failed.time_ns;
  failure.api = failed.api;
  failure.device = failed.device;
  failure.requested_bytes = failed.size;
  failure.error = failed.error;
  failure.device_free = failed.device_free;
  failure.device_total = failed.device_total;
  failure.stack = stacks_.intern(reader, failed.stack);
  failure.account = account_id;
  failure.live_bytes = account.live_bytes;
  failure.live_count = account.live_count;
  failure.kind_bytes = account.kind_bytes;
  failure.vmm_mapped_bytes = account.vmm_mapped_bytes;
  if (failure.device_total == 0 && account.meminfo_total != 0) {
    failure.device_free = account.meminfo_free;
    failure.device_total = account.meminfo_total;
  }
  nvml_states_go_to_.reset();
  if (failures_.size() >= options_.failures_with_detail) {
    ++failures_without_detail_;
    return;
  }
  failure.has_detail = true;
  failure.heaps = heaps_.at_failure(failed.device);
  for (SiteId id = 0; id < sites_.size(); ++id) {
    const Site& site = sites_[id];
    if (site.account == account_id && site.count > 0) failure.live_set.push_back({id, site.bytes, site.count});
  }
  auto larger = [](const SiteShare& a, const SiteShare& b) { return a.bytes > b.bytes; };
  size_t keep = std::min<size_t>(failure.live_set.size(), options_.live_sites_per_failure);
  std::partial_sort(failure.live_set.begin(), failure.live_set.begin() + static_cast<std::ptrdiff_t>(keep),
                    failure.live_set.end(), larger);
  for (size_t i = keep; i < failure.live_set.size(); ++i) {
    failure.unlisted_bytes += failure.live_set[i].bytes;
    ++failure.unlisted_sites;
  }
  failure.live_set.resize(keep);
  failures_.push_back(std::move(failure));
  pool_reports_go_to_ = failures_.size() - 1;
  if (failures_.back().out_of_memory()) nvml_states_go_to_ = failures_.size() - 1;
}

PoolState& Replay::pool(uint64_t handle) {
  auto [it, added] = pool_index_.try_emplace(handle, pools_.size());
  if (added) pools_.push_back(PoolState{.pool = handle});
  return pools_[it->second];
}

void Replay::on_pool_report(uint64_t handle, int32_t device, uint64_t reserved, uint64_t used, uint64_t time_ns) {
  PoolState& state = pool(handle);
  if (device != trace::kNoDevice) state.device = device;
  state.reserved_bytes = reserved;
  state.used_bytes = used;
  state.time_ns = time_ns;
  state.reported = true;
}

void Replay::on_pool_usage(const trace::PoolUsage& usage) {
  // The tracer writes these right after the failure they explain (a microsecond or so later).
  std::optional<size_t> failure = pool_reports_go_to_;
  on_event(usage.time_ns);
  on_pool_report(usage.pool, usage.device, usage.reserved_bytes, usage.used_bytes, usage.time_ns);
  if (failure) {
    failures_[*failure].pools.push_back(pool(usage.pool));
    pool_reports_go_to_ = failure;
  }
}

void Replay::on_map(const trace::MemMap& map) {
  on_event(map.time_ns);
  VmmMappings::Mapping mapping{map.address, map.size, std::nullopt, map.handle};
  const Live* handle = live_map(Space::VmmHandle).find(map.handle);
  if (handle) {
    mapping.account = sites_[handle->site].account;
    accounts_[*mapping.account].vmm_mapped_bytes += map.size;
  }
  mappings_.map(mapping);
  if (handle && !segments_ahead_ && heaps_.has_live_memory())  // mapped into a heap: heap memory from now on
    if (uint64_t covered = heaps_.covered(map.address, map.size))
      segment_marks_.mark(instance_key(Space::VmmHandle, map.handle), record_, std::min(covered, handle->size));
}

void Replay::on_heap_create(const trace::HeapCreate& create) {
  on_event(create.time_ns);
  trace::HeapCreate r = create;
  trace::MemoryKind kind = trace::MemoryKind::Device;
  if (segments_ahead_) {  // the first reading found where the heap is
    size_t index = heaps_.created();
    const HeapPlaces& places = segments_ahead_->heaps();
    if (r.heap != 0 && index < places.size()) {
      if (r.device == trace::kNoDevice) r.device = places[index].device;
      kind = places[index].kind;
    }
  } else if (std::optional<Live> segment = mark_segments(r.address, r.size)) {
    // A heap of no said device (NVTX's) is on the device of its memory.
    if (r.device == trace::kNoDevice) r.device = sites_[segment->site].device;
    kind = segment->kind;
  }
  heaps_.at_window(timeline_clock_.window());
  heaps_.on(r, kind);
}

std::optional<Replay::Live> Replay::mark_segments(uint64_t address, uint64_t size) {
  std::optional<Live> first;
  auto segment = [&](Space space, uint64_t at, const Live& live, uint64_t covered) {
    segment_marks_.mark(instance_key(space, at), record_, std::min(covered, live.size));
    if (!first) first = live;
  };
  const Live* at_base = live_map(Space::Pointer).find(address);
  if (size == 0) {  // its memory not said: the allocation it starts at
    if (at_base) segment(Space::Pointer, address, *at_base, at_base->size);
    return first;
  }
  if (at_base) segment(Space::Pointer, address, *at_base, size);
  if (!at_base || at_base->size < size) {  // made of more than the allocation at its base
    live_map(Space::Pointer).for_each([&](uint64_t start, const Live& live) {
      uint64_t from = std::max(start, address), to = std::min(start + live.size, address + size);
      if (start != address && from < to) segment(Space::Pointer, start, live, to - from);
    });
  }
  mappings_.overlapping(address, size, [&](const VmmMappings::Mapping& mapping, uint64_t bytes) {
    if (const Live* handle = live_map(Space::VmmHandle).find(mapping.handle))
      segment(Space::VmmHandle, mapping.handle, *handle, bytes);
  });
  return first;
}

void Replay::on_block(const trace::SubAlloc& block, const trace::Reader& reader) {
  if (!growth_clock_.started() && segments_ahead_ && block.heap != 0) {
    growth_clock_.start(block.time_ns);
    timeline_clock_.start(block.time_ns);
  }
  on_event(block.time_ns);
  // Every reading interns the same stacks in the same order, so a stack has the same id in all of them.
  StackId stack = stacks_.intern(reader, block.stack);
  heaps_.at_window(timeline_clock_.window());
  heaps_.on(block, stack);
  if (!segments_ahead_ || block.heap == 0) return;  // a block of no heap holds memory of no known segment
  const Heap* heap = heaps_.heap(block.heap);
  if (!heap || (selecting_ && !options_.selection.takes_allocation(block.time_ns, heap->kind, heap->device, block.size)))
    return;
  free_block(block.address);  // a block at the same address is replaced
  Live live{block.size, site_of(stack, heap->device, heap->kind), heap->kind};
  live_map(Space::Block).insert_or_assign(block.address, live);
  Site& site = sites_[live.site];
  site.allocations += 1;
  site.allocated_bytes += block.size;
  accounts_[site.account].allocations += 1;
  add(live, block.time_ns);
  if (phases_.seen())
    instances_.on_alloc(block.thread, instance_key(Space::Block, block.address), live.site, block.size,
                        block.time_ns, device_live_bytes());
}

void Replay::free_block(uint64_t address) {
  Live live;
  if (!live_map(Space::Block).erase(address, &live)) return;
  accounts_[sites_[live.site].account].frees += 1;
  remove(live);
  if (phases_.seen()) instances_.on_free(instance_key(Space::Block, address), live.site, live.size);
}

void Replay::free_blocks(uint64_t heap_id) {
  const Heap* heap = heap_id == 0 ? nullptr : heaps_.heap(heap_id);
  if (!heap) return;
  for (const auto& [address, block] : heap->blocks) free_block(address);
}

void Replay::on_unmap(const trace::MemUnmap& unmap) {
  on_event(unmap.time_ns);
  size_t removed = mappings_.unmap(unmap.address, unmap.size, [&](const VmmMappings::Mapping& mapping) {
    if (mapping.account) accounts_[*mapping.account].vmm_mapped_bytes -= mapping.size;
  });
  if (removed == 0) ++inconsistencies_.unknown_unmaps;
}

void Replay::finish(const trace::Reader& reader) {
  complete_ = reader.status() == trace::Status::Complete;
  end_time_ns_ = std::max(end_time_ns_, std::min(reader.time_ns(), options_.selection.to_ns));
  instances_.finish(end_time_ns_, device_live_bytes());
  heaps_.finish();
  if (segments_ahead_) segments_ahead_->finish();
}

void Replay::used_view_grew(bool complete) {
  if (!segments_ahead_) return;
  segments_ahead_->view_grew(complete);
  if (complete) options_.used_view_streamed = false;
}

uint64_t Replay::device_live_bytes() const {
  uint64_t bytes = 0;
  for (AccountId id = 0; id < accounts_.size(); ++id)
    if (accounts_[id].category == Category::Device) bytes += accounts_[id].live_bytes;
  return bytes;
}

UsedView Replay::used_view() const {
  UsedView view;
  view.marks = segment_marks_.marks();
  view.heaps = heaps_.places();
  return view;
}

const std::vector<uint64_t>& Replay::mistaken_segments() const {
  static const std::vector<uint64_t> none;
  return segments_ahead_ ? segments_ahead_->mistakes() : none;
}

std::vector<uint64_t> Replay::growth_floors(SiteId site) const {
  if (phase_floors_)
    return phase_floors_->floors(site, sites_[site].bytes, instances_.windows(options_.growth_phase->path));
  return sites_[site].floor.windows(growth_clock_.window());
}

SiteShare Replay::at_peak(SiteId id) const {
  const Site& site = sites_[id];
  if (site.peak_epoch == accounts_[site.account].peak_epoch) return {id, site.peak_bytes, site.peak_count};
  return {id, site.bytes, site.count};
}

std::vector<uint64_t> Replay::timeline(AccountId account) const {
  return accounts_[account].timeline.windows(timeline_clock_.window());
}

std::vector<uint64_t> Replay::timeline(AccountId account, trace::MemoryKind kind) const {
  return accounts_[account].kind_timeline[kind_index(kind)].windows(timeline_clock_.window());
}

}  // namespace gpumemtrace::replay
