// Where the record encoder (record_encoder.h) puts records when they go to memory: the end of a vector. A trace
// made in memory (trace_buffer.h), the packer's check of what it read and the unpacker's output (trace/packed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpumemtrace::writer {

struct VectorOutput {
  std::vector<uint8_t>& bytes;
  uint8_t* reserve(size_t max_bytes) {
    bytes.resize(bytes.size() + max_bytes);
    return bytes.data() + bytes.size() - max_bytes;
  }
  void finish(uint8_t* start, uint8_t* end, uint8_t token) {
    *start = token;
    bytes.resize(static_cast<size_t>(end - bytes.data()));
  }
};

}  // namespace gpumemtrace::writer
