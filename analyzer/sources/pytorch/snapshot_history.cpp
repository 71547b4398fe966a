#include "analyzer/sources/pytorch/snapshot_history.h"

#include "analyzer/pytorch/range_at.h"

namespace gpumemtrace::pytorch {

namespace {

using schema::Action;
using schema::BlockState;

constexpr uint64_t kSmallSegment = uint64_t{2} << 20;  // PyTorch's small pool takes 2 MiB segments

}  // namespace

HistorySegment HistorySegment::of(const SnapshotEntry& entry) {
  bool mapped = entry.action == Action::SegmentMap || entry.action == Action::SegmentUnmap;
  return {entry.size, entry.stream, mapped || entry.size > kSmallSegment, mapped, entry.frames};
}

std::map<uint64_t, HistorySegment>::iterator DeviceState::segment_at(uint64_t address) {
  return range_at(segments, address, [](const HistorySegment& segment) { return segment.size; });
}

void DeviceState::map(uint64_t address, HistorySegment range) {
  auto it = segments.insert_or_assign(address, range).first;
  if (auto next = std::next(it); next != segments.end() && next->first == address + it->second.size &&
                                   next->second.stream == it->second.stream) {
    it->second.size += next->second.size;
    segments.erase(next);
  }
  if (it != segments.begin()) {
    auto previous = std::prev(it);
    if (previous->first + previous->second.size == address && previous->second.stream == it->second.stream) {
      previous->second.size += it->second.size;
      segments.erase(it);
    }
  }
}

bool DeviceState::unmap(uint64_t address, uint64_t size) {
  auto it = segment_at(address);
  if (it == segments.end() || address + size > it->first + it->second.size) return false;
  HistorySegment segment = it->second;
  uint64_t start = it->first;
  uint64_t end = start + segment.size;
  segments.erase(it);
  if (address > start) {
    HistorySegment before = segment;
    before.size = address - start;
    segments.emplace(start, before);
  }
  if (address + size < end) {
    HistorySegment after = segment;
    after.size = end - (address + size);
    segments.emplace(address + size, after);
  }
  return true;
}

DeviceState dump_state(const Snapshot& snapshot, int32_t device) {
  DeviceState state;
  for (const SnapshotSegment& segment : snapshot.segments) {
    if (segment.device != device) continue;
    FramesId frames = segment.frames;
    if (frames == kNoFrames && !segment.blocks.empty()) frames = segment.blocks.front().frames;
    state.segments.insert_or_assign(
        segment.address, HistorySegment{segment.total_size, segment.stream, segment.large_pool, segment.expandable, frames});
    for (const SnapshotBlock& block : segment.blocks) {
      if (block.state == BlockState::Inactive) continue;
      state.blocks.insert_or_assign(block.address, HistoryBlock{block.size, block.requested, block.frames,
                                                                block.user_metadata,
                                                                block.state == BlockState::ActivePendingFree});
    }
  }
  return state;
}

std::vector<uint64_t> undo_entries(DeviceState& state, std::span<const SnapshotEntry> entries,
                                   HistoryInconsistencies& bad) {
  std::vector<uint64_t> reserved(entries.size(), 0);
  for (size_t i = entries.size(); i-- > 0;) {
    const SnapshotEntry& entry = entries[i];
    switch (entry.action) {
      case Action::Alloc: {
        auto it = state.blocks.find(entry.address);
        if (it == state.blocks.end()) {
          ++bad.missing_blocks;
          break;
        }
        reserved[i] = it->second.size;
        state.blocks.erase(it);
        break;
      }
      case Action::FreeRequested: {
        auto it = state.blocks.find(entry.address);
        if (it == state.blocks.end())
          ++bad.missing_blocks;
        else
          it->second.pending = false;
        break;
      }
      case Action::FreeCompleted:
      case Action::Free: {
        HistoryBlock block{0, entry.size, entry.frames, entry.user_metadata, entry.action == Action::FreeCompleted};
        if (!state.blocks.insert_or_assign(entry.address, block).second) ++bad.duplicate_blocks;
        break;
      }
      case Action::SegmentAlloc:
        if (state.segments.erase(entry.address) == 0) ++bad.missing_segments;
        break;
      case Action::SegmentFree:
        state.segments.insert_or_assign(entry.address, HistorySegment::of(entry));
        break;
      case Action::SegmentMap:
        if (!state.unmap(entry.address, entry.size)) ++bad.missing_segments;
        break;
      case Action::SegmentUnmap:
        state.map(entry.address, HistorySegment::of(entry));
        break;
      case Action::Snapshot:
      case Action::Oom:
      case Action::Count:
        break;
    }
  }
  return reserved;
}

}  // namespace gpumemtrace::pytorch
