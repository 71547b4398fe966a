#include "trace/packed/unpack.h"

#include <array>
#include <optional>
#include <memory>
#include <string>

#include "gpumemtrace/trace_records.h"
#include "common/memory_file.h"
#include "trace/packed/container.h"
#include "trace/packed/pack_model.h"
#include "trace/packed/zstd_streams.h"
#include "trace/writer/record_encoder.h"
#include "trace/writer/vector_output.h"

namespace gpumemtrace::packed {

namespace {

using format::Token;

// Version-1 bytes as the writer's encoder makes them, handed out a piece at a time.
class Output {
 public:
  Output(const std::function<void(std::span<const uint8_t>)>& out, const ProgressFn& progress, const ZstdReader& tokens)
      : out_(out), progress_(progress), tokens_(tokens) {
    bytes.resize(format::kHeaderSize);
    format::put_header(bytes.data());
  }
  void flush(bool all) {
    if (bytes.empty() || (!all && bytes.size() < kPiece)) return;
    out_(bytes);
    bytes.clear();
    if (progress_) progress_("unpacking", tokens_.consumed(), tokens_.frame_size());
  }

  std::vector<uint8_t> bytes;
  writer::VectorOutput encoder{bytes};  // where the record encoder puts records

 private:
  static constexpr size_t kPiece = size_t{1} << 20;
  const std::function<void(std::span<const uint8_t>)>& out_;
  const ProgressFn& progress_;
  const ZstdReader& tokens_;
};

std::array<std::unique_ptr<ZstdReader>, kStreams> readers_of(const Frames& frames, const ReadBehind* read_behind) {
  std::array<std::unique_ptr<ZstdReader>, kStreams> readers;
  for (size_t i = 0; i < kStreams; ++i)
    readers[i] = std::make_unique<ZstdReader>(frames[i], kStreamNames[i], read_behind);
  return readers;
}

class Unpacker {
 public:
  Unpacker(const Frames& frames, const std::function<void(std::span<const uint8_t>)>& out, const ProgressFn& progress,
           const ReadBehind* read_behind)
      : streams_(readers_of(frames, read_behind)), out_(out, progress, stream(Stream::Tokens)) {
    encoder_.restart();
  }

  void run() {
    ZstdReader& tokens = stream(Stream::Tokens);
    while (!tokens.at_end()) {
      uint8_t token = tokens.byte();
      if ((token & 0xC0) == static_cast<uint8_t>(Token::AllocBase)) {
        alloc(token);
      } else if ((token & 0xC0) == static_cast<uint8_t>(Token::FreeBase)) {
        free(token);
      } else if (token == static_cast<uint8_t>(Token::Time)) {
        time_step(stream(Stream::TimeLow).split(stream(Stream::TimeHigh)));
      } else if (token == static_cast<uint8_t>(Token::Device)) {
        uint64_t stored = stream(Stream::Devices).varint();
        if (stored > static_cast<uint64_t>(trace::kMaxDevice) + 1)
          throw PackedError("devices: impossible device " + std::to_string(stored));
        device_ = static_cast<int32_t>(stored) - 1;
      } else if (token == static_cast<uint8_t>(Token::StacksReset)) {
        encoder_.put(out_.encoder, trace::StacksReset{});
        stack_nodes_ = 0;
      } else if (token == static_cast<uint8_t>(Token::Unwritten)) {
        throw PackedError("tokens: a record with token 0");
      } else {
        if (token == static_cast<uint8_t>(Token::StackNode)) ++stack_nodes_;
        std::vector<uint8_t>& bytes = out_.bytes;
        bytes.push_back(token);
        stream(Stream::Others).bytes(stream(Stream::OtherLengths).varint(), bytes);
      }
      out_.flush(false);
    }
    for (size_t i = 0; i < kStreams; ++i)
      if (!streams_[i]->at_end()) throw PackedError(std::string(kStreamNames[i]) + ": bytes left over at the end");
    out_.flush(true);
  }

 private:
  ZstdReader& stream(Stream s) { return *streams_[static_cast<size_t>(s)]; }

  // A Time record of `granules` and the rest in its stream.
  void time_step(uint64_t granules) {
    uint64_t rest = stream(Stream::TimeRest).varint();
    if (rest >= format::kTimeGranularityNs || granules > (UINT64_MAX - rest) / format::kTimeGranularityNs)
      throw PackedError("time: impossible step of " + std::to_string(granules) + " granules and " +
                        std::to_string(rest) + " ns");
    encoder_.put(out_.encoder, trace::Time{granules * format::kTimeGranularityNs + rest});
  }
  // The Time an Alloc or Free is coded with, before it (pack.cpp: code_event_time).
  void event_time() {
    uint64_t code = stream(Stream::TimeLow).split(stream(Stream::TimeHigh));
    if (code > 0) time_step(code - 1);
  }

  static const format::ApiInfo& api_of(uint8_t token, bool is_free) {
    uint8_t api = token & format::kApiMask;
    if (api >= static_cast<uint8_t>(format::Api::Count) || format::kApis[api].is_free != is_free)
      throw PackedError("tokens: unknown token " + std::to_string(token));
    return format::kApis[api];
  }

