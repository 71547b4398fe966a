// The trace as a PyTorch memory snapshot (docs/exports.md, "memory-viz"): a pickle that pytorch.org/memory_viz
// and the other tools that read torch.cuda.memory._dump_snapshot() files open.
//   segments       the device memory of the trace: each cudaMalloc/cuMemAlloc and async-pool allocation, and
//                  each VMM mapping of physical memory (cuMemMap, "is_expandable"), with its stack as frames;
//   blocks         where a heap covers a segment (a caching allocator that reports its blocks: annotate.h,
//                  the NVTX memory extension, a PyTorch snapshot read as a trace), its blocks, and the gaps
//                  between them as inactive blocks; else one active block over the whole segment;
//   device_traces  per device, every change in time order: segment_alloc/segment_free, alloc/free_requested/
//                  free_completed, and the out-of-memory failures ("oom", with the free bytes CUDA reported).
// The history is the whole trace (PyTorch's is a ring buffer of the last events), so undoing it from the
// segments at the end, as MemoryViz.js does, goes back to an empty device. With a history window (--from, --to,
// --max-entries: PyTorch's viewer hides events past about 600 k and fails on pickles over about 1 GB) it is
// what a ring buffer would have kept: the entries from --from to --to, at most the last N of each device, and
// the segments as they were at --to, so that undoing the history stops at the state of its first entry. The
// trace is read a second time, with the same selection (--device, --min-size) as the first.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>

#include "analyzer/export/exports.h"
#include "analyzer/report/stack_text.h"
#include "analyzer/pytorch/pickle_writer.h"
#include "analyzer/pytorch/range_at.h"
#include "analyzer/pytorch/snapshot_schema.h"

namespace gpumemtrace::render {

namespace {

namespace schema = pytorch::schema;
using schema::Action;
using schema::BlockState;

struct VizEvent {
  Action action{};
  uint64_t address = 0;
  uint64_t size = 0;
  uint64_t time_ns = 0;
  replay::StackId stack = 0;
  uint64_t device_free = 0;  // oom
  bool dropped = false;      // the block over a whole segment that a heap turned out to cover
  uint64_t stream = 0;
};

struct VizSegment {
  int32_t device = 0;
  uint64_t size = 0;
  replay::StackId stack = 0;
  bool expandable = false;  // a VMM mapping
  bool whole = true;        // no heap covers it: one block over all of it
  size_t whole_alloc = 0;   // the event that allocated that block
  uint64_t stream = 0;      // a stream-ordered allocation's; its blocks are on it too
};

struct VizBlock {
  int32_t device = 0;
  uint64_t heap = 0;
  uint64_t size = 0;      // requested
  uint64_t reserved = 0;  // 0: not said
  replay::StackId stack = 0;
  bool pending = false;
  uint64_t stream = 0;
  uint64_t footprint() const { return std::max(size, reserved); }
};

// Follows the trace and keeps the segments and blocks live, and every change to them per device.
class SnapshotBuilder : public replay::AllocationListener {
 public:
  // The selected allocations: device memory makes segments, VMM physical memory makes the segments it is
  // mapped as.
  void allocated(const replay::AllocationEvent& a) override {
    if (a.device == trace::kNoDevice) return;
    if (a.kind == trace::MemoryKind::VmmPhysical) {
      handles_.insert_or_assign(a.address, VizSegment{a.device, 0, a.stack, true, true, 0, a.stream});
    } else if (a.kind == trace::MemoryKind::Device || a.kind == trace::MemoryKind::AsyncPool) {
      keys_.insert_or_assign(a.key, a.address);
      open_segment(a.address, VizSegment{a.device, a.size, a.stack, false, true, 0, a.stream}, a.time_ns);
    }
  }
  void freed(uint64_t key, uint64_t time_ns) override {
    auto it = keys_.find(key);
    if (it == keys_.end()) return;
    close_segment(it->second, time_ns);
    keys_.erase(it);
  }
  void restored(uint64_t, uint64_t) override {}  // a refused free: rare, and the segment's free is not undone

