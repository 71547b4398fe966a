// libFuzzer target: any bytes read as a trace, the way every analyzer command reads one (a packed trace
// unpacked first, a trace of the first layout rewritten in today's, then the reader's validated decoding and
// the replay model). Nothing may crash, hang or read
// outside the input.
#include <cstddef>
#include <cstdint>
#include <span>

#include "analyzer/replay/replay.h"
#include "trace/legacy/first_layout.h"
#include "trace/packed/packed_format.h"
#include "trace/packed/unpack.h"
#include "trace/packed/zstd_streams.h"
#include "trace/reader/open_error.h"
#include "trace/reader/opened_trace.h"
#include "trace/reader/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpumemtrace;
  std::span<const uint8_t> bytes(data, size);
  std::vector<uint8_t> unpacked;
  try {
    if (packed::is_packed(bytes)) {
      unpacked = packed::unpack(bytes);
      bytes = unpacked;
    } else if (trace::is_first_layout(bytes)) {
      unpacked = legacy::to_current_layout(bytes);
      bytes = unpacked;
    }
    trace::Reader reader(bytes);
    replay::Replay replay;
    while (const trace::Record* record = reader.next()) replay.on_record(*record, reader);
    replay.finish(reader);
  } catch (const trace::OpenError&) {
    // not a trace, or another version: the analyzer says so and exits 2
  } catch (const packed::PackedError&) {
    // a damaged packed trace: the reader's OpenError "corrupt packed trace: ..." (exit 2)
  }
  return 0;
}
