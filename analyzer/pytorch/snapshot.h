// A PyTorch memory snapshot, read from its pickle (snapshot_schema.h): the segments and blocks at the
// moment it was taken, and each device's trace of the last events before it. Checked as it is read: a
// pickle of plain data that is not a snapshot is refused with where it differs ("segments[3].blocks[0] has
// no 'size'"). Frames stay in the pickle until asked for (frames()): snapshots share them heavily. The
// history (device_traces) is read as the pickle is: each entry made a SnapshotEntry as it is met and its
// values forgotten (PickleListSink), so that memory grows with the entries alone.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyzer/pytorch/entry_array.h"
#include "analyzer/pytorch/pickle_reader.h"
#include "analyzer/pytorch/snapshot_schema.h"

namespace gpumemtrace::pytorch {

// Why a pickle is not a snapshot.
class SnapshotError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A list of frames in the pickle (its value id), innermost first; kNoFrames: none recorded.
using FramesId = Pickle::Id;
inline constexpr FramesId kNoFrames = UINT32_MAX;

struct SnapshotFrame {
  std::string_view filename;  // a Python file, a C++ source file, "??" or "" when unknown
  std::string_view name;      // the function
  uint64_t line = 0;          // 0: unknown

  // A frame of Python code, by its file: "train.py", or a name of code without a file ("<string>",
  // "<frozen runpy>", "<eval_with_key>.3"). The others are C++ frames.
  bool is_python() const { return filename.ends_with(".py") || filename.starts_with("<"); }
};

struct SnapshotBlock {
  uint64_t address = 0;    // the segment's address plus the sizes of the blocks before it (as the viewers place it)
  uint64_t size = 0;       // the bytes the block holds (rounded, or a split's remainder)
  uint64_t requested = 0;  // the bytes asked for: requested_size; legacy: history[0].real_size (as _memory_viz.py)
  schema::BlockState state{};
  FramesId frames = kNoFrames;
  std::string_view user_metadata;  // _set_memory_metadata(), when the snapshot has it
};

struct SnapshotSegment {
  int32_t device = 0;
  uint64_t address = 0;
  uint64_t total_size = 0;
  uint64_t stream = 0;
  bool large_pool = true;  // segment_type "large" (blocks over 1 MiB), else "small"
  bool expandable = false;
  FramesId frames = kNoFrames;  // the stack that made the segment, when recorded
  std::vector<SnapshotBlock> blocks;
};

// A wall-clock time in µs that an entry may lack, in 8 bytes where std::optional takes 16 (a history has
// millions of entries): UINT64_MAX, a time no clock gives, stands for none.
class EntryTime {
 public:
  EntryTime() = default;
  EntryTime(std::nullopt_t) {}
  EntryTime(uint64_t us) : us_(us) {}
  bool has_value() const { return us_ != kNone; }
  explicit operator bool() const { return has_value(); }
  uint64_t operator*() const { return us_; }
  uint64_t value_or(uint64_t other) const { return has_value() ? us_ : other; }
  bool operator==(const EntryTime&) const = default;

 private:
  static constexpr uint64_t kNone = UINT64_MAX;
  uint64_t us_ = kNone;
};

// 64 bytes: the history is held whole while it is made into a trace.
struct SnapshotEntry {
  schema::Action action{};
  FramesId frames = kNoFrames;
  uint64_t address = 0;      // "addr"; 0 for oom and snapshot
  uint64_t size = 0;         // requested bytes for alloc and free_*, the segment's bytes for segment_*
  uint64_t device_free = 0;  // oom: the free bytes CUDA reported
  uint64_t stream = 0;
  EntryTime time_us;         // wall clock, µs since the epoch, when recorded
  std::string_view user_metadata;