  void on(const trace::Record& record, const replay::Replay& replay) {
    std::visit(
        trace::Exhaustive{
            [&](const trace::Process& r) { start_wall_ns_ = r.start_wall_ns; },
            [&](const trace::MemMap& r) {
              auto handle = handles_.find(r.handle);
              if (handle == handles_.end()) return;
              VizSegment segment = handle->second;
              segment.size = r.size;
              open_segment(r.address, segment, r.time_ns);
            },
            [&](const trace::MemUnmap& r) { unmap(r.address, r.size, r.time_ns); },
            [&](const trace::Free& r) {
              if (format::api_info(r.api).kind == trace::MemoryKind::VmmPhysical) handles_.erase(r.address);
            },
            [&](const trace::HeapCreate& r) {
              for (auto& [address, segment] : segments_)
                if (address < r.address + r.size && r.address < address + segment.size) cover(address);
            },
            [&](const trace::SubAlloc& r) {
              uint64_t segment = segment_at(r.address);
              if (segment == kNone) return;
              cover(segment);
              free_block(r.address, r.time_ns);
              const replay::HeapBlock* block = replay.heaps().block(r.heap, r.address);
              const VizSegment& over = segments_[segment];
              VizBlock live{over.device, r.heap, r.size, r.reserved, block ? block->stack : 0, false, over.stream};
              blocks_.insert_or_assign(r.address, live);
              event(live.device, live.stream, {Action::Alloc, r.address, r.size, r.time_ns, live.stack, 0});
            },
            [&](const trace::SubFreeRequested& r) {
              auto it = blocks_.find(r.address);
              if (it == blocks_.end() || it->second.heap != r.heap || it->second.pending) return;
              it->second.pending = true;
              event(it->second.device, it->second.stream,
                    {Action::FreeRequested, r.address, it->second.size, r.time_ns, it->second.stack, 0});
            },
            [&](const trace::SubFree& r) {
              auto it = blocks_.find(r.address);
              if (it != blocks_.end() && it->second.heap == r.heap) free_block(r.address, r.time_ns);
            },
            trace::handle<trace::HeapReset, trace::HeapDestroy>([&](const auto& r) {
              std::vector<uint64_t> gone;
              for (const auto& [address, block] : blocks_)
                if (block.heap == r.heap) gone.push_back(address);
              for (uint64_t address : gone) free_block(address, r.time_ns);
            }),
            [&](const trace::AllocFailed& r) {
              if (replay.failures().size() == failures_seen_) return;
              failures_seen_ = replay.failures().size();
              const replay::Failure& failure = replay.failures().back();
              if (failure.out_of_memory() && failure.device != trace::kNoDevice)
                event(failure.device, 0, {Action::Oom, 0, r.size, r.time_ns, failure.stack, failure.device_free});
            },
            trace::handle<trace::ModulesBegin, trace::Module, trace::StacksReset, trace::StackNode,
                          trace::PythonCode, trace::NativeFunction, trace::ThreadNew, trace::ThreadSwitch,
                          trace::Fork, trace::Alloc, trace::FreeFailed, trace::AddressReserve, trace::AddressFree,
                          trace::PoolCreate, trace::PoolDestroy, trace::PoolTrim, trace::PoolUsage, trace::MemInfo,
                          trace::End, trace::PhaseDomain, trace::PhaseName, trace::PhasePush, trace::PhasePop,
                          trace::RangeStart, trace::RangeEnd, trace::SubName, trace::PoolThreshold,
                          trace::Source, trace::TorchHook, trace::TorchSnapshot, trace::DeviceState,
                          trace::DeviceProcess, trace::Context, trace::Placement, trace::Param>([](const auto&) {}),
        },
        record);
  }

  // The segments and blocks from now on are those of this moment (--to): later events are only counted.
  void freeze() {
    if (frozen_) return;
    frozen_ = State{segments_, blocks_, {}};
    for (const std::vector<VizEvent>& device : events_) frozen_->events.push_back(device.size());
  }
  // The events of a device up to the freeze (the rest are after it).
  size_t events_before_freeze(size_t device) const {
    if (device >= events_.size()) return 0;
    if (!frozen_) return events_[device].size();
    return device < frozen_->events.size() ? frozen_->events[device] : 0;
  }

