// What the packer and the unpacker both know of a trace so far, from which they predict the next Alloc and
// Free the same way: the live allocations (a Free names one by its place in the live table), the blocks freed
// per size class (an allocation often gets one back), the stacks and sizes seen (coded by their first
// appearance) and each stack's last size. The packer asks where a value is; the unpacker what is at a place;
// both then tell the model what happened.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "common/address_map.h"

namespace gpumemtrace::packed {

// Values numbered in order of first appearance: code 0 is "not in the table", code k the (k-1)-th value.
class SymbolTable {
 public:
  static constexpr size_t kLimit = size_t{1} << 20;  // later values stay uncoded: the table's memory is bounded

  uint64_t code_of(uint64_t value) const {
    const uint64_t* index = index_.find(value);
    return index ? *index + 1 : 0;
  }
  std::optional<uint64_t> value_of(uint64_t code) const {
    if (code == 0 || code > values_.size()) return std::nullopt;
    return values_[code - 1];
  }
  void add(uint64_t value) {
    if (values_.size() < kLimit && !index_.find(value)) {
      index_.insert_or_assign(value, values_.size());
      values_.push_back(value);
    }
  }

 private:
  AddressMap<uint64_t> index_;
  std::vector<uint64_t> values_;
};

class PackModel {
 public:
  static constexpr uint64_t kClassBytes = 512;  // cudaMalloc's and PyTorch's rounding: a class of sizes shares blocks
  static constexpr size_t kFreedPerClass = 64;  // the most recent freed blocks kept per class
  static constexpr size_t kNone = std::numeric_limits<size_t>::max();

  SymbolTable stacks;
  SymbolTable sizes;

  // The stack's last allocated size, if it allocated before.
  std::optional<uint64_t> last_size(uint32_t stack) const {
    const uint64_t* size = last_size_.find(stack);
    return size ? std::optional<uint64_t>(*size) : std::nullopt;
  }
  // Where an allocation of `size` at `address` is among the blocks freed in its class (0: the last freed),
  // or kNone.
  size_t freed_place(uint64_t size, uint64_t address) const {
    const std::vector<uint64_t>* found = freed_in(class_of(size));
    if (!found) return kNone;
    auto place = std::find(found->rbegin(), found->rend(), address);
    return place == found->rend() ? kNone : static_cast<size_t>(place - found->rbegin());
  }
  std::optional<uint64_t> freed_at(uint64_t size, uint64_t place) const {
    const std::vector<uint64_t>* blocks = freed_in(class_of(size));
    if (!blocks || place >= blocks->size()) return std::nullopt;
    return (*blocks)[blocks->size() - 1 - place];
  }
  // Where a new block is expected when no freed one is taken: after the last one coded that way.
  uint64_t fresh_address() const { return fresh_address_; }

  // A live allocation's place from the top of the live table (0: the last one added), or kNone.
  size_t live_place(uint64_t address) const {
    const size_t* slot = slot_.find(address);
    return slot ? live_.size() - 1 - *slot : kNone;
  }
  std::optional<uint64_t> live_at(uint64_t place) const {
    if (place >= live_.size()) return std::nullopt;
    return live_[live_.size() - 1 - place].address;
  }
  uint64_t last_address() const { return last_address_; }

  // An allocation happened; `freed` is its freed_place (kNone: a new block).
  void on_alloc(uint32_t stack, uint64_t address, uint64_t size, size_t freed) {
    stacks.add(stack);
    sizes.add(size);
    last_size_.insert_or_assign(stack, size);
    if (freed != kNone) {
      std::vector<uint64_t>& blocks = freed_blocks(class_of(size));
      blocks.erase(blocks.end() - 1 - static_cast<ptrdiff_t>(freed));
    } else {
      fresh_address_ = address + class_of(size) * kClassBytes;
    }
    remove_live(address);  // an address allocated again without a free: the new allocation replaces it
    slot_.insert_or_assign(address, live_.size());
    live_.push_back({address, size});
    last_address_ = address;
  }
  void on_free(uint64_t address) {
    if (const size_t* slot = slot_.find(address)) {
      std::vector<uint64_t>& blocks = freed_blocks(class_of(live_[*slot].size));
      if (blocks.size() == kFreedPerClass) blocks.erase(blocks.begin());
      blocks.push_back(address);
      remove_live(address);
    }
    last_address_ = address;
  }

 private:
  struct Live {
    uint64_t address;
    uint64_t size;
  };
  static uint64_t class_of(uint64_t size) { return size / kClassBytes + (size % kClassBytes != 0); }
  // The last entry takes the removed one's slot.
  void remove_live(uint64_t address) {
    size_t slot;
    if (!slot_.erase(address, &slot)) return;
    if (slot != live_.size() - 1) {
      live_[slot] = live_.back();
      slot_.insert_or_assign(live_[slot].address, slot);
    }
    live_.pop_back();
  }
  const std::vector<uint64_t>* freed_in(uint64_t size_class) const {
    const size_t* index = freed_index_.find(size_class);
    return index ? &freed_[*index] : nullptr;
  }
  std::vector<uint64_t>& freed_blocks(uint64_t size_class) {
    if (const size_t* index = freed_index_.find(size_class)) return freed_[*index];
    freed_index_.insert_or_assign(size_class, freed_.size());
    return freed_.emplace_back();
  }

  std::vector<Live> live_;
  AddressMap<size_t> slot_;                   // live address -> its slot in live_
  AddressMap<size_t> freed_index_;            // size class -> its blocks in freed_
  std::vector<std::vector<uint64_t>> freed_;  // freed addresses of a class, last at the end
  AddressMap<uint64_t> last_size_;            // stack id -> its last size
  uint64_t fresh_address_ = 0;
  uint64_t last_address_ = 0;
};

}  // namespace gpumemtrace::packed
