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
    if (memory_file_ >= 0 && bytes_.size() >= kSpillBytes) spill();
  }

  uint64_t events() const { return events_; }
  std::vector<uint8_t> take() { return std::move(bytes_); }

  // From now on the records go on to a memory file (memfd) a MiB at a time instead of staying in this
  // process's memory: the trace of a snapshot with millions of entries. Throws std::system_error.
  void spill_to_memory_file();
  // The memory file with every record written, the descriptor the caller's. Throws std::system_error.
  int take_memory_file();

  TraceBuffer() = default;
  TraceBuffer(const TraceBuffer&) = delete;
  TraceBuffer& operator=(const TraceBuffer&) = delete;
  ~TraceBuffer();

 private:
  static constexpr size_t kSpillBytes = size_t{1} << 20;
  void spill();

  std::vector<uint8_t> bytes_ = header();
  int memory_file_ = -1;
  static std::vector<uint8_t> header() {
    std::vector<uint8_t> bytes(format::kHeaderSize);
    format::put_header(bytes.data());
    return bytes;
  }
  VectorOutput out_{bytes_};
  RecordEncoder encoder_;
  uint64_t time_ns_ = 0;
  uint64_t events_ = 0;
};

}  // namespace gpumemtrace::writer