  uint64_t start_wall_ns() const { return start_wall_ns_; }
  const std::map<uint64_t, VizSegment>& segments() const { return frozen_ ? frozen_->segments : segments_; }
  const std::map<uint64_t, VizBlock>& blocks() const { return frozen_ ? frozen_->blocks : blocks_; }
  const std::vector<std::vector<VizEvent>>& events() const { return events_; }

 private:
  static constexpr uint64_t kNone = UINT64_MAX;

  // Devices are at most trace::kMaxDevice (the reader's bound), so a list by device stays small.
  void event(int32_t device, uint64_t stream, VizEvent e) {
    e.stream = stream;
    if (events_.size() <= static_cast<size_t>(device)) events_.resize(static_cast<size_t>(device) + 1);
    events_[static_cast<size_t>(device)].push_back(e);
  }
  uint64_t segment_at(uint64_t address) const {
    auto it = pytorch::range_at(segments_, address, [](const VizSegment& segment) { return segment.size; });
    return it == segments_.end() ? kNone : it->first;
  }
  void open_segment(uint64_t address, VizSegment segment, uint64_t time_ns) {
    close_segment(address, time_ns);  // its free is missing
    event(segment.device, segment.stream, {Action::SegmentAlloc, address, segment.size, time_ns, segment.stack, 0});
    event(segment.device, segment.stream, {Action::Alloc, address, segment.size, time_ns, segment.stack, 0});
    segment.whole_alloc = events_[static_cast<size_t>(segment.device)].size() - 1;
    segments_.insert_or_assign(address, segment);
  }
  void close_segment(uint64_t address, uint64_t time_ns) {
    auto it = segments_.find(address);
    if (it == segments_.end()) return;
    const VizSegment& segment = it->second;
    if (segment.whole) {
      free_events(segment.device, segment.stream, address, segment.size, segment.stack, false, time_ns);
    } else {
      auto first = blocks_.lower_bound(address);
      auto last = blocks_.lower_bound(address + segment.size);
      std::vector<uint64_t> inside;
      for (auto block = first; block != last; ++block) inside.push_back(block->first);
      for (uint64_t block : inside) free_block(block, time_ns);
    }
    event(segment.device, segment.stream, {Action::SegmentFree, address, segment.size, time_ns, segment.stack, 0});
    segments_.erase(it);
  }
  // A heap covers the segment: the heap's blocks are its blocks, from its start (the one block over all of
  // it was only a stand-in for blocks not known).
  void cover(uint64_t address) {
    VizSegment& segment = segments_[address];
    if (!segment.whole) return;
    segment.whole = false;
    // A frozen segment stays one block over all of it, with the event that allocated it.
    if (!frozen_ || segment.whole_alloc >= events_before_freeze(static_cast<size_t>(segment.device)))
      events_[static_cast<size_t>(segment.device)][segment.whole_alloc].dropped = true;
  }
  void unmap(uint64_t address, uint64_t size, uint64_t time_ns) {
    std::vector<std::pair<uint64_t, VizSegment>> cut;
    for (const auto& [start, segment] : segments_)
      if (segment.expandable && start < address + size && address < start + segment.size) cut.emplace_back(start, segment);
    for (const auto& piece : cut) {
      // Not a structured binding: clang 14 (the fuzz preset's) cannot capture one in a lambda.
      uint64_t start = piece.first;
      const VizSegment& segment = piece.second;
      close_segment(start, time_ns);
      auto rest = [&](uint64_t bytes) {
        VizSegment part = segment;
        part.size = bytes;
        part.whole = true;
        return part;
      };
      if (start < address) open_segment(start, rest(address - start), time_ns);
      uint64_t end = start + segment.size;
      if (address + size < end) open_segment(address + size, rest(end - address - size), time_ns);
    }
  }
  void free_block(uint64_t address, uint64_t time_ns) {
    auto it = blocks_.find(address);
    if (it == blocks_.end()) return;
    const VizBlock& block = it->second;
    free_events(block.device, block.stream, address, block.size, block.stack, block.pending, time_ns);
    blocks_.erase(it);
  }
  void free_events(int32_t device, uint64_t stream, uint64_t address, uint64_t size, replay::StackId stack, bool requested,
                   uint64_t time_ns) {
    if (!requested) event(device, stream, {Action::FreeRequested, address, size, time_ns, stack, 0});
    event(device, stream, {Action::FreeCompleted, address, size, time_ns, stack, 0});
  }

