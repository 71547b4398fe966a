#include "analyzer/sources/pytorch/snapshot_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>

#include "analyzer/sources/pytorch/range_at.h"
#include "analyzer/sources/pytorch/snapshot_history.h"
#include "trace/writer/trace_buffer.h"

namespace gpumemtrace::pytorch {

namespace {

using schema::Action;

// The trace starts with the state when recording began, one µs before the first entry; entries without a
// time are one µs apart (their order only).
constexpr uint64_t kStepNs = 1000;

// A frame of Python code, by its file: "train.py", or a name of code without a file ("<string>",
// "<frozen runpy>", "<eval_with_key>.3"). The others are C++ frames.
bool is_python_frame(const SnapshotFrame& frame) {
  return frame.filename.ends_with(".py") || frame.filename.starts_with("<");
}

uint32_t line_of(uint64_t line) { return line <= UINT32_MAX ? static_cast<uint32_t>(line) : 0; }

// One trace entry of one device, at its time in the trace.
struct Step {
  uint64_t time_ns = 0;
  int32_t device = 0;
  size_t index = 0;
};

// A block as the trace has it: in which heap, with what the records said.
struct LiveBlock {
  uint64_t heap = 0;
  HistoryBlock block;
  uint32_t stack = 0;
};

struct LiveSegment {
  HistorySegment segment;
  uint64_t heap = 0;
  uint32_t stack = 0;
};

class Converter {
 public:
  Converter(SnapshotReader& reader, const Snapshot& snapshot) : reader_(reader), snapshot_(snapshot) {}

  SnapshotTrace run() {
    SnapshotTrace out;
    SnapshotInfo& info = out.info;
    info.legacy = snapshot_.legacy;
    info.segments = snapshot_.segments.size();
    for (const SnapshotSegment& segment : snapshot_.segments) info.blocks += segment.blocks.size();
    info.unknown_actions = snapshot_.unknown_actions;

    std::set<int32_t> devices;
    for (const SnapshotSegment& segment : snapshot_.segments) devices.insert(segment.device);
    for (size_t device = 0; device < snapshot_.device_traces.size(); ++device)
      if (!snapshot_.device_traces[device].empty()) devices.insert(static_cast<int32_t>(device));

    std::vector<Step> steps = timeline(info);
    buffer_.write(trace::Process{0, 0, info.trace_start_wall_ns, 0, -1, {}, {}, {}});
    // The state when recording began, device by device; then the entries in time order.
    std::map<int32_t, std::vector<uint64_t>> reserved;
    for (int32_t device : devices) {
      DeviceState state = dump_state(snapshot_, device);
      reserved[device] = undo_entries(state, entries(device), info.inconsistencies);
      for (const auto& [address, segment] : state.segments) open_segment(device, address, segment, 0);
      for (const auto& [address, block] : state.blocks) add_block(device, address, block, 0, info.inconsistencies);
    }
    for (const Step& step : steps) forward(step, reserved[step.device][step.index], info.inconsistencies);
    out.bytes = buffer_.take();
    return out;
  }

 private:
  std::span<const SnapshotEntry> entries(int32_t device) const {
    if (device < 0 || static_cast<size_t>(device) >= snapshot_.device_traces.size()) return {};
    return snapshot_.device_traces[static_cast<size_t>(device)];
  }

  // Every memory entry of every device at its time in the trace: one µs after the start plus the time since
  // the first entry's wall-clock time (never earlier than the entry before it on its device), or one µs
  // apart when there are no times.
  std::vector<Step> timeline(SnapshotInfo& info) const {
    std::optional<uint64_t> first_us;
    uint64_t last_us = 0;
    for (const std::vector<SnapshotEntry>& trace : snapshot_.device_traces)
      for (const SnapshotEntry& entry : trace)
        if (entry.time_us) {
          first_us = std::min(first_us.value_or(UINT64_MAX), *entry.time_us);
          last_us = std::max(last_us, *entry.time_us);
        }
    std::vector<Step> steps;
    for (size_t device = 0; device < snapshot_.device_traces.size(); ++device) {
      uint64_t time_ns = 0;
      const std::vector<SnapshotEntry>& trace = snapshot_.device_traces[device];
      for (size_t i = 0; i < trace.size(); ++i) {
        if (trace[i].action == Action::Snapshot) continue;
        ++info.history_entries;
        if (!first_us)
          time_ns = (i + 1) * kStepNs;
        else if (trace[i].time_us)
          time_ns = std::max(time_ns, kStepNs + (*trace[i].time_us - *first_us) * 1000);
        else
          time_ns = std::max(time_ns, kStepNs);
        steps.push_back({time_ns, static_cast<int32_t>(device), i});
      }
    }
    std::stable_sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.time_ns < b.time_ns; });
    if (first_us) {
      info.history_timed = true;
      info.history_start_wall_ns = *first_us * 1000;
      info.history_end_wall_ns = last_us * 1000;
      info.trace_start_wall_ns = info.history_start_wall_ns - kStepNs;
    }
    return steps;
  }

