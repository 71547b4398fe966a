// Where the record encoder (trace/writer/record_encoder.h) puts records when they go to memory: the end of a
// vector. The packer re-encodes into one what it read, the unpacker writes the trace it rebuilds into one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpumemtrace::packed {

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

}  // namespace gpumemtrace::packed