  struct State {
    std::map<uint64_t, VizSegment> segments;
    std::map<uint64_t, VizBlock> blocks;
    std::vector<size_t> events;  // by device: how many there were
  };

  uint64_t start_wall_ns_ = 0;
  std::optional<State> frozen_;                    // the state at --to, once the trace went past it
  std::unordered_map<uint64_t, uint64_t> keys_;    // a device allocation's key -> its address
  std::unordered_map<uint64_t, VizSegment> handles_;  // live VMM physical memory, by handle
  std::map<uint64_t, VizSegment> segments_;       // by address
  std::map<uint64_t, VizBlock> blocks_;           // by address
  std::vector<std::vector<VizEvent>> events_;     // by device
  size_t failures_seen_ = 0;
};

class MemoryVizExport : public Exporter {
 public:
  MemoryVizExport(const ExportOptions& options, ExportSink& sink) : options_(options), sink_(sink), pickle_(out_) {}

  void finish(const analysis::Analysis& analysis, report::SymbolizeStack symbolize) override {
    symbolize_ = std::move(symbolize);
    SnapshotBuilder builder;
    replay::ReplayOptions options = analysis.options;
    options.listener = &builder;
    replay::Replay replay(options);
    analysis::read_again(analysis, analysis::Pass::Export, replay, {},
                         [&](const trace::Record& record, const trace::Reader& reader, replay::Replay& replay) {
                           if (reader.time_ns() > options_.history.to_ns) builder.freeze();
                           replay.on_record(record, reader);
                           builder.on(record, replay);
                         });
    pickle_.begin_dict();
    pickle_.str(schema::kSegments);
    pickle_.begin_list();
    for (const auto& [address, segment] : builder.segments()) write_segment(builder, address, segment);
    pickle_.end_list();
    pickle_.str(schema::kDeviceTraces);
    pickle_.begin_list();
    for (size_t device = 0; device < builder.events().size(); ++device) {
      pickle_.begin_list();
      const std::vector<VizEvent>& events = builder.events()[device];
      Kept kept = keep(events, builder.events_before_freeze(device));
      for (size_t i = kept.first; i < kept.end; ++i)
        if (!events[i].dropped) write_event(events[i], builder.start_wall_ns());
      pickle_.end_list();
    }
    pickle_.end_list();
    pickle_.end_dict();
    pickle_.finish();
    sink_.write(out_);
    sink_.close();
  }

  std::string left_out() const override {
    const HistoryWindow& window = options_.history;
    if (window.whole()) return {};
    std::string parts;
    auto part = [&](uint64_t count, const std::string& where) {
      if (count) parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", count, where);
    };
    part(left_out_.before_from, "before --from " + window.from_text);
    if (window.max_entries != UINT64_MAX)
      part(left_out_.by_max_entries, fmt::format("before the last {} of each device (--max-entries)", window.max_entries));
    part(left_out_.after_to, "after --to " + window.to_text);
    uint64_t total = left_out_.before_from + left_out_.by_max_entries + left_out_.after_to;
    return fmt::format("memory-viz: kept {} history entries, left out {}{}{}", kept_, total, parts.empty() ? "" : ": ",
                       parts);
  }

