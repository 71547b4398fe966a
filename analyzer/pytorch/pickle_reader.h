// A reader of Python pickles (protocols 2 to 5) that accepts plain data only: dicts, lists, tuples, str,
// bytes, int (of any size), float, bool and None, with the memo and the framing of protocol 4. Every opcode
// that would import or call code (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, NEWOBJ_EX, EXT1/2/4,
// PERSID, BINPERSID) is refused with its name and byte offset, and so is any opcode outside that set: a pickle
// is read as data, never run. PyTorch's memory snapshots (torch.cuda.memory._dump_snapshot) are such pickles.
//
// Bounded on hostile input: no recursion, one value per opcode at most, every length checked against the
// bytes that remain. Objects the pickle memoizes and refers to again are one value, as in Python, so a list
// may hold itself: whoever walks the values bounds the walk (as SnapshotReader does). Memory: about 40 bytes
// per value at most, one value per opcode.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gpumemtrace::pytorch {

// Why bytes are not a pickle this reader accepts: "pickle opcode GLOBAL (0x63) at byte offset 2 imports ...".
class PickleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class PickleKind : uint8_t { None, Bool, Int, BigInt, Float, Str, Bytes, List, Tuple, Dict };

// "dict", "list", ...: what messages call a kind.
std::string_view pickle_kind_name(PickleKind kind);

// One value. Str and Bytes are views into the pickle's bytes; List, Tuple and Dict hold their items in the
// Pickle's containers (a Dict as key, value, key, value, ...).
struct PickleValue {
  PickleKind kind = PickleKind::None;
  bool negative = false;  // Int
  uint32_t length = 0;    // Str, Bytes
  uint64_t payload = 0;   // Bool: 0 or 1; Int: the magnitude; Float: the bits of the double; Str, Bytes: the
                          // offset in the bytes; List, Tuple, Dict: the index of its container
};

class Pickle {
 public:
  using Id = uint32_t;  // a value's index

  // Reads the whole pickle up to its STOP opcode. Throws PickleError. `bytes` must outlive the Pickle.
  explicit Pickle(std::span<const uint8_t> bytes);

  Id root() const { return root_; }
  const PickleValue& operator[](Id id) const { return values_[id]; }
  size_t size() const { return values_.size(); }
  // The items of a List or Tuple; a Dict's keys and values, alternating.
  std::span<const Id> items(const PickleValue& value) const { return containers_[value.payload]; }
  std::string_view text(const PickleValue& value) const {
    return {reinterpret_cast<const char*>(bytes_.data()) + value.payload, value.length};
  }
  double real(const PickleValue& value) const;
  // The number of items of every container together: how much there is to walk.
  uint64_t total_items() const { return total_items_; }

 private:
  std::span<const uint8_t> bytes_;
  std::vector<PickleValue> values_;
  std::vector<std::vector<Id>> containers_;
  uint64_t total_items_ = 0;
  Id root_ = 0;

  friend class PickleMachine;
};

// True when the bytes start as a pickle of protocol 2 or later does (PROTO and its version).
bool looks_like_pickle(std::span<const uint8_t> bytes);

}  // namespace gpumemtrace::pytorch
