#include "trace/packed/zstd_streams.h"

#include <zstd.h>

#include <algorithm>
#include <memory>
#include <new>

namespace gpumemtrace::packed {

ZstdCompressor::ZstdCompressor(int level) : context_(ZSTD_createCCtx()), level_(level) {
  if (!context_) throw std::bad_alloc();
  // Parameters stay with the context; each ZSTD_compress2 starts a frame of its own.
  ZSTD_CCtx_setParameter(context_, ZSTD_c_windowLog, kPackedWindowLog);
  ZSTD_CCtx_setParameter(context_, ZSTD_c_checksumFlag, 1);
}

ZstdCompressor::~ZstdCompressor() { ZSTD_freeCCtx(context_); }

size_t ZstdCompressor::compress(std::span<const uint8_t> bytes, int level) {
  size_t bound = ZSTD_compressBound(bytes.size());
  if (bound > scratch_size_) {
    scratch_.reset(new uint8_t[bound]);
    scratch_size_ = bound;
  }
  ZSTD_CCtx_setParameter(context_, ZSTD_c_compressionLevel, level);
  size_t size = ZSTD_compress2(context_, scratch_.get(), bound, bytes.data(), bytes.size());
  if (ZSTD_isError(size)) throw std::runtime_error(std::string("zstd: ") + ZSTD_getErrorName(size));
  return size;
}

int ZstdCompressor::level_for(std::span<const uint8_t> bytes) {
  if (level_ <= kFastLevel) return level_;
  std::span<const uint8_t> sample = bytes.first(std::min(bytes.size(), kSampleBytes));
  size_t fast = compress(sample, kFastLevel);
  return compress(sample, level_) < fast ? level_ : kFastLevel;
}

std::vector<uint8_t> ZstdCompressor::frame(std::span<const uint8_t> bytes) {
  size_t size = compress(bytes, level_for(bytes));
  return std::vector<uint8_t>(scratch_.get(), scratch_.get() + size);
}

std::vector<uint8_t> ZstdWriter::compress(ZstdCompressor& compressor) {
  std::vector<uint8_t> frame = compressor.frame({raw_.data(), used()});
  std::vector<uint8_t>().swap(raw_);
  next_ = limit_ = nullptr;
  return frame;
}

void ZstdWriter::grow(size_t bytes) {
  size_t kept = used();
  raw_.resize(std::max(2 * raw_.size(), kept + bytes + 4096));
  next_ = raw_.data() + kept;
  limit_ = raw_.data() + raw_.size();
}

std::optional<uint64_t> stream_size(std::span<const uint8_t> frame) {
  unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (size == ZSTD_CONTENTSIZE_UNKNOWN || size == ZSTD_CONTENTSIZE_ERROR) return std::nullopt;
  return size;
}

ZstdReader::ZstdReader(std::span<const uint8_t> frame, std::string_view name, const ReadBehind* read_behind)
    : context_(ZSTD_createDCtx()), frame_(frame), read_behind_(read_behind), name_(name), window_(ZSTD_DStreamOutSize()) {
  if (!context_) throw std::bad_alloc();
  ZSTD_DCtx_setParameter(context_, ZSTD_d_windowLogMax, kWindowLog);
}

ZstdReader::~ZstdReader() { ZSTD_freeDCtx(context_); }

bool ZstdReader::refill() {
  for (;;) {
    ZSTD_inBuffer in{frame_.data(), frame_.size(), consumed_};
    ZSTD_outBuffer out{window_.data(), window_.size(), 0};
    size_t left = ZSTD_decompressStream(context_, &out, &in);
    if (ZSTD_isError(left)) throw PackedError(std::string(name_) + ": " + ZSTD_getErrorName(left));
    if (in.pos > consumed_ || out.pos > 0) frame_ended_ = left == 0;  // a call without input says nothing
    consumed_ = in.pos;
    if (read_behind_ && consumed_ > told_ && (consumed_ >= told_ + kReadBehindStep || consumed_ == frame_.size())) {
      (*read_behind_)(frame_.first(consumed_));
      told_ = consumed_;
    }
    if (out.pos > 0) {
      position_ = window_.data();
      end_ = position_ + out.pos;
      return true;
    }
    if (consumed_ == frame_.size()) {
      if (!frame_ended_) throw PackedError(std::string(name_) + ": the compressed stream is cut short");
      return false;
    }
  }
}

void ZstdReader::ended_early() const { throw PackedError(std::string(name_) + ": the stream ends early"); }

void ZstdReader::bytes(uint64_t count, std::vector<uint8_t>& out) {
  while (count > 0) {
    if (position_ == end_ && !refill()) ended_early();
    size_t take = static_cast<size_t>(std::min<uint64_t>(count, static_cast<uint64_t>(end_ - position_)));
    out.insert(out.end(), position_, position_ + take);
    position_ += take;
    count -= take;
  }
}

}  // namespace gpumemtrace::packed