 private:
  // The entries of one device that the history window keeps: [first, end) but those dropped.
  struct Kept {
    size_t first = 0, end = 0;
  };
  Kept keep(const std::vector<VizEvent>& events, size_t before_freeze) {
    const HistoryWindow& window = options_.history;
    auto count = [&](size_t from, size_t to) {
      return static_cast<uint64_t>(std::count_if(events.begin() + static_cast<std::ptrdiff_t>(from),
                                                 events.begin() + static_cast<std::ptrdiff_t>(to),
                                                 [](const VizEvent& e) { return !e.dropped; }));
    };
    Kept kept{0, before_freeze};
    while (kept.first < kept.end && events[kept.first].time_ns < window.from_ns) ++kept.first;
    left_out_.before_from += count(0, kept.first);
    left_out_.after_to += count(kept.end, events.size());
    uint64_t in_window = count(kept.first, kept.end);
    if (in_window > window.max_entries) {
      left_out_.by_max_entries += in_window - window.max_entries;
      for (uint64_t skip = in_window - window.max_entries; skip > 0; ++kept.first)
        if (!events[kept.first].dropped) --skip;
    }
    kept_ += std::min(in_window, window.max_entries);
    return kept;
  }

  void flush() {
    constexpr size_t kFlushBytes = size_t{1} << 20;
    if (out_.size() < kFlushBytes) return;
    sink_.write(out_);
    out_.clear();
  }

  // A stack as snapshot frames, innermost first; written once, then referred to through the pickle's memo.
  void write_frames(replay::StackId stack) {
    if (auto it = memo_.find(stack); it != memo_.end()) {
      pickle_.get(it->second);
      return;
    }
    report::Frames all = symbolize_(stack);
    report::Frames frames = options_.all_frames ? all : report::user_frames(all);
    pickle_.begin_list();
    for (const symbolize::Frame& frame : frames) write_frame(frame);
    pickle_.end_list();
    memo_.emplace(stack, pickle_.memoize());
  }

  // One frame's dict; written once, then referred to through the memo (stacks share most of their frames).
  void write_frame(const symbolize::Frame& frame) {
    FrameKey key{frame.function.empty() ? report::frame_text(frame) : frame.function,
                 !frame.file.empty() ? frame.file : !frame.module.empty() ? frame.module : "??", frame.line};
    if (auto it = frame_memo_.find(key); it != frame_memo_.end()) {
      pickle_.get(it->second);
      return;
    }
    pickle_.begin_dict();
    pickle_.str(schema::kName);
    pickle_.str(std::get<0>(key));
    pickle_.str(schema::kFilename);
    pickle_.str(std::get<1>(key));
    pickle_.str(schema::kLine);
    pickle_.unsigned_integer(frame.line);
    pickle_.end_dict();
    frame_memo_.emplace(std::move(key), pickle_.memoize());
  }

  void write_block(uint64_t address, uint64_t size, uint64_t requested, BlockState state, replay::StackId stack) {
    pickle_.begin_dict();
    pickle_.str(schema::kAddress);
    pickle_.unsigned_integer(address);
    pickle_.str(schema::kSize);
    pickle_.unsigned_integer(size);
    pickle_.str(schema::kRequestedSize);
    pickle_.unsigned_integer(requested);
    pickle_.str(schema::kState);
    pickle_.str(schema::name_of(schema::kBlockStates, state));
    pickle_.str(schema::kFrames);
    if (state == BlockState::Inactive)
      write_frames(0);
    else
      write_frames(stack);
    pickle_.end_dict();
  }

  struct Layout {
    struct Part {
      uint64_t address, size, requested;
      BlockState state;
      replay::StackId stack;
    };
    std::vector<Part> parts;  // cover the segment in address order
    uint64_t allocated = 0, active = 0, requested = 0;
  };
  // The blocks of a segment: its heap's live blocks clipped to it, the gaps inactive.
  static Layout layout(const SnapshotBuilder& builder, uint64_t address, const VizSegment& segment) {
    Layout out;
    uint64_t end = address + segment.size;
    auto add = [&](uint64_t at, uint64_t size, uint64_t requested, BlockState state, replay::StackId stack) {
      out.parts.push_back({at, size, requested, state, stack});
      if (state == BlockState::Inactive) return;
      if (state == BlockState::ActiveAllocated) out.allocated += size;
      out.active += size;
      out.requested += requested;
    };
    if (segment.whole) {
      add(address, segment.size, segment.size, BlockState::ActiveAllocated, segment.stack);
      return out;
    }
    uint64_t cursor = address;
    for (auto it = builder.blocks().lower_bound(address); it != builder.blocks().end() && it->first < end; ++it) {
      uint64_t start = std::max(it->first, cursor);
      uint64_t stop = std::min(end, it->first + it->second.footprint());
      if (start >= stop) continue;  // overlaps the block before it
      if (start > cursor) add(cursor, start - cursor, start - cursor, BlockState::Inactive, 0);
      add(start, stop - start, std::min(it->second.size, stop - start),
          it->second.pending ? BlockState::ActivePendingFree : BlockState::ActiveAllocated, it->second.stack);
      cursor = stop;
    }
    if (cursor < end) add(cursor, end - cursor, end - cursor, BlockState::Inactive, 0);
    return out;
  }