  // The same event, as two snapshots of one process's ring buffer have it, but for the time (same_time): their
  // frames are in different pickles and are not compared.
  bool same_event(const SnapshotEntry& other) const {
    return action == other.action && address == other.address && size == other.size &&
           device_free == other.device_free && stream == other.stream && user_metadata == other.user_metadata;
  }
  // The same time, as two snapshots have it: the allocator stamps an entry with the cycle counter, and each
  // snapshot converts it to µs with a calibration of its own (c10's ApproximateClockToUnixTimeConverter), so one
  // event's time_us differs between snapshots, by 1 µs on an idle machine and more under load.
  static constexpr uint64_t kCalibrationSkewUs = 1000;
  bool same_time(const SnapshotEntry& other) const {
    if (!time_us || !other.time_us) return time_us == other.time_us;
    uint64_t a = *time_us, b = *other.time_us;
    return (a > b ? a - b : b - a) <= kCalibrationSkewUs;
  }
};
static_assert(sizeof(SnapshotEntry) == 64);

// The allocator's settings as the snapshot repeats them (allocator_settings), each when present in a form this
// reader knows: what a replay of the history needs to run under the recorded settings.
struct AllocatorSettings {
  std::string_view alloc_conf;  // PYTORCH_CUDA_ALLOC_CONF as the process had it ("" when unset)
  std::optional<bool> expandable_segments;
  std::optional<uint64_t> max_split_size;  // bytes; nullopt also when unlimited (-1)
  std::optional<double> garbage_collection_threshold;  // 0: off
  // roundup_power2_divisions by interval: [0] for 1-2 MiB, [1] for 2-4 MiB, ... [15] from 32 GiB.
  std::optional<std::array<uint64_t, 16>> roundup_power2_divisions;
};

struct Snapshot {
  bool legacy = false;  // a bare list of segments, or blocks with "history" instead of "frames"
  std::vector<SnapshotSegment> segments;
  std::vector<EntryArray<SnapshotEntry>> device_traces;  // by device
  uint64_t unknown_actions = 0;                           // entries of an action this reader does not know (skipped)
  std::optional<AllocatorSettings> settings;              // allocator_settings, when the snapshot has them
};

class SnapshotReader {
 public:
  // Told, while the history streams, how far the pickle is read: the bytes before it are not needed until
  // the frames are read again (a mapped file may drop their pages, to be read again from the file).
  using ReadTo = std::function<void(uint64_t offset)>;
  // The snapshot in `bytes`, which must outlive the reader; read() streams its history.
  explicit SnapshotReader(std::span<const uint8_t> bytes, ReadTo read_to = {});
  // A pickle read whole, which must outlive the reader.
  explicit SnapshotReader(const Pickle& pickle);

  // Throws PickleError (bytes that are not plain data), SnapshotError. The same snapshot, or the same error,
  // whether streamed or not: a pickle whose history the stream cannot take alone (a later reference to an
  // entry it forgot, a list of entries that is not where device_traces is) is read again whole.
  Snapshot read();
  // The frames of a list the snapshot refers to. Throws SnapshotError when they are not frames.
  std::vector<SnapshotFrame> frames(FramesId id);

  class Walk;           // the walk over the pickle's values (snapshot.cpp)
  class HistoryStream;  // takes the entries as the pickle is read (snapshot.cpp)

 private:
  Snapshot read(HistoryStream* stream);
  Snapshot read_streamed();

  std::span<const uint8_t> bytes_;  // when the reader reads the pickle itself
  ReadTo read_to_;
  std::unique_ptr<Pickle> own_;
  const Pickle* pickle_ = nullptr;
  bool whole_ = false;  // given a pickle read whole
  // Values and dict entries the reading visited: at most 4 per item and one per value of the pickle (a pickle
  // may share one list many times).
  uint64_t visits_ = 0;
  std::unordered_map<Pickle::Id, SnapshotFrame> frames_read_;  // snapshots share each frame among many stacks
  friend class Walk;
};

}  // namespace gpumemtrace::pytorch
