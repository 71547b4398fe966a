// A caching allocator's history written as trace records, for a snapshot read alone (snapshot_trace.h) and
// for the snapshots joined to the trace that named them (analyzer/sources/snapshot_join.h):
//   a segment       a heap over its memory (HeapCreate), named "segment 0x… (large pool)"; for a snapshot read
//                   alone also the device allocation (cudaMalloc) that holds it, with the stack that made it (the
//                   segment's frames, else its first block's): a trace has its own;
//   an active block a SubAlloc in its segment's heap: size the requested bytes, reserved the block's size, its
//                   stack; a block "active_pending_free" is then requested free (SubFreeRequested);
//   the frames      Python frames (PythonCode) and C++ frames known by name and file (NativeFunction);
//   an oom entry    for a snapshot read alone, a failed cudaMalloc with the free bytes CUDA reported.
// The writer keeps the state its records made, so that the history goes on from it entry by entry (forward), or
// is set to a state known otherwise (set_state: where a snapshot's history begins).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/pytorch/snapshot.h"
#include "analyzer/sources/pytorch/snapshot_history.h"
#include "trace/writer/trace_buffer.h"

namespace gpumemtrace::pytorch {

// A segment the history opens (also again, when an expandable segment's mapping changes around it).
struct OpenedSegment {
  uint64_t ordinal = 0;  // the n-th segment opened, from 0
  int32_t device = 0;
  uint64_t address = 0;
  uint64_t size = 0;
  bool expandable = false;
  uint64_t time_ns = 0;
};

class HistoryWriter {
 public:
  struct Options {
    // Each segment's cudaMalloc and cudaFree and each oom entry's failed cudaMalloc: for a snapshot read alone,
    // which has no driver records of its own.
    bool driver_records = true;
    uint64_t first_heap = 1;  // the heap ids it writes count from here
  };
  // Whether a segment opened is written: the records of one that is not are left out, with its blocks'.
  using SegmentFilter = std::function<bool(const OpenedSegment&)>;
  // Told of each segment closed: its ordinal and when.
  using SegmentClosed = std::function<void(uint64_t ordinal, uint64_t time_ns)>;

  explicit HistoryWriter(Options options, SegmentFilter keep = {}, SegmentClosed closed = {});

  writer::TraceBuffer& buffer() { return buffer_; }
  uint64_t events() const { return buffer_.events(); }
  std::vector<uint8_t> take() { return buffer_.take(); }
  // Blocks allocated in segments that were not written, left out.
  uint64_t left_out_blocks() const { return left_out_blocks_; }

  // The state of `device` becomes `state`: the segments and blocks that differ are closed or freed, those it
  // lacks opened or allocated. `frames` is the snapshot the state's frames are in. Returns how many segments
  // and blocks changed.
  uint64_t set_state(int32_t device, const DeviceState& state, SnapshotReader& frames, uint64_t time_ns,
                     HistoryInconsistencies& bad);
  // One entry of the device's trace, forward; `reserved`: the size of the block an alloc made, when known.
  void forward(int32_t device, const SnapshotEntry& entry, uint64_t reserved, SnapshotReader& frames,
               uint64_t time_ns, HistoryInconsistencies& bad);

 private:
  // A block as the records have it: in which heap (0: left out with its segment), with what they said.
  struct LiveBlock {
    uint64_t heap = 0;
    HistoryBlock block;
    uint32_t stack = 0;
  };
  struct LiveSegment {
    HistorySegment segment;
    uint64_t ordinal = 0;
    uint64_t heap = 0;  // 0: not written
    uint32_t stack = 0;
  };

  uint32_t stack(SnapshotReader& frames, FramesId id);
  uint32_t python_code(const SnapshotFrame& frame);
  uint32_t native_function(const SnapshotFrame& frame);
  void open_segment(int32_t device, uint64_t address, const HistorySegment& segment, SnapshotReader& frames,
                    uint64_t time_ns);
  void close_segment(int32_t device, uint64_t address, uint64_t time_ns);
  LiveSegment* segment_at(int32_t device, uint64_t address);
  void add_block(int32_t device, uint64_t address, const HistoryBlock& block, SnapshotReader& frames, uint64_t time_ns,
                 HistoryInconsistencies& bad, std::optional<uint32_t> known_stack = std::nullopt);
  void free_block(int32_t device, uint64_t address, uint64_t time_ns);
  void request_free(LiveBlock& live, uint64_t address, uint64_t time_ns);
  void remap(int32_t device, uint64_t low, uint64_t high, const DeviceState& state, SnapshotReader& frames,
             uint64_t time_ns, HistoryInconsistencies& bad);

  Options options_;
  SegmentFilter keep_;
  SegmentClosed closed_;
  writer::TraceBuffer buffer_;
  std::map<std::pair<const SnapshotReader*, FramesId>, uint32_t> stacks_;
  std::map<std::pair<uint32_t, uint64_t>, uint32_t> nodes_;  // (parent, ip) -> node id, from 1
  std::map<std::pair<std::string, std::string>, uint32_t> python_codes_;
  std::map<std::pair<std::string, std::string>, uint32_t> native_functions_;
  uint64_t next_heap_;
  uint64_t next_ordinal_ = 0;
  uint64_t left_out_blocks_ = 0;
  std::map<int32_t, std::map<uint64_t, LiveSegment>> segments_;
  std::map<int32_t, std::map<uint64_t, LiveBlock>> blocks_;
  std::map<int32_t, DeviceState> mapped_;  // scratch for remap
  std::string segment_name_;               // scratch for open_segment
};

}  // namespace gpumemtrace::pytorch
