// A hash map from a 64-bit key (an address, a handle) to a small value, with open addressing and linear
// probing: a lookup is one probe run, and nothing is allocated except when the table doubles at 3/4 load,
// so replaying an event costs O(1) and the table's size follows the live set, not the number of events.
// Erasing shifts the following entries back instead of leaving tombstones, so churn never slows lookups.
// A free slot holds the key kEmpty, so a slot is just key and value (24 bytes for a live allocation, where a
// flag would pad it to 32): the table of a large live set then stays in cache longer. The one entry whose
// key is kEmpty lives beside the table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace gpumemtrace {

template <typename Value>
class AddressMap {
 public:
  AddressMap() : slots_(kInitialCapacity) {}

  size_t size() const { return size_ + (empty_key_value_ ? 1 : 0); }

  Value* find(uint64_t key) {
    if (key == kEmpty) return empty_key_value_ ? &*empty_key_value_ : nullptr;
    for (size_t i = home(key);; i = next(i)) {
      Slot& slot = slots_[i];
      if (slot.key == key) return &slot.value;
      if (slot.key == kEmpty) return nullptr;
    }
  }
  const Value* find(uint64_t key) const { return const_cast<AddressMap*>(this)->find(key); }

  // Inserts the key, or overwrites its value. Returns false when the key was already there.
  bool insert_or_assign(uint64_t key, const Value& value) {
    auto [slot, added] = try_emplace(key, value);
    if (!added) *slot = value;
    return added;
  }

  // The key's value and false when the key is there (the value left unchanged); else the key inserted with
  // `value`, and true. One probe run where find and then insert_or_assign take two. The pointer lasts until
  // the next insertion.
  [[gnu::always_inline]] std::pair<Value*, bool> try_emplace(uint64_t key, const Value& value) {
    if (key == kEmpty) {
      bool added = !empty_key_value_;
      if (added) empty_key_value_ = value;
      return {&*empty_key_value_, added};
    }
    if ((size_ + 1) * 4 > (mask_ + 1) * 3) grow();
    for (size_t i = home(key);; i = next(i)) {
      Slot& slot = slots_[i];
      if (slot.key == key) return {&slot.value, false};
      if (slot.key == kEmpty) {
        slot = Slot{key, value};
        ++size_;
        return {&slot.value, true};
      }
    }
  }

  // Removes the key; its value goes to *out when given. False when the key is not there.
  bool erase(uint64_t key, Value* out = nullptr) {
    if (key == kEmpty) {
      if (!empty_key_value_) return false;
      if (out) *out = std::move(*empty_key_value_);
      empty_key_value_.reset();
      return true;
    }
    size_t i = home(key);
    for (;; i = next(i)) {
      if (slots_[i].key == key) break;
      if (slots_[i].key == kEmpty) return false;
    }
    if (out) *out = std::move(slots_[i].value);
    // Backward shift: move later entries of the run into the hole unless that would put them before home.
    for (size_t hole = i, j = next(i);; j = next(j)) {
      if (slots_[j].key == kEmpty) {
        slots_[hole].key = kEmpty;
        break;
      }
      size_t want = home(slots_[j].key);
      bool movable = hole <= j ? (want <= hole || want > j) : (want <= hole && want > j);
      if (movable) {
        slots_[hole] = std::move(slots_[j]);
        hole = j;
      }
    }
    --size_;
    return true;
  }

  template <typename Visit>
  void for_each(Visit visit) const {
    for (const Slot& slot : slots_)
      if (slot.key != kEmpty) visit(slot.key, slot.value);
    if (empty_key_value_) visit(kEmpty, *empty_key_value_);
  }

 private:
  static constexpr size_t kInitialCapacity = 64;  // 2^6
  static constexpr uint64_t kEmpty = UINT64_MAX;
  struct Slot {
    uint64_t key = kEmpty;
    Value value{};
  };

  // Addresses are aligned and clustered: Fibonacci hashing takes the top bits of the product, which all
  // the key's bits reach.
  size_t home(uint64_t key) const { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ULL) >> shift_); }
  size_t next(size_t i) const { return (i + 1) & mask_; }

  [[gnu::noinline, gnu::cold]] void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    --shift_;
    size_ = 0;
    for (Slot& slot : old)
      if (slot.key != kEmpty) insert_or_assign(slot.key, slot.value);
  }

  std::vector<Slot> slots_;
  size_t mask_ = kInitialCapacity - 1;
  unsigned shift_ = 64 - 6;  // 64 - log2(capacity)
  size_t size_ = 0;  // in slots_
  std::optional<Value> empty_key_value_;
};

}  // namespace gpumemtrace
