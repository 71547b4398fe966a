// What the packer and the unpacker both know of a trace so far, from which they predict the next Alloc and
// Free the same way: the live allocations (a Free names one by its place in the live table), the blocks freed
// per size class (an allocation often gets one back), the stacks and sizes seen (coded by their first
// appearance) and each stack's last size. The packer asks where a value is; the unpacker what is at a place;
// both then tell the model what happened.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <unordered_map>
#include <vector>

namespace gpumemtrace::packed {

// Values numbered in order of first appearance: code 0 is "not in the table", code k the (k-1)-th value.
class SymbolTable {
 public:
  static constexpr size_t kLimit = size_t{1} << 20;  // later values stay uncoded: the table's memory is bounded

  uint64_t code_of(uint64_t value) const {
    auto it = index_.find(value);
    return it == index_.end() ? 0 : it->second + 1;
  }
  std::optional<uint64_t> value_of(uint64_t code) const {
    if (code == 0 || code > values_.size()) return std::nullopt;
    return values_[code - 1];
  }
  void add(uint64_t value) {
    if (values_.size() < kLimit && index_.try_emplace(value, values_.size()).second) values_.push_back(value);
  }

 private:
  std::unordered_map<uint64_t, uint64_t> index_;
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
    auto it = last_size_.find(stack);
    return it == last_size_.end() ? std::nullopt : std::optional<uint64_t>(it->second);
  }
  // Where an allocation of `size` at `address` is among the blocks freed in its class (0: the last freed),
  // or kNone.
  size_t freed_place(uint64_t size, uint64_t address) const {
    auto it = freed_.find(class_of(size));
    if (it == freed_.end()) return kNone;
    const std::vector<uint64_t>& blocks = it->second;
    for (size_t i = 0; i < blocks.size(); ++i)
      if (blocks[blocks.size() - 1 - i] == address) return i;
    return kNone;
  }
  std::optional<uint64_t> freed_at(uint64_t size, uint64_t place) const {
    auto it = freed_.find(class_of(size));
    if (it == freed_.end() || place >= it->second.size()) return std::nullopt;
    return it->second[it->second.size() - 1 - place];
  }
  // Where a new block is expected when no freed one is taken: after the last one coded that way.
  uint64_t fresh_address() const { return fresh_address_; }

  // A live allocation's place from the top of the live table (0: the last one added), or kNone.
  size_t live_place(uint64_t address) const {
    auto it = slot_.find(address);
    return it == slot_.end() ? kNone : live_.size() - 1 - it->second;
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
    last_size_[stack] = size;
    if (freed != kNone) {
      std::vector<uint64_t>& blocks = freed_[class_of(size)];
      blocks.erase(blocks.end() - 1 - static_cast<ptrdiff_t>(freed));
    } else {
      fresh_address_ = address + class_of(size) * kClassBytes;
    }
    remove_live(address);  // an address allocated again without a free: the new allocation replaces it
    slot_[address] = live_.size();
    live_.push_back({address, size});
    last_address_ = address;
  }
  void on_free(uint64_t address) {
    auto it = slot_.find(address);
    if (it != slot_.end()) {
      std::vector<uint64_t>& blocks = freed_[class_of(live_[it->second].size)];
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
    auto it = slot_.find(address);
    if (it == slot_.end()) return;
    size_t slot = it->second;
    slot_.erase(it);
    if (slot != live_.size() - 1) {
      live_[slot] = live_.back();
      slot_[live_[slot].address] = slot;
    }
    live_.pop_back();
  }

  std::vector<Live> live_;
  std::unordered_map<uint64_t, size_t> slot_;                    // live address -> its slot in live_
  std::unordered_map<uint64_t, std::vector<uint64_t>> freed_;    // size class -> freed addresses, last at the end
  std::unordered_map<uint32_t, uint64_t> last_size_;             // stack id -> its last size
  uint64_t fresh_address_ = 0;
  uint64_t last_address_ = 0;
};

}  // namespace gpumemtrace::packed
