// Line numbers of (code object, instruction) pairs already resolved. PyCode_Addr2Line scans the line
// table from its start (0.3-2 µs); a walk hits the same few call sites over and over.
//
// Direct mapped, fixed size, lock free: each slot is a sequence lock (odd while being written). A reader
// that races a writer misses and resolves again; a writer that finds the slot being written skips the
// store. Nothing allocates, nothing blocks, so hooks on any thread may use it at once.
//
// A line is a function of the line table's bytes, the code object's first line (the table holds deltas
// from it) and the instruction. The key holds the code object's and the line table's addresses and the
// first line: a code object freed and another allocated at its address (with its line table reborn at the
// old table's address too, as CPython's allocator does for same-sized objects) is told apart by its first
// line, and otherwise has the same lines unless its table's bytes differ at the same address and length,
// which the key cannot see (see python_frames.h, same_code).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace gpumemtrace::interpose::python {

struct LineKey {
  uintptr_t code = 0;  // 0: no key
  uintptr_t linetable = 0;
  int32_t first_line = 0;
  int32_t lasti = 0;
  bool operator==(const LineKey&) const = default;
};

class LineCache {
 public:
  static constexpr unsigned kSlotBits = 12;  // 4096 slots of 32 bytes
  static constexpr size_t kSlots = size_t{1} << kSlotBits;

  // True and `*line` set when `key` is cached.
  bool lookup(const LineKey& key, int32_t* line) const;
  void store(const LineKey& key, int32_t line);
  void clear();

 private:
  struct alignas(32) Slot {
    std::atomic<uint32_t> seq{0};
    std::atomic<int32_t> lasti{0};
    std::atomic<int32_t> line{0};
    std::atomic<int32_t> first_line{0};
    std::atomic<uintptr_t> code{0};  // 0: empty
    std::atomic<uintptr_t> linetable{0};
  };
  static size_t index(const LineKey& key);

  Slot slots_[kSlots];
};

}  // namespace gpumemtrace::interpose::python
