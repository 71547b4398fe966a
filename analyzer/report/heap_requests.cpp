#include "analyzer/report/heap_requests.h"

#include <algorithm>

#include <fmt/format.h>

namespace gpumemtrace::report {

using Action = pytorch::schema::Action;

std::string HeapRequests::describe() const {
  std::string names;
  for (const std::string& name : heap_names) names += fmt::format("{}'{}'", names.empty() ? "" : ", ", name);
  std::string heaps_text = heaps == 1 ? fmt::format("heap {}", names)
                           : heap_names.size() == 1 ? fmt::format("{} heaps named {}", heaps, names)
                                                    : fmt::format("{} heaps ({})", heaps, names);
  return fmt::format("the blocks handed out by {} ({})", heaps_text,
                     device_said ? "annotate.h" : "annotate.h or the NVTX memory extension");
}

void HeapRequestsReader::on(const trace::HeapCreate& create) {
  Heap& heap = heaps_[create.heap];
  heap = Heap{create.device, std::string(create.name), create.size, false, {}};
  Device& device = device_of(heap);
  if (create.size == 0) device.memory_known = false;
  device.memory += create.size;
  device.peak = std::max(device.peak, device.memory);
}

void HeapRequestsReader::on(const trace::HeapDestroy& destroy) {
  auto it = heaps_.find(destroy.heap);
  if (it == heaps_.end()) return;
  free_all(it->second, destroy.time_ns);
  Device& device = device_of(it->second);
  device.memory -= std::min(device.memory, it->second.size);
  heaps_.erase(it);
}

void HeapRequestsReader::on(const trace::HeapReset& reset) {
  if (auto it = heaps_.find(reset.heap); it != heaps_.end()) free_all(it->second, reset.time_ns);
}

void HeapRequestsReader::on(const trace::SubAlloc& alloc, replay::StackId stack) {
  auto it = heaps_.find(alloc.heap);
  if (it == heaps_.end()) return;
  Heap& heap = it->second;
  if (!heap.used) {
    heap.used = true;
    HeapRequests& requests = device_of(heap).requests;
    ++requests.heaps;
    if (heap.device == trace::kNoDevice) requests.device_said = false;
    if (std::find(requests.heap_names.begin(), requests.heap_names.end(), heap.name) == requests.heap_names.end())
      requests.heap_names.push_back(heap.name);
  }
  if (heap.live.contains(alloc.address)) return;  // a block already live there: its free was not recorded
  heap.live.emplace(alloc.address, false);
  add(heap, Action::Alloc, alloc.address, alloc.size, alloc.time_ns, stack);
}

void HeapRequestsReader::on(const trace::SubFree& free) {
  auto it = heaps_.find(free.heap);
  if (it == heaps_.end()) return;
  auto block = it->second.live.find(free.address);
  if (block == it->second.live.end()) return;
  add(it->second, block->second ? Action::FreeCompleted : Action::Free, free.address, 0, free.time_ns);
  it->second.live.erase(block);
}

void HeapRequestsReader::on(const trace::SubFreeRequested& free) {
  auto it = heaps_.find(free.heap);
  if (it == heaps_.end()) return;
  auto block = it->second.live.find(free.address);
  if (block == it->second.live.end() || block->second) return;
  block->second = true;
  add(it->second, Action::FreeRequested, free.address, 0, free.time_ns);
}

void HeapRequestsReader::add(Heap& heap, Action action, uint64_t address, uint64_t size, uint64_t time_ns,
                             replay::StackId stack) {
  HeapRequests& requests = device_of(heap).requests;
  pytorch::SnapshotEntry entry;
  entry.action = action;
  entry.address = address;
  entry.size = size;
  requests.entries.push_back(entry);
  requests.times_ns.push_back(time_ns);
  requests.stacks.push_back(stack);
}

void HeapRequestsReader::free_all(Heap& heap, uint64_t time_ns) {
  for (const auto& [address, requested] : heap.live)
    add(heap, requested ? Action::FreeCompleted : Action::Free, address, 0, time_ns);
  heap.live.clear();
}

std::vector<HeapRequests> HeapRequestsReader::take() {
  std::vector<HeapRequests> out;
  for (auto& [id, device] : devices_) {
    if (device.requests.entries.empty()) continue;
    device.requests.device = id;
    device.requests.peak_heap_memory =
        device.memory_known ? std::optional<uint64_t>(device.peak) : std::nullopt;
    out.push_back(std::move(device.requests));
  }
  devices_.clear();
  return out;
}

}  // namespace gpumemtrace::report