  void write_segment(const SnapshotBuilder& builder, uint64_t address, const VizSegment& segment) {
    Layout parts = layout(builder, address, segment);
    pickle_.begin_dict();
    pickle_.str(schema::kDevice);
    pickle_.integer(segment.device);
    pickle_.str(schema::kAddress);
    pickle_.unsigned_integer(address);
    pickle_.str(schema::kTotalSize);
    pickle_.unsigned_integer(segment.size);
    pickle_.str(schema::kAllocatedSize);
    pickle_.unsigned_integer(parts.allocated);
    pickle_.str(schema::kActiveSize);
    pickle_.unsigned_integer(parts.active);
    pickle_.str(schema::kRequestedSize);
    pickle_.unsigned_integer(parts.requested);
    pickle_.str(schema::kStream);
    pickle_.unsigned_integer(segment.stream);
    pickle_.str(schema::kSegmentType);
    pickle_.str(schema::kLargePool);
    pickle_.str(schema::kSegmentPoolId);
    pickle_.begin_tuple();
    pickle_.integer(0);
    pickle_.integer(0);
    pickle_.end_tuple();
    pickle_.str(schema::kIsExpandable);
    pickle_.boolean(segment.expandable);
    pickle_.str(schema::kFrames);
    write_frames(segment.stack);
    pickle_.str(schema::kBlocks);
    pickle_.begin_list();
    for (const Layout::Part& part : parts.parts) write_block(part.address, part.size, part.requested, part.state, part.stack);
    pickle_.end_list();
    pickle_.end_dict();
    flush();
  }

  void write_event(const VizEvent& e, uint64_t start_wall_ns) {
    pickle_.begin_dict();
    pickle_.str(schema::kAction);
    pickle_.str(schema::name_of(schema::kActions, e.action));
    pickle_.str(e.action == Action::Oom ? schema::kDeviceFree : schema::kAddr);
    pickle_.unsigned_integer(e.action == Action::Oom ? e.device_free : e.address);
    pickle_.str(schema::kSize);
    pickle_.unsigned_integer(e.size);
    pickle_.str(schema::kStream);
    pickle_.unsigned_integer(e.stream);
    pickle_.str(schema::kTimeUs);
    pickle_.unsigned_integer((start_wall_ns + e.time_ns) / 1000);
    pickle_.str(schema::kFrames);
    write_frames(e.stack);
    pickle_.end_dict();
    flush();
  }

  ExportOptions options_;
  struct LeftOut {
    uint64_t before_from = 0, by_max_entries = 0, after_to = 0;
  } left_out_;
  uint64_t kept_ = 0;  // history entries written
  ExportSink& sink_;
  std::string out_;
  pytorch::PickleWriter pickle_;
  report::SymbolizeStack symbolize_;
  std::unordered_map<replay::StackId, uint32_t> memo_;  // a stack's frames list in the pickle's memo
  using FrameKey = std::tuple<std::string, std::string, uint32_t>;  // name, file name, line
  std::map<FrameKey, uint32_t> frame_memo_;                         // a frame's dict in the memo
};

}  // namespace

std::unique_ptr<Exporter> start_memory_viz(const ExportOptions& options, ExportSink& sink) {
  return std::make_unique<MemoryVizExport>(options, sink);
}

}  // namespace gpumemtrace::render
