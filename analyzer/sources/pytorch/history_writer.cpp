#include "analyzer/sources/pytorch/history_writer.h"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <iterator>
#include <set>
#include <tuple>

#include "analyzer/pytorch/range_at.h"

namespace gpumemtrace::pytorch {

namespace {

using schema::Action;

uint32_t line_of(uint64_t line) { return line <= UINT32_MAX ? static_cast<uint32_t>(line) : 0; }

}  // namespace

HistoryWriter::HistoryWriter(Options options, SegmentFilter keep, SegmentClosed closed)
    : options_(options), keep_(std::move(keep)), closed_(std::move(closed)), next_heap_(options.first_heap) {}

// The stack of a list of frames: its nodes (and the Python codes and native functions they name) are written
// when first needed; a list the pickle shares is walked once.
uint32_t HistoryWriter::stack(SnapshotReader& frames, FramesId id) {
  if (id == kNoFrames) return 0;
  auto [cached, added] = stacks_.try_emplace({&frames, id}, 0);
  if (!added) return cached->second;
  uint32_t node = 0;
  std::vector<SnapshotFrame> list = frames.frames(id);
  for (auto it = list.rbegin(); it != list.rend(); ++it) {  // outermost first
    uint64_t ip = it->is_python() ? format::python_frame(python_code(*it), line_of(it->line))
                                       : format::named_frame(native_function(*it), line_of(it->line));
    auto [child, new_node] = nodes_.try_emplace({node, ip}, static_cast<uint32_t>(nodes_.size() + 1));
    if (new_node) buffer_.write(trace::StackNode{child->second, node, ip});
    node = child->second;
  }
  return cached->second = node;
}

uint32_t HistoryWriter::python_code(const SnapshotFrame& frame) {
  auto [it, added] = python_codes_.try_emplace({std::string(frame.filename), std::string(frame.name)},
                                               static_cast<uint32_t>(python_codes_.size()));
  if (added) buffer_.write(trace::PythonCode{it->second, frame.filename, frame.name, 0});
  return it->second;
}

uint32_t HistoryWriter::native_function(const SnapshotFrame& frame) {
  std::string_view file = frame.filename == "??" ? std::string_view() : frame.filename;
  auto [it, added] = native_functions_.try_emplace({std::string(frame.name), std::string(file)},
                                                   static_cast<uint32_t>(native_functions_.size()));
  if (added) buffer_.write(trace::NativeFunction{it->second, frame.name, file});
  return it->second;
}

void HistoryWriter::open_segment(int32_t device, uint64_t address, const HistorySegment& segment,
                                 SnapshotReader& frames, uint64_t time_ns) {
  LiveSegment live{segment, next_ordinal_++, 0, 0};
  if (!keep_ || keep_({live.ordinal, device, address, segment.size, segment.expandable, time_ns})) {
    live.heap = next_heap_++;
    if (options_.driver_records) {
      live.stack = stack(frames, segment.frames);
      buffer_.write(
          trace::Alloc{{time_ns, 0}, trace::Api::cudaMalloc, device, address, segment.size, live.stack, 0, 0});
    }
    // A history has a segment per few entries: the name's format is compiled, into a string kept for the next.
    segment_name_.clear();
    auto out = std::back_inserter(segment_name_);
    fmt::format_to(out, FMT_COMPILE("segment {:#x} ({} pool"), address, segment.large_pool ? "large" : "small");
    if (segment.stream) fmt::format_to(out, FMT_COMPILE(", stream {:#x}"), segment.stream);
    segment_name_ += segment.expandable ? ", expandable)" : ")";
    buffer_.write(trace::HeapCreate{{time_ns, 0}, live.heap, device, address, segment.size, segment_name_});
  }
  segments_[device].insert_or_assign(address, live);
}

// The segment goes, and with it its heap and the blocks in it.
void HistoryWriter::close_segment(int32_t device, uint64_t address, uint64_t time_ns) {
  std::map<uint64_t, LiveSegment>& segments = segments_[device];
  auto it = segments.find(address);
  if (it == segments.end()) return;
  if (it->second.heap) {
    buffer_.write(trace::HeapDestroy{{time_ns, 0}, it->second.heap});
    if (options_.driver_records) buffer_.write(trace::Free{{time_ns, 0}, trace::Api::cudaFree, address, 0});
  }
  if (closed_) closed_(it->second.ordinal, time_ns);
  std::map<uint64_t, LiveBlock>& blocks = blocks_[device];
  // PyTorch frees a segment once its blocks are gone: one search finds that there are none.
  uint64_t end = address + it->second.segment.size;
  if (auto first = blocks.lower_bound(address); first != blocks.end() && first->first < end)
    blocks.erase(first, blocks.lower_bound(end));
  segments.erase(it);
}

HistoryWriter::LiveSegment* HistoryWriter::segment_at(int32_t device, uint64_t address) {
  std::map<uint64_t, LiveSegment>& segments = segments_[device];
  auto it = range_at(segments, address, [](const LiveSegment& live) { return live.segment.size; });
  return it == segments.end() ? nullptr : &it->second;
}

// A block into the heap of the segment that holds it, with its stack when not given.
void HistoryWriter::add_block(int32_t device, uint64_t address, const HistoryBlock& block, SnapshotReader& frames,
                              uint64_t time_ns, HistoryInconsistencies& bad, std::optional<uint32_t> known_stack) {
  LiveSegment* segment = segment_at(device, address);
  if (!segment) {
    ++bad.orphan_blocks;
    return;
  }
  LiveBlock live{segment->heap, block, 0};
  if (!live.heap) {
    ++left_out_blocks_;
  } else {
    live.stack = known_stack ? *known_stack : stack(frames, block.frames);
    buffer_.write(trace::SubAlloc{{time_ns, 0}, live.heap, address, block.requested, block.size, live.stack});
    if (!block.user_metadata.empty())
      buffer_.write(trace::SubName{{time_ns, 0}, live.heap, address, block.user_metadata});
    if (block.pending) buffer_.write(trace::SubFreeRequested{{time_ns, 0}, live.heap, address});
  }
  blocks_[device].insert_or_assign(address, live);
}

void HistoryWriter::free_block(int32_t device, uint64_t address, uint64_t time_ns) {
  std::map<uint64_t, LiveBlock>& blocks = blocks_[device];
  auto it = blocks.find(address);
  if (it == blocks.end()) return;
  if (it->second.heap) buffer_.write(trace::SubFree{{time_ns, 0}, it->second.heap, address});
  blocks.erase(it);
}

void HistoryWriter::request_free(LiveBlock& live, uint64_t address, uint64_t time_ns) {
  live.block.pending = true;
  if (live.heap) buffer_.write(trace::SubFreeRequested{{time_ns, 0}, live.heap, address});
}

uint64_t HistoryWriter::set_state(int32_t device, const DeviceState& state, SnapshotReader& frames, uint64_t time_ns,
                                  HistoryInconsistencies& bad) {
  uint64_t changes = 0;
  std::map<uint64_t, LiveSegment>& segments = segments_[device];
  std::map<uint64_t, LiveBlock>& blocks = blocks_[device];
  for (auto it = segments.begin(); it != segments.end();) {
    auto wanted = state.segments.find(it->first);
    uint64_t address = (it++)->first;
    if (wanted == state.segments.end() || wanted->second.size != segments.at(address).segment.size) {
      close_segment(device, address, time_ns);
      ++changes;
    }
  }
  for (auto it = blocks.begin(); it != blocks.end();) {
    auto wanted = state.blocks.find(it->first);
    const HistoryBlock& live = it->second.block;
    uint64_t address = (it++)->first;
    if (wanted == state.blocks.end() || wanted->second.requested != live.requested ||
        (live.pending && !wanted->second.pending)) {
      free_block(device, address, time_ns);
      ++changes;
    }
  }
  for (const auto& [address, segment] : state.segments) {
    if (segments.contains(address)) continue;
    open_segment(device, address, segment, frames, time_ns);
    ++changes;
  }
  for (const auto& [address, block] : state.blocks) {
    auto live = blocks.find(address);
    if (live == blocks.end()) {
      add_block(device, address, block, frames, time_ns, bad);
      ++changes;
    } else if (block.pending && !live->second.block.pending) {
      request_free(live->second, address, time_ns);
      ++changes;
    }
  }
  return changes;
}

// An expandable segment's mapping changes: the segments that differ in `state` around [low, high) are made
// again, their heaps too, with the blocks in them.
void HistoryWriter::remap(int32_t device, uint64_t low, uint64_t high, const DeviceState& state, SnapshotReader& frames,
                          uint64_t time_ns, HistoryInconsistencies& bad) {
  auto around = [&](const auto& segments, auto size_of) {
    std::set<std::tuple<uint64_t, uint64_t>> out;
    for (const auto& [address, segment] : segments)
      if (address <= high && address + size_of(segment) >= low) out.emplace(address, size_of(segment));
    return out;
  };
  auto before = around(segments_[device], [](const LiveSegment& s) { return s.segment.size; });
  auto after = around(state.segments, [](const HistorySegment& s) { return s.size; });
  std::vector<std::pair<uint64_t, LiveBlock>> moved;
  for (const auto& [address, size] : before) {
    if (after.contains({address, size})) continue;
    std::map<uint64_t, LiveBlock>& blocks = blocks_[device];
    moved.insert(moved.end(), blocks.lower_bound(address), blocks.lower_bound(address + size));
    close_segment(device, address, time_ns);
  }
  for (const auto& [address, size] : after)
    if (!before.contains({address, size})) open_segment(device, address, state.segments.at(address), frames, time_ns);
  // Their stacks are known (0 for a block left out until now: its frames may be in another snapshot).
  for (const auto& [address, live] : moved) add_block(device, address, live.block, frames, time_ns, bad, live.stack);
}

void HistoryWriter::forward(int32_t device, const SnapshotEntry& entry, uint64_t reserved, SnapshotReader& frames,
                            uint64_t t, HistoryInconsistencies& bad) {
  switch (entry.action) {
    case Action::Alloc:
      free_block(device, entry.address, t);  // its free is missing: the history does not add up
      add_block(device, entry.address, HistoryBlock{reserved, entry.size, entry.frames, entry.user_metadata, false},
                frames, t, bad);
      break;
    case Action::FreeRequested: {
      std::map<uint64_t, LiveBlock>& blocks = blocks_[device];
      if (auto it = blocks.find(entry.address); it != blocks.end() && !it->second.block.pending)
        request_free(it->second, entry.address, t);
      break;
    }
    case Action::FreeCompleted:
    case Action::Free:
      free_block(device, entry.address, t);
      break;
    case Action::SegmentAlloc:
      close_segment(device, entry.address, t);
      open_segment(device, entry.address, HistorySegment::of(entry), frames, t);
      break;
    case Action::SegmentFree:
      close_segment(device, entry.address, t);
      break;
    case Action::SegmentMap:
    case Action::SegmentUnmap: {
      DeviceState& state = mapped_[device];
      state.segments.clear();
      for (const auto& [address, live] : segments_[device]) state.segments.emplace(address, live.segment);
      if (entry.action == Action::SegmentMap)
        state.map(entry.address, HistorySegment::of(entry));
      else if (!state.unmap(entry.address, entry.size))
        break;
      remap(device, entry.address, entry.address + entry.size, state, frames, t, bad);
      break;
    }
    case Action::Oom:
      if (options_.driver_records)
        buffer_.write(trace::AllocFailed{{t, 0}, trace::Api::cudaMalloc, device, entry.size, stack(frames, entry.frames),
                                         format::kErrorOutOfMemory, entry.device_free, 0});
      break;
    case Action::Snapshot:
    case Action::Count:
      break;
  }
}

}  // namespace gpumemtrace::pytorch
