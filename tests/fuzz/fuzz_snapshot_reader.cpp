// libFuzzer target: any bytes read as a PyTorch memory snapshot, the way every analyzer command reads one
// (the restricted pickle reader, the snapshot's schema and history, the trace made of it), then that trace
// through the reader and the replay. Nothing may crash, hang, recurse without bound or read outside the input.
#include <cstddef>
#include <cstdint>
#include <span>

#include "analyzer/replay/replay.h"
#include "analyzer/pytorch/pickle_reader.h"
#include "analyzer/pytorch/snapshot.h"
#include "analyzer/sources/pytorch/snapshot_trace.h"
#include "trace/reader/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpumemtrace;
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
