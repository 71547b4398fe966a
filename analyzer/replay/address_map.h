// A hash map from a 64-bit key (an address, a handle) to a small value, with open addressing and linear
// probing: a lookup is one probe run, and nothing is allocated except when the table doubles at 3/4 load,
// so replaying an event costs O(1) and the table's size follows the live set, not the number of events.
// Erasing shifts the following entries back instead of leaving tombstones, so churn never slows lookups.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace gpumemtrace::replay {

template <typename Value>
class AddressMap {
 public:
  AddressMap() : slots_(kInitialCapacity) {}

  size_t size() const { return size_; }

  Value* find(uint64_t key) {
    for (size_t i = home(key);; i = next(i)) {
      Slot& slot = slots_[i];
      if (!slot.used) return nullptr;
      if (slot.key == key) return &slot.value;
    }
  }

  // Inserts the key, or overwrites its value. Returns false when the key was already there.
  bool insert_or_assign(uint64_t key, const Value& value) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    for (size_t i = home(key);; i = next(i)) {
      Slot& slot = slots_[i];
      if (!slot.used) {
        slot = Slot{key, value, true};
        ++size_;
        return true;
      }
      if (slot.key == key) {
        slot.value = value;
        return false;
      }
    }
  }

  // Removes the key; its value goes to *out when given. False when the key is not there.
  bool erase(uint64_t key, Value* out = nullptr) {
    size_t i = home(key);
    for (;; i = next(i)) {
      if (!slots_[i].used) return false;
      if (slots_[i].key == key) break;
    }
    if (out) *out = std::move(slots_[i].value);
    // Backward shift: move later entries of the run into the hole unless that would put them before home.
    for (size_t hole = i, j = next(i);; j = next(j)) {
      if (!slots_[j].used) {
        slots_[hole].used = false;
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
      if (slot.used) visit(slot.key, slot.value);
  }

 private:
  static constexpr size_t kInitialCapacity = 64;  // a power of two
  struct Slot {
    uint64_t key = 0;
    Value value{};
    bool used = false;
  };

  // Addresses are aligned and clustered: mix all bits into the low ones the mask keeps.
  size_t home(uint64_t key) const {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return static_cast<size_t>(key) & (slots_.size() - 1);
  }
  size_t next(size_t i) const { return (i + 1) & (slots_.size() - 1); }

  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    size_ = 0;
    for (Slot& slot : old)
      if (slot.used) insert_or_assign(slot.key, slot.value);
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace gpumemtrace::replay
