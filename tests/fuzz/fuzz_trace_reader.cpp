// libFuzzer target: any bytes read as a trace, the way every analyzer command reads one (the reader's
// validated decoding, then the replay model). Nothing may crash, hang or read outside the input.
#include <cstddef>
#include <cstdint>
#include <span>

#include "analyzer/replay/replay.h"
#include "trace/reader/open_error.h"
#include "trace/reader/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpumemtrace;
  try {
    trace::Reader reader(std::span<const uint8_t>(data, size));
    replay::Replay replay;
    while (const trace::Record* record = reader.next()) replay.on_record(*record, reader);
    replay.finish(reader);
  } catch (const trace::OpenError&) {
    // not a trace, or another version: the analyzer says so and exits 2
  }
  return 0;
}