  // The stack of a list of frames: its nodes (and the Python codes and native functions they name) are
  // written when first needed; a list the pickle shares is walked once.
  uint32_t stack(FramesId frames) {
    if (frames == kNoFrames) return 0;
    auto [cached, added] = stacks_.try_emplace(frames, 0);
    if (!added) return cached->second;
    uint32_t node = 0;
    std::vector<SnapshotFrame> list = reader_.frames(frames);
    for (auto it = list.rbegin(); it != list.rend(); ++it) {  // outermost first
      uint64_t ip = is_python_frame(*it) ? format::python_frame(python_code(*it), line_of(it->line))
                                         : format::named_frame(native_function(*it), line_of(it->line));
      auto [child, new_node] = nodes_.try_emplace({node, ip}, static_cast<uint32_t>(nodes_.size() + 1));
      if (new_node) buffer_.write(trace::StackNode{child->second, node, ip});
      node = child->second;
    }
    return cached->second = node;
  }
  uint32_t python_code(const SnapshotFrame& frame) {
    auto [it, added] = python_codes_.try_emplace({std::string(frame.filename), std::string(frame.name)},
                                                 static_cast<uint32_t>(python_codes_.size()));
    if (added) buffer_.write(trace::PythonCode{it->second, frame.filename, frame.name, 0});
    return it->second;
  }
  uint32_t native_function(const SnapshotFrame& frame) {
    std::string_view file = frame.filename == "??" ? std::string_view() : frame.filename;
    auto [it, added] = native_functions_.try_emplace({std::string(frame.name), std::string(file)},
                                                     static_cast<uint32_t>(native_functions_.size()));
    if (added) buffer_.write(trace::NativeFunction{it->second, frame.name, file});
    return it->second;
  }

  void open_segment(int32_t device, uint64_t address, const HistorySegment& segment, uint64_t time_ns) {
    LiveSegment live{segment, next_heap_++, stack(segment.frames)};
    buffer_.write(trace::Alloc{{time_ns, 0}, trace::Api::cudaMalloc, device, address, segment.size, live.stack, 0, 0});
    std::string name = fmt::format("segment {:#x} ({} pool{}{})", address, segment.large_pool ? "large" : "small",
                                   segment.stream ? fmt::format(", stream {:#x}", segment.stream) : "",
                                   segment.expandable ? ", expandable" : "");
    buffer_.write(trace::HeapCreate{{time_ns, 0}, live.heap, device, address, segment.size, name});
    segments_[device].insert_or_assign(address, live);
  }
  // The segment goes, and with it its heap and the blocks in it.
  void close_segment(int32_t device, uint64_t address, uint64_t time_ns) {
    auto it = segments_[device].find(address);
    if (it == segments_[device].end()) return;
    buffer_.write(trace::HeapDestroy{{time_ns, 0}, it->second.heap});
    buffer_.write(trace::Free{{time_ns, 0}, trace::Api::cudaFree, address, 0});
    std::map<uint64_t, LiveBlock>& blocks = blocks_[device];
    blocks.erase(blocks.lower_bound(address), blocks.lower_bound(address + it->second.segment.size));
    segments_[device].erase(it);
  }
  LiveSegment* segment_at(int32_t device, uint64_t address) {
    std::map<uint64_t, LiveSegment>& segments = segments_[device];
    auto it = range_at(segments, address, [](const LiveSegment& live) { return live.segment.size; });
    return it == segments.end() ? nullptr : &it->second;
  }

