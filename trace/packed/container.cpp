#include "trace/packed/container.h"

#include <cstring>
#include <string>

#include "trace/packed/zstd_streams.h"
#include "trace/reader/field_cursor.h"

namespace gpumemtrace::packed {

std::vector<uint8_t> write_container(const std::array<std::vector<uint8_t>, kStreams>& frames) {
  size_t most = format::kHeaderSize + (kStreams + 1) * format::kMaxVarintBytes;
  for (const std::vector<uint8_t>& frame : frames) most += frame.size();
  std::vector<uint8_t> file(most);
  format::put_header(file.data(), kPackedVersion);
  uint8_t* p = format::put_varint(file.data() + format::kHeaderSize, kStreams);
  for (const std::vector<uint8_t>& frame : frames) p = format::put_varint(p, frame.size());
  for (const std::vector<uint8_t>& frame : frames) {
    if (!frame.empty()) std::memcpy(p, frame.data(), frame.size());
    p += frame.size();
  }
  file.resize(static_cast<size_t>(p - file.data()));
  return file;
}

Frames read_container(std::span<const uint8_t> file) {
  trace::FieldCursor directory(file.data() + format::kHeaderSize, file.data() + file.size());
  uint64_t count = directory.u();
  std::array<uint64_t, kStreams> lengths{};
  if (count == kStreams)
    for (uint64_t& length : lengths) length = directory.u();
  if (directory.failure() != trace::FieldCursor::Failure::None) throw PackedError("its directory of streams is damaged");
  if (count != kStreams)
    throw PackedError("it has " + std::to_string(count) + " streams, this version has " + std::to_string(kStreams));
  size_t at = static_cast<size_t>(directory.position() - file.data());
  Frames frames;
  for (size_t i = 0; i < kStreams; ++i) {
    if (lengths[i] > file.size() - at)
      throw PackedError("stream " + std::string(kStreamNames[i]) + " runs past the end of the file");
    frames[i] = file.subspan(at, lengths[i]);
    at += lengths[i];
  }
  if (at != file.size()) throw PackedError(std::to_string(file.size() - at) + " bytes follow the last stream");
  return frames;
}

}  // namespace gpumemtrace::packed
