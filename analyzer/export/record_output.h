// One record as a line of `gpumemtrace dump`: readable text or a JSON object. The caller passes the
// record's position (byte offset) and the reader's current time and thread.
#pragma once

#include <fmt/format.h>

#include <cstdint>

#include "trace/reader/records.h"

namespace gpumemtrace::render {

struct RecordContext {
  uint64_t offset = 0;
  uint64_t time_ns = 0;
  uint32_t thread = 0;  // 0: none yet
};

// "    1.000000250 T1 alloc api=cudaMalloc kind=device device=0 address=0x7f0000000000 size=1.00 MiB (1048576 B)
// stack=3"
void append_record_text(fmt::memory_buffer& out, const trace::Record& record, const RecordContext& context);
// {"file_offset":16,"time_ns":1000000250,"thread":1,"record":"alloc","api":"cudaMalloc",...}
void append_record_json(fmt::memory_buffer& out, const trace::Record& record, const RecordContext& context);

// "1.000000250": seconds with nanosecond precision.
std::string format_seconds(uint64_t ns);

}  // namespace gpumemtrace::render
