// A packed trace unpacked on a thread of its own into a memory file (or a scratch file on disk), which a
// reading maps and reads while it grows (opened_trace.h): the first reading of a report replays on one
// processor while the other unpacks, instead of waiting for the whole trace first.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "trace/reader/mapped_file.h"

namespace gpumemtrace::trace {

class Unpacking {
 public:
  // Starts unpacking the mapped packed trace, `bound` bytes at most when unpacked (packed::unpacked_size_bound),
  // into a memory file while the bound is at most `in_memory_at_most`, else into a scratch file on disk
  // (common/memory_file.h), so that a long trace's reading holds no more memory than a plain one's.
  // Throws OpenError when the file cannot be made.
  Unpacking(std::unique_ptr<MappedFile> packed, uint64_t bound, uint64_t in_memory_at_most = kInMemoryAtMost);
  // About 15 M events: the bound counts 73 bytes per record, where a trace unpacks to about 6.
  static constexpr uint64_t kInMemoryAtMost = uint64_t{1} << 30;
  // Stops the unpacking at its next piece (nobody is left to read the rest) and waits for its thread.
  ~Unpacking();
  Unpacking(const Unpacking&) = delete;
  Unpacking& operator=(const Unpacking&) = delete;

  int descriptor() const { return descriptor_; }
  // What a mapping of the unpacked copy reserves: the unpacked trace never grows past it.
  uint64_t bound() const { return bound_; }
  // Waits until more than `have` bytes are unpacked or the unpacking has ended; how many are. Pieces end at
  // records' ends. Throws OpenError ("corrupt packed trace: ...") when the unpacking failed.
  uint64_t wait_beyond(uint64_t have);
  // Waits for the whole trace; its size. Throws as wait_beyond.
  uint64_t wait_whole();
  // The unpacked trace's size as well as it is known now: exact once the unpacking has ended, else the bytes
  // so far scaled by how much of the packed records is left.
  uint64_t expected_size() const;

 private:
  void run();

  std::unique_ptr<MappedFile> packed_;
  uint64_t bound_;
  int descriptor_ = -1;

  mutable std::mutex mutex_;
  std::condition_variable grew_;
  uint64_t unpacked_ = 0;  // bytes in the unpacked copy
  double fraction_ = 0;    // of the packed records' stream read
  bool ended_ = false;
  std::atomic<bool> stopping_ = false;
  std::string error_;      // why the unpacking failed, when it did
  std::thread thread_;     // last: started once everything it uses is
};

}  // namespace gpumemtrace::trace
