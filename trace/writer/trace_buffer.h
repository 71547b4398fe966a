// Writes a whole trace into memory: what the analyzer makes of another format (a PyTorch memory snapshot)
// before it reads it like any trace. The records are encoded as TraceWriter encodes them, but events happen
// at their own time (trace::Event::time_ns), not at the clock's: a Time record goes first when it moved.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "gpumemtrace/trace_records.h"
#include "trace/writer/record_encoder.h"
#include "trace/writer/vector_output.h"

namespace gpumemtrace::writer {

class TraceBuffer {
 public:
  TraceBuffer() : bytes_(format::kHeaderSize) { format::put_header(bytes_.data()); }

  // Writes one record. An event earlier than the one before it happens at that one's time.
  template <typename R>
  void write(const R& record) {
    if constexpr (std::is_base_of_v<trace::Event, R>) {
      if (record.time_ns >= time_ns_ + format::kTimeGranularityNs) {
        encoder_.put(out_, trace::Time{record.time_ns - time_ns_});
        time_ns_ = record.time_ns;
      }
    }
    encoder_.put(out_, record);
    if constexpr (trace::kIsEvent<R>) ++events_;
  }

  uint64_t events() const { return events_; }
  std::vector<uint8_t> take() { return std::move(bytes_); }

 private:
  std::vector<uint8_t> bytes_;
  VectorOutput out_{bytes_};
  RecordEncoder encoder_;
  uint64_t time_ns_ = 0;
  uint64_t events_ = 0;
};

}  // namespace gpumemtrace::writer
