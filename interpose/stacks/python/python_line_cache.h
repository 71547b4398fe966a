// Line numbers of (code object, instruction) pairs already resolved. PyCode_Addr2Line scans the line
// table from its start (0.3-2 µs); a walk hits the same few call sites over and over.
//
// Direct mapped, fixed size, lock free: each slot is a sequence lock (odd while being written). A reader
// that races a writer misses and resolves again; a writer that finds the slot being written skips the
// store. Nothing allocates, nothing blocks, so hooks on any thread may use it at once.
//
// The key includes the line table's address as well as the code object's: a code object freed and
// another allocated at its address will almost always have a line table elsewhere (see
// python_frames.h, same_code), so its instructions do not inherit the old object's lines.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace gpumemtrace::interpose::python {

class LineCache {
 public:
  static constexpr unsigned kSlotBits = 12;  // 4096 slots of 32 bytes
  static constexpr size_t kSlots = size_t{1} << kSlotBits;

  // True and `*line` set when (code, linetable, lasti) is cached.
  bool lookup(uintptr_t code, uintptr_t linetable, int32_t lasti, int32_t* line) const;
  void store(uintptr_t code, uintptr_t linetable, int32_t lasti, int32_t line);
  void clear();

 private:
  struct alignas(32) Slot {
    std::atomic<uint32_t> seq{0};
    std::atomic<int32_t> lasti{0};
    std::atomic<int32_t> line{0};
    std::atomic<uintptr_t> code{0};  // 0: empty
    std::atomic<uintptr_t> linetable{0};
  };
  static size_t index(uintptr_t code, int32_t lasti);

  Slot slots_[kSlots];
};

}  // namespace gpumemtrace::interpose::python
