// The schema of PyTorch's memory snapshots (torch.cuda.memory._snapshot(), written by _dump_snapshot()), as
// torch/csrc/cuda/Module.cpp writes it and torch/cuda/_memory_viz.py and torch/utils/viz/MemoryViz.js read
// it: the names of its keys, block states and trace actions, for both the import and the memory-viz export.
//
//   {"segments": [segment...], "device_traces": [[entry...] per device], "allocator_settings": {
//    "PYTORCH_CUDA_ALLOC_CONF": str, "max_split_size": bytes or -1, "garbage_collection_threshold": float,
//    "expandable_segments": bool, "roundup_power2_divisions": {"1": n, "2": n, ... "32768": n} (by MiB), ...},
//    "external_annotations": [...]}   (legacy: the bare list of segments)
//   segment  {"device", "address", "total_size", "allocated_size", "active_size", "requested_size", "stream",
//             "segment_type": "large"|"small", "segment_pool_id", "is_expandable", "frames", "blocks": [...]}
//   block    {"address", "size", "requested_size", "state", "frames"}; legacy: "history": [{"addr",
//             "real_size", "frames"}] instead of "frames"; the blocks of a segment cover it in address order
//   entry    {"action", "addr" (for "oom": "device_free"), "size", "stream", "time_us", "frames",
//             "compile_context", "user_metadata"}
//   frame    {"filename", "line", "name"}, innermost first
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace gpumemtrace::pytorch::schema {

inline constexpr std::string_view kSegments = "segments";
inline constexpr std::string_view kDeviceTraces = "device_traces";
inline constexpr std::string_view kAllocatorSettings = "allocator_settings";
// In allocator_settings:
inline constexpr std::string_view kAllocConf = "PYTORCH_CUDA_ALLOC_CONF";
inline constexpr std::string_view kMaxSplitSize = "max_split_size";
inline constexpr std::string_view kGarbageCollectionThreshold = "garbage_collection_threshold";
inline constexpr std::string_view kExpandableSegments = "expandable_segments";
inline constexpr std::string_view kRoundupPower2Divisions = "roundup_power2_divisions";

inline constexpr std::string_view kDevice = "device";
inline constexpr std::string_view kAddress = "address";
inline constexpr std::string_view kTotalSize = "total_size";
inline constexpr std::string_view kAllocatedSize = "allocated_size";
inline constexpr std::string_view kActiveSize = "active_size";
inline constexpr std::string_view kRequestedSize = "requested_size";
inline constexpr std::string_view kStream = "stream";
inline constexpr std::string_view kSegmentType = "segment_type";
inline constexpr std::string_view kSegmentPoolId = "segment_pool_id";
inline constexpr std::string_view kIsExpandable = "is_expandable";
inline constexpr std::string_view kFrames = "frames";
inline constexpr std::string_view kBlocks = "blocks";

inline constexpr std::string_view kSize = "size";
inline constexpr std::string_view kState = "state";
inline constexpr std::string_view kHistory = "history";
inline constexpr std::string_view kHistoryAddr = "addr";
inline constexpr std::string_view kRealSize = "real_size";

inline constexpr std::string_view kAction = "action";
inline constexpr std::string_view kAddr = "addr";
inline constexpr std::string_view kDeviceFree = "device_free";
inline constexpr std::string_view kTimeUs = "time_us";
inline constexpr std::string_view kUserMetadata = "user_metadata";

inline constexpr std::string_view kFilename = "filename";
inline constexpr std::string_view kLine = "line";
inline constexpr std::string_view kName = "name";

inline constexpr std::string_view kLargePool = "large";

enum class BlockState : uint8_t { ActiveAllocated, ActivePendingFree, Inactive, Count };
inline constexpr std::string_view kBlockStates[] = {"active_allocated", "active_pending_free", "inactive"};
static_assert(std::size(kBlockStates) == static_cast<size_t>(BlockState::Count));

// A trace entry's action (TraceEntry::Action). "free" is not written by PyTorch: MemoryViz.js merges a
// free_requested and the free_completed right after it into one; it is read as both.
enum class Action : uint8_t {
  Alloc,
  FreeRequested,
  FreeCompleted,
  Free,
  SegmentAlloc,
  SegmentFree,
  SegmentMap,
  SegmentUnmap,
  Snapshot,
  Oom,
  Count
};
inline constexpr std::string_view kActions[] = {"alloc",        "free_requested", "free_completed", "free",
                                                "segment_alloc", "segment_free",  "segment_map",    "segment_unmap",
                                                "snapshot",      "oom"};
static_assert(std::size(kActions) == static_cast<size_t>(Action::Count));

template <typename Enum, size_t N>
constexpr std::optional<Enum> named(const std::string_view (&names)[N], std::string_view name) {
  for (size_t i = 0; i < N; ++i)  // the first byte first: a history has millions of names to look up
    if (names[i].size() == name.size() && (name.empty() || names[i][0] == name[0]) && names[i] == name)
      return static_cast<Enum>(i);
  return std::nullopt;
}
template <typename Enum, size_t N>
constexpr std::string_view name_of(const std::string_view (&names)[N], Enum value) {
  return names[static_cast<size_t>(value)];
}

}  // namespace gpumemtrace::pytorch::schema