  void alloc(uint8_t token) {
    const format::ApiInfo& info = api_of(token, false);
    event_time();
    trace::Alloc a;
    a.api = static_cast<format::Api>(token & format::kApiMask);
    a.device = device_;
    uint64_t stack_code = stream(Stream::StackLow).split(stream(Stream::StackHigh));
    uint64_t stack = stack_code ? model_.stacks.value_of(stack_code).value_or(~uint64_t{0})
                                : stream(Stream::StackNew).varint();
    // The reader's rule, checked here already: the encoder keeps a size per stack id up to the largest.
    if (stack > stack_nodes_) throw PackedError("stacks: alloc refers to undefined stack " + std::to_string(stack));
    if (stack_code == 0) model_.stacks.add(stack);
    a.stack = static_cast<uint32_t>(stack);
    uint64_t size_code = stream(Stream::SizeLow).split(stream(Stream::SizeHigh));
    std::optional<uint64_t> size = size_code == 0   ? model_.last_size(a.stack)
                                   : size_code == 1 ? stream(Stream::SizeNew).varint()
                                                    : model_.sizes.value_of(size_code - 1);
    if (!size) throw PackedError("sizes: impossible size code " + std::to_string(size_code));
    if (size_code == 1) model_.sizes.add(*size);
    a.size = *size;
    uint64_t address_code = stream(Stream::AllocAddress).varint();
    size_t freed = PackModel::kNone;
    if (address_code == 0) {
      a.address = model_.fresh_address() + static_cast<uint64_t>(format::unzigzag(stream(Stream::AllocAddressNew).varint()));
    } else {
      std::optional<uint64_t> address = model_.freed_at(a.size, address_code - 1);
      if (!address) throw PackedError("alloc-address: no freed block " + std::to_string(address_code));
      a.address = *address;
      freed = static_cast<size_t>(address_code - 1);
    }
    if (info.takes_stream) a.stream = stream(Stream::Extras).varint();
    if (info.takes_pool) a.pool = stream(Stream::Extras).varint();
    model_.on_alloc(a.stack, a.address, a.size, freed);
    encoder_.put(out_.encoder, a);
  }

  void free(uint8_t token) {
    const format::ApiInfo& info = api_of(token, true);
    event_time();
    trace::Free f;
    f.api = static_cast<format::Api>(token & format::kApiMask);
    uint64_t live_code = stream(Stream::FreeLow).split(stream(Stream::FreeHigh));
    if (live_code == 0) {
      f.address = model_.last_address() + static_cast<uint64_t>(format::unzigzag(stream(Stream::FreeAddressNew).varint()));
    } else {
      std::optional<uint64_t> address = model_.live_at(live_code - 1);
      if (!address) throw PackedError("free: no live allocation " + std::to_string(live_code));
      f.address = *address;
    }
    if (info.takes_stream) f.stream = stream(Stream::Extras).varint();
    model_.on_free(f.address);
    encoder_.put(out_.encoder, f);
  }

  std::array<std::unique_ptr<ZstdReader>, kStreams> streams_;
  Output out_;
  writer::RecordEncoder encoder_;
  PackModel model_;
  int32_t device_ = trace::kNoDevice;
  uint64_t stack_nodes_ = 0;  // StackNode records since the last StacksReset: the largest stack id defined
};

}  // namespace

void unpack(std::span<const uint8_t> packed, const std::function<void(std::span<const uint8_t>)>& out,
            const ProgressFn& progress, const std::function<void(std::span<const uint8_t>)>& read_behind) {
  Unpacker(read_container(packed), out, progress, read_behind ? &read_behind : nullptr).run();
}

std::optional<uint64_t> unpacked_size_bound(std::span<const uint8_t> packed) {
  Frames frames = read_container(packed);
  std::optional<uint64_t> tokens = stream_size(frames[static_cast<size_t>(Stream::Tokens)]);
  std::optional<uint64_t> others = stream_size(frames[static_cast<size_t>(Stream::Others)]);
  if (!tokens || !others) return std::nullopt;
  // A token is one record, or an Alloc with the Time and Device records before it: each at most a token and
  // seven varints. Every other record's body is in the others stream.
  constexpr uint64_t kMostPerToken = 3 + 7 * format::kMaxVarintBytes;
  if (*tokens > (UINT64_MAX - *others - format::kHeaderSize) / kMostPerToken) return std::nullopt;
  return format::kHeaderSize + *tokens * kMostPerToken + *others;
}

std::vector<uint8_t> unpack(std::span<const uint8_t> packed) {
  std::vector<uint8_t> bytes;
  unpack(packed, [&](std::span<const uint8_t> piece) { bytes.insert(bytes.end(), piece.begin(), piece.end()); });
  return bytes;
}

int unpack_to_memory_file(std::span<const uint8_t> packed) {
  return memory_file_of("gpumemtrace-unpacked", "writing the unpacked trace",
                        [&](const auto& write) { unpack(packed, write); });
}

}  // namespace gpumemtrace::packed
