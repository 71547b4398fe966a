// What the packer and the unpacker both know of a trace so far, from which they predict the next Alloc and
// Free the same way: the live allocations (a Free names one by its place in the live table), the blocks freed
// per size class (an allocation often gets one back), the stacks and sizes seen (coded by their first
// appearance) and each stack's last size. The packer asks where a value is; the unpacker what is at a place;
// both then tell the model what happened. The stack and size tables learn a value where it is coded: the
// packer's code_or_add, the unpacker's add of a value it read as new.
//
// Packing asks the model about every event, so each question is one hash probe or none: the per-stack and
// per-class tables are arrays below a bound, and nothing is looked up twice (docs/benchmarks.md).
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

  // The value's code (0: not in the table); a value not there is added, while the table has room.
  uint64_t code_or_add(uint64_t value) {
    if (values_.size() >= kLimit) {
      const uint64_t* index = index_.find(value);
      return index ? *index + 1 : 0;
    }
    auto [index, added] = index_.try_emplace(value, values_.size());
    if (!added) return *index + 1;
    values_.push_back(value);
    return 0;
  }
  std::optional<uint64_t> value_of(uint64_t code) const {
    if (code == 0 || code > values_.size()) return std::nullopt;
    return values_[code - 1];
  }
  void add(uint64_t value) { code_or_add(value); }

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
    if (stack < last_size_.size()) return last_size_[stack];
    const uint64_t* size = last_size_above_.find(stack);
    return size ? std::optional<uint64_t>(*size) : std::nullopt;
  }
  // Where an allocation of `size` at `address` is among the blocks freed in its class (0: the last freed),
  // or kNone.
  size_t freed_place(uint64_t size, uint64_t address) const {
    const FreedBlocks* freed = freed_in(class_of(size));
    if (!freed) return kNone;
    auto newest = freed->blocks.rbegin();
    auto place = std::find(newest, newest + static_cast<ptrdiff_t>(freed->visible), address);
    return place == newest + static_cast<ptrdiff_t>(freed->visible) ? kNone : static_cast<size_t>(place - newest);
  }
  std::optional<uint64_t> freed_at(uint64_t size, uint64_t place) const {
    const FreedBlocks* freed = freed_in(class_of(size));
    if (!freed || place >= freed->visible) return std::nullopt;
    return freed->blocks[freed->blocks.size() - 1 - place];
  }
  // Where a new block is expected when no freed one is taken: after the last one coded that way.
  uint64_t fresh_address() const { return fresh_address_; }

  std::optional<uint64_t> live_at(uint64_t place) const {
    if (place >= live_.size()) return std::nullopt;
    return live_[live_.size() - 1 - place].address;
  }
  uint64_t last_address() const { return last_address_; }

  // An allocation happened; `freed` is its freed_place (kNone: a new block).
  void on_alloc(uint32_t stack, uint64_t address, uint64_t size, size_t freed) {
    set_last_size(stack, size);
    if (freed != kNone) {
      FreedBlocks& blocks = freed_blocks(class_of(size));
      blocks.blocks.erase(blocks.blocks.end() - 1 - static_cast<ptrdiff_t>(freed));
      --blocks.visible;
    } else {
      fresh_address_ = address + class_of(size) * kClassBytes;
    }
    if (!slot_.try_emplace(address, live_.size()).second) {
      // An address allocated again without a free: the new allocation replaces it.
      remove_live(address);
      slot_.insert_or_assign(address, live_.size());
    }
    live_.push_back({address, size});
    last_address_ = address;
  }
  // A free happened. Returns the address's place among the live allocations before it (0: the last one
  // added), or kNone when it was not live.
  size_t on_free(uint64_t address) {
    last_address_ = address;
    size_t slot;
    if (!slot_.erase(address, &slot)) return kNone;
    size_t place = live_.size() - 1 - slot;
    FreedBlocks& freed = freed_blocks(class_of(live_[slot].size));
    // Up to twice the blocks kept, so that dropping the oldest moves them once per kFreedPerClass frees.
    if (freed.blocks.size() == 2 * kFreedPerClass)
      freed.blocks.erase(freed.blocks.begin(), freed.blocks.end() - static_cast<ptrdiff_t>(freed.visible));
    freed.blocks.push_back(address);
    freed.visible = std::min(freed.visible + 1, kFreedPerClass);
    take_out_live(slot);
    return place;
  }

 private:
  struct Live {
    uint64_t address;
    uint64_t size;
  };
  // A class's freed blocks, the newest at the end: the last `visible` (at most kFreedPerClass) are the ones
  // the model knows; those before them are dropped ones not yet moved out.
  struct FreedBlocks {
    std::vector<uint64_t> blocks;
    size_t visible = 0;
  };
  // Stack ids are dense (the trie's node ids) and size classes below this are the usual ones: both index
  // arrays; larger ones go to a hash map.
  static constexpr uint64_t kDenseLimit = uint64_t{1} << 16;

  static uint64_t class_of(uint64_t size) { return size / kClassBytes + (size % kClassBytes != 0); }

  void set_last_size(uint32_t stack, uint64_t size) {
    if (stack >= kDenseLimit) {
      last_size_above_.insert_or_assign(stack, size);
      return;
    }
    if (stack >= last_size_.size()) last_size_.resize(stack + 1);
    last_size_[stack] = size;
  }
  // The last entry takes the removed one's slot.
  void remove_live(uint64_t address) {
    size_t slot;
    if (slot_.erase(address, &slot)) take_out_live(slot);
  }
  // Takes out live_[slot], whose address has left slot_.
  void take_out_live(size_t slot) {
    if (slot != live_.size() - 1) {
      live_[slot] = live_.back();
      *slot_.find(live_[slot].address) = slot;
    }
    live_.pop_back();
  }
  // The class's blocks' index in freed_, or kNone.
  size_t freed_index(uint64_t size_class) const {
    if (size_class >= kDenseLimit) {
      const size_t* index = freed_index_above_.find(size_class);
      return index ? *index : kNone;
    }
    return size_class < freed_index_.size() ? freed_index_[size_class] : kNone;
  }
  const FreedBlocks* freed_in(uint64_t size_class) const {
    size_t index = freed_index(size_class);
    return index == kNone ? nullptr : &freed_[index];
  }
  FreedBlocks& freed_blocks(uint64_t size_class) {
    if (size_t index = freed_index(size_class); index != kNone) return freed_[index];
    if (size_class < kDenseLimit) {
      if (size_class >= freed_index_.size()) freed_index_.resize(size_class + 1, kNone);
      freed_index_[size_class] = freed_.size();
    } else {
      freed_index_above_.insert_or_assign(size_class, freed_.size());
    }
    return freed_.emplace_back();
  }

  std::vector<Live> live_;
  AddressMap<size_t> slot_;                         // live address -> its slot in live_
  std::vector<size_t> freed_index_;                 // size class below kDenseLimit -> its blocks' index, or kNone
  AddressMap<size_t> freed_index_above_;            // larger size classes -> their blocks' index in freed_
  std::vector<FreedBlocks> freed_;
  std::vector<std::optional<uint64_t>> last_size_;  // stack id below kDenseLimit -> its last size
  AddressMap<uint64_t> last_size_above_;            // larger stack ids -> their last size
  uint64_t fresh_address_ = 0;
  uint64_t last_address_ = 0;
};

}  // namespace gpumemtrace::packed
