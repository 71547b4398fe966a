#include "trace/reader/unpacking.h"

#include <unistd.h>

#include <algorithm>
#include <system_error>

#include "common/memory_file.h"
#include "common/write_all.h"
#include "trace/packed/unpack.h"
#include "trace/packed/zstd_streams.h"
#include "trace/reader/open_error.h"

namespace gpumemtrace::trace {

Unpacking::Unpacking(std::unique_ptr<MappedFile> packed, uint64_t bound, uint64_t in_memory_at_most)
    : packed_(std::move(packed)), bound_(bound) {
  try {
    descriptor_ = bound <= in_memory_at_most ? create_memory_file("gpumemtrace-unpacked")
                                             : create_scratch_file("gpumemtrace-unpacked");
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error& error) {  // no file for the copy, or no thread
    if (descriptor_ >= 0) close(descriptor_);
    throw OpenError(std::string("cannot unpack the packed trace: ") + error.what());
  }
}

namespace {
struct Stopped {};
}  // namespace

Unpacking::~Unpacking() {
  stopping_.store(true, std::memory_order_relaxed);
  thread_.join();
  close(descriptor_);
}

void Unpacking::run() {
  std::string error;
  try {
    packed::unpack(
        packed_->bytes(),
        [&](std::span<const uint8_t> piece) {
          if (stopping_.load(std::memory_order_relaxed)) throw Stopped{};
          // A mapping reserves bound_ bytes: a damaged trace that would unpack to more stops here.
          if (piece.size() > bound_ - unpacked_)
            throw packed::PackedError("it unpacks to more than its streams' sizes allow");
          write_all(descriptor_, piece, "writing the unpacked trace");
          std::lock_guard lock(mutex_);
          unpacked_ += piece.size();
          grew_.notify_all();
        },
        [&](std::string_view, uint64_t done, uint64_t total) {
          std::lock_guard lock(mutex_);
          fraction_ = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
        },
        [&](std::span<const uint8_t> read) { packed_->release(read); });
  } catch (const Stopped&) {
  } catch (const packed::PackedError& e) {
    error = std::string("corrupt packed trace: ") + e.what();
  } catch (const std::exception& e) {  // the copy could not be written (a full disk), or memory ran out
    error = std::string("cannot unpack the packed trace: ") + e.what();
  }
  std::lock_guard lock(mutex_);
  error_ = std::move(error);
  ended_ = true;
  grew_.notify_all();
}

uint64_t Unpacking::wait_beyond(uint64_t have) {
  std::unique_lock lock(mutex_);
  grew_.wait(lock, [&] { return ended_ || unpacked_ > have; });
  if (!error_.empty()) throw OpenError(error_);
  return unpacked_;
}

uint64_t Unpacking::wait_whole() {
  std::unique_lock lock(mutex_);
  grew_.wait(lock, [&] { return ended_; });
  if (!error_.empty()) throw OpenError(error_);
  return unpacked_;
}

uint64_t Unpacking::expected_size() const {
  std::lock_guard lock(mutex_);
  if (ended_) return unpacked_;
  if (fraction_ <= 0) return bound_;
  return std::max(unpacked_, static_cast<uint64_t>(static_cast<double>(unpacked_) / fraction_));
}

}  // namespace gpumemtrace::trace
