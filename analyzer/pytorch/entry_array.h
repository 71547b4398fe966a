// A growing array of trivially copyable items that grows with realloc, so that glibc moves a large one by
// remapping its pages (mremap) instead of copying it: a snapshot's history of millions of entries never
// holds an old copy beside the new one while it grows, and the capacity past its end is address space, not
// memory. std::vector's growth held both (503 MB at the peak for a 191 MiB pickle, 168 MB of it the old
// copy; docs/benchmarks.md, "Large PyTorch snapshots"). A contiguous range: std::span takes it.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace gpumemtrace::pytorch {

template <typename T>
class EntryArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  EntryArray() = default;
  EntryArray(const EntryArray& other) { *this = other; }
  EntryArray(EntryArray&& other) noexcept { swap(other); }
  EntryArray& operator=(const EntryArray& other) {
    if (this != &other) {
      size_ = 0;
      reserve(other.size_);
      if (other.size_) std::memcpy(items_, other.items_, other.size_ * sizeof(T));
      size_ = other.size_;
    }
    return *this;
  }
  EntryArray& operator=(EntryArray&& other) noexcept {
    EntryArray gone(std::move(other));
    swap(gone);
    return *this;
  }
  ~EntryArray() { std::free(items_); }

  void push_back(const T& item) {
    if (size_ == capacity_) reserve(capacity_ < 16 ? 16 : capacity_ * 2);
    items_[size_++] = item;
  }
  void reserve(size_t capacity) {
    if (capacity <= capacity_) return;
    void* grown = std::realloc(items_, capacity * sizeof(T));
    if (!grown) throw std::bad_alloc();
    items_ = static_cast<T*>(grown);
    capacity_ = capacity;
  }

  void resize(size_t size) {
    reserve(size);
    for (size_t i = size_; i < size; ++i) items_[i] = T{};
    size_ = size;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return items_; }
  const T* data() const { return items_; }
  T* begin() { return items_; }
  T* end() { return items_ + size_; }
  const T* begin() const { return items_; }
  const T* end() const { return items_ + size_; }
  T& operator[](size_t i) { return items_[i]; }
  const T& operator[](size_t i) const { return items_[i]; }
  T& back() { return items_[size_ - 1]; }
  const T& back() const { return items_[size_ - 1]; }

 private:
  void swap(EntryArray& other) noexcept {
    std::swap(items_, other.items_);
    std::swap(size_, other.size_);
    std::swap(capacity_, other.capacity_);
  }

  T* items_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace gpumemtrace::pytorch
