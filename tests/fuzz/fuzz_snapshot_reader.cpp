// libFuzzer target: any bytes read as a PyTorch memory snapshot, the way every analyzer command reads one
// (the restricted pickle reader, the snapshot's schema and history, the trace made of it), then that trace
// through the reader and the replay. Nothing may crash, hang, recurse without bound or read outside the input.
// A snapshot read with its history streamed (values forgotten batch by batch) must be the one read whole.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "analyzer/replay/replay.h"
#include "analyzer/pytorch/pickle_reader.h"
#include "analyzer/pytorch/snapshot.h"
#include "analyzer/sources/pytorch/snapshot_trace.h"
#include "trace/reader/reader.h"

namespace {

using namespace gpumemtrace;

std::optional<pytorch::Snapshot> read_or_nothing(pytorch::SnapshotReader& reader) {
  try {
    return reader.read();
  } catch (const pytorch::PickleError&) {
  } catch (const pytorch::SnapshotError&) {
  }
  return std::nullopt;
}

bool same_frames(pytorch::SnapshotReader& a, pytorch::FramesId a_id, pytorch::SnapshotReader& b, pytorch::FramesId b_id) {
  if ((a_id == pytorch::kNoFrames) != (b_id == pytorch::kNoFrames)) return false;
  if (a_id == pytorch::kNoFrames) return true;
  std::vector<pytorch::SnapshotFrame> x = a.frames(a_id), y = b.frames(b_id);
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i].filename != y[i].filename || x[i].name != y[i].name || x[i].line != y[i].line) return false;
  return true;
}

// The history streamed and the history of the pickle read whole: the same entries, the same frames.
void streamed_is_whole(std::span<const uint8_t> bytes) {
  pytorch::SnapshotReader streamed_reader(bytes);
  std::optional<pytorch::Snapshot> streamed = read_or_nothing(streamed_reader);
  std::optional<pytorch::Pickle> pickle;
  try {
    pickle.emplace(bytes);
  } catch (const pytorch::PickleError&) {
  }
  if (!pickle) {
    if (streamed) __builtin_trap();
    return;
  }
  pytorch::SnapshotReader whole_reader(*pickle);
  std::optional<pytorch::Snapshot> whole = read_or_nothing(whole_reader);
  if (streamed.has_value() != whole.has_value()) __builtin_trap();
  if (!streamed) return;
  if (streamed->device_traces.size() != whole->device_traces.size()) __builtin_trap();
  for (size_t device = 0; device < streamed->device_traces.size(); ++device) {
    const auto& a = streamed->device_traces[device];
    const auto& b = whole->device_traces[device];
    if (a.size() != b.size()) __builtin_trap();
    for (size_t i = 0; i < a.size(); ++i) {
      if (!a[i].same_event(b[i]) || a[i].time_us != b[i].time_us) __builtin_trap();
      try {
        if (!same_frames(streamed_reader, a[i].frames, whole_reader, b[i].frames)) __builtin_trap();
      } catch (const pytorch::SnapshotError&) {
        // frames that are not frames, or a walk over its budget (each reader's own, from what it walked before)
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  streamed_is_whole(std::span<const uint8_t>(data, size));
  try {
    pytorch::SnapshotTrace snapshot = pytorch::snapshot_trace(std::span<const uint8_t>(data, size));
    trace::Reader reader(snapshot.trace->map());
    replay::Replay replay;
    while (const trace::Record* record = reader.next()) replay.on_record(*record, reader);
    replay.finish(reader);
    if (reader.status() == trace::Status::Corrupt) __builtin_trap();  // the trace made of a snapshot is always valid
  } catch (const pytorch::PickleError&) {
    // not plain data: the analyzer says so and exits 2
  } catch (const pytorch::SnapshotError&) {
    // plain data, not a snapshot: the same
  }
  return 0;
}
