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
//
// Streaming (a PickleListSink): the items of the lists the sink takes are handed to it as they are appended
// instead of being kept, and after each batch (MARK ... APPENDS) the values only those items used are
// forgotten, so that a list of millions of records does not hold millions of values. What the memo keeps
// (but the items themselves) and what the sink names stays, renumbered. A batch whose values something older
// than it refers to (an append to an older container inside it) is taken but not forgotten.
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

class Pickle;

// Takes the items of some lists as they are appended (see above).
class PickleListSink {
 public:
  using Id = uint32_t;
  virtual ~PickleListSink() = default;
  // Whether it takes the items appended to `list` now; `below` is the stack under the list, top last.
  virtual bool takes(const Pickle& pickle, std::span<const Id> below, Id list) = 0;
  // One item appended to a list it takes: it reads what it needs of the item now, and adds to `keep` the
  // values it will read later.
  virtual void take(const Pickle& pickle, Id list, Id item, std::vector<Id>& keep) = 0;
  // The values from `first` on were renumbered (`renumbered[id - first]`) after the items taken since the
  // last call: the ids it kept from them change so.
  virtual void renumber(Id first, std::span<const Id> renumbered) = 0;
  // The pickle is read up to byte `offset`, told after each batch of items taken: a reader of a mapped file
  // may let go of the pages behind it.
  virtual void read_to(uint64_t /*offset*/) {}
};

class Pickle {
 public:
  using Id = uint32_t;  // a value's index

  // Reads the whole pickle up to its STOP opcode. Throws PickleError. `bytes` must outlive the Pickle.
  explicit Pickle(std::span<const uint8_t> bytes, PickleListSink* sink = nullptr);

  Id root() const { return root_; }
  const PickleValue& operator[](Id id) const { return values_[id]; }
  size_t size() const { return values_.size(); }
  // The items of a List or Tuple; a Dict's keys and values, alternating.
  std::span<const Id> items(const PickleValue& value) const {
    const Container& container = containers_[value.payload];
    return {items_.data() + container.start, container.size};
  }
  std::string_view text(const PickleValue& value) const {
    return {reinterpret_cast<const char*>(bytes_.data()) + value.payload, value.length};
  }
  double real(const PickleValue& value) const;
  // The number of items of every container together, and of values, those a sink took and the values
  // forgotten after them included: how much there is to walk.
  uint64_t total_items() const { return total_items_; }
  uint64_t total_values() const { return total_values_; }

 private:
  std::span<const uint8_t> bytes_;
  std::vector<PickleValue> values_;
  // The containers' items, each container's together in items_ (millions of small dicts are not millions of
  // allocations): one that grows where it cannot moves to the end, leaving its old place unused.
  struct Container {
    uint64_t start = 0;
    uint32_t size = 0;
    uint32_t capacity = 0;
  };
  std::vector<Container> containers_;
  std::vector<Id> items_;
  uint64_t total_items_ = 0;
  uint64_t total_values_ = 0;
  Id root_ = 0;

  friend class PickleMachine;
};

// True when the bytes start as a pickle of protocol 2 or later does (PROTO and its version).
bool looks_like_pickle(std::span<const uint8_t> bytes);

}  // namespace gpumemtrace::pytorch