  // A block into the heap of the segment that holds it, with its stack when not given.
  void add_block(int32_t device, uint64_t address, const HistoryBlock& block, uint64_t time_ns,
                 HistoryInconsistencies& bad, std::optional<uint32_t> known_stack = std::nullopt) {
    LiveSegment* segment = segment_at(device, address);
    if (!segment) {
      ++bad.orphan_blocks;
      return;
    }
    LiveBlock live{segment->heap, block, known_stack ? *known_stack : stack(block.frames)};
    buffer_.write(trace::SubAlloc{{time_ns, 0}, live.heap, address, block.requested, block.size, live.stack});
    if (!block.user_metadata.empty())
      buffer_.write(trace::SubName{{time_ns, 0}, live.heap, address, block.user_metadata});
    if (block.pending) buffer_.write(trace::SubFreeRequested{{time_ns, 0}, live.heap, address});
    blocks_[device].insert_or_assign(address, live);
  }
  void free_block(int32_t device, uint64_t address, uint64_t time_ns) {
    auto it = blocks_[device].find(address);
    if (it == blocks_[device].end()) return;
    buffer_.write(trace::SubFree{{time_ns, 0}, it->second.heap, address});
    blocks_[device].erase(it);
  }

  // An expandable segment's mapping changes: the segments that differ in `state` around [low, high) are
  // made again, their heaps too, with the blocks in them.
  void remap(int32_t device, uint64_t low, uint64_t high, const DeviceState& state, uint64_t time_ns,
             HistoryInconsistencies& bad) {
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
      if (!before.contains({address, size})) open_segment(device, address, state.segments.at(address), time_ns);
    for (const auto& [address, live] : moved) add_block(device, address, live.block, time_ns, bad, live.stack);
  }

  void forward(const Step& step, uint64_t reserved, HistoryInconsistencies& bad) {
    const SnapshotEntry& entry = entries(step.device)[step.index];
    int32_t device = step.device;
    uint64_t t = step.time_ns;
    switch (entry.action) {
      case Action::Alloc:
        free_block(device, entry.address, t);  // its free is missing: the history does not add up
        add_block(device, entry.address, HistoryBlock{reserved, entry.size, entry.frames, entry.user_metadata, false},
                  t, bad);
        break;
      case Action::FreeRequested:
        if (auto it = blocks_[device].find(entry.address); it != blocks_[device].end() && !it->second.block.pending) {
          it->second.block.pending = true;
          buffer_.write(trace::SubFreeRequested{{t, 0}, it->second.heap, entry.address});
        }
        break;
      case Action::FreeCompleted:
      case Action::Free:
        free_block(device, entry.address, t);
        break;
      case Action::SegmentAlloc:
        close_segment(device, entry.address, t);
        open_segment(device, entry.address, HistorySegment::of(entry), t);
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
        remap(device, entry.address, entry.address + entry.size, state, t, bad);
        break;
      }
      case Action::Oom:
        buffer_.write(trace::AllocFailed{{t, 0}, trace::Api::cudaMalloc, device, entry.size, stack(entry.frames),
                                         format::kErrorOutOfMemory, entry.device_free, 0});
        break;
      case Action::Snapshot:
      case Action::Count:
        break;
    }
  }

  SnapshotReader& reader_;
  const Snapshot& snapshot_;
  writer::TraceBuffer buffer_;
  std::unordered_map<FramesId, uint32_t> stacks_;
  std::map<std::pair<uint32_t, uint64_t>, uint32_t> nodes_;  // (parent, ip) -> node id, from 1
  std::map<std::pair<std::string, std::string>, uint32_t> python_codes_;
  std::map<std::pair<std::string, std::string>, uint32_t> native_functions_;
  uint64_t next_heap_ = 1;
  std::map<int32_t, std::map<uint64_t, LiveSegment>> segments_;
  std::map<int32_t, std::map<uint64_t, LiveBlock>> blocks_;
  std::map<int32_t, DeviceState> mapped_;  // scratch for remap
};

}  // namespace

SnapshotTrace snapshot_trace(std::span<const uint8_t> bytes) {
  Pickle pickle(bytes);
  SnapshotReader reader(pickle);
  Snapshot snapshot = reader.read();
  return Converter(reader, snapshot).run();
}

}  // namespace gpumemtrace::pytorch
