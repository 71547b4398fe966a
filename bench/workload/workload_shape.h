// The two allocation patterns the capture benchmark runs, written once for any allocator so that the
// CUDA workload (traced by gpumemtrace) and the malloc workload (traced by heaptrack) have the same shape:
//
// - loop:  `pairs` allocate/free pairs from one call stack `depth` frames deep (the repetitive loop of
//          docs/benchmarks.md), sizes cycling through 16 values 8 bytes apart (4100–4220: one 512-byte rounding
//          class of the simulated device, so the freed block comes back). With several threads, the pairs
//          are split between them and they all run at once.
// - loop-sizes: the same with sizes cycling through 1, 2, ... 16 KiB: consecutive allocations land at
//          different addresses.
// - mixed: `pairs` allocations from 16 call sites × 16 stack depths around `depth`, random sizes (256 of
//          them, 256 B to 64 KiB), into 4096 slots; an occupied slot is freed first, so about 4096 stay live
//          and frees come in random order. Everything left is freed at the end. (With sizes drawn from 65,536
//          values, heaptrack_interpret grew past 16 GiB on 10 M events, so the sizes are coarser.)
//
// Both make exactly 2 × pairs events (allocations plus frees). Allocator: void* allocate(size_t),
// void release(void*).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

#include "bench/workload/workload_options.h"

namespace gpumemtrace::bench {

// xorshift64*: deterministic, so every run and both tools see the same sizes and slots.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull | 1) {}
  uint64_t next() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return state_ * 0x2545F4914F6CDD1Dull;
  }

 private:
  uint64_t state_;
};

// Calls `leaf` from `depth` nested frames of this function (never inlined, never a tail call).
template <typename Leaf>
__attribute__((noinline)) void descend(unsigned depth, Leaf& leaf) {
  if (depth <= 1) {
    leaf();
  } else {
    descend(depth - 1, leaf);
  }
  asm volatile("" ::: "memory");  // work after the call keeps it a real frame
}

// Keeps the compiler from removing an allocation whose pointer is never used.
inline void keep(void* p) { asm volatile("" : : "r"(p) : "memory"); }

template <typename Allocator>
void run_loop(Allocator& allocator, uint64_t pairs, unsigned depth, size_t base_size, size_t size_step) {
  auto leaf = [&] {
    for (uint64_t i = 0; i < pairs; ++i) {
      void* p = allocator.allocate(base_size + size_step * (i % 16));
      keep(p);
      allocator.release(p);
    }
  };
  descend(depth, leaf);
}

// One of 16 distinct call sites: each instantiation is its own function with its own return address.
template <typename Allocator, int Site>
__attribute__((noinline)) void* allocate_at_site(Allocator& allocator, size_t size) {
  void* p = allocator.allocate(size);
  keep(p);
  return p;
}

template <typename Allocator, int... Sites>
constexpr auto site_table(std::integer_sequence<int, Sites...>) {
  return std::array<void* (*)(Allocator&, size_t), sizeof...(Sites)>{&allocate_at_site<Allocator, Sites>...};
}

// One allocation of the mixed shape, drawn from one random number (the trace generator draws the same).
struct MixedStep {
  static constexpr size_t kSlots = 4096;
  static constexpr unsigned kSites = 16;
  static constexpr unsigned kDepths = 16;

  explicit MixedStep(uint64_t r)
      : slot(r % kSlots), site((r >> 12) % kSites), depth_offset((r >> 16) % kDepths),
        size(256 * (1 + (r >> 20) % 256)) {}
  size_t slot;             // freed first if occupied
  unsigned site;           // which of the call sites allocates
  unsigned depth_offset;   // how many frames deeper than the shallowest depth
  size_t size;
};

template <typename Allocator>
void run_mixed(Allocator& allocator, uint64_t pairs, unsigned depth, uint64_t seed) {
  constexpr auto kSites = site_table<Allocator>(std::make_integer_sequence<int, MixedStep::kSites>{});
  std::vector<void*> slots(MixedStep::kSlots, nullptr);
  Random random(seed);
  unsigned lowest = depth > 8 ? depth - 8 : 1;
  for (uint64_t i = 0; i < pairs; ++i) {
    MixedStep step(random.next());
    void*& slot = slots[step.slot];
    if (slot) allocator.release(slot);
    auto site = kSites[step.site];
    auto leaf = [&] { slot = site(allocator, step.size); };
    descend(lowest + step.depth_offset, leaf);
  }
  for (void* p : slots) {
    if (p) allocator.release(p);
  }
}

// Runs the chosen shape; `make_allocator()` gives each thread its allocator.
template <typename MakeAllocator>
void run_workload(const WorkloadOptions& options, MakeAllocator&& make_allocator) {
  auto work = [&](uint64_t pairs, uint64_t seed) {
    auto allocator = make_allocator();
    if (options.shape == "mixed") {
      run_mixed(allocator, pairs, options.depth, seed);
    } else if (options.shape == "loop-sizes") {
      run_loop(allocator, pairs, options.depth, 1024, 1024);
    } else {
      run_loop(allocator, pairs, options.depth, 4100, 8);
    }
  };
  if (options.threads <= 1) {
    work(options.pairs, options.seed);
    return;
  }
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < options.threads; ++t) {
    uint64_t share = options.pairs / options.threads + (t < options.pairs % options.threads ? 1 : 0);
    threads.emplace_back(work, share, options.seed + t);
  }
  for (auto& thread : threads) thread.join();
}

}  // namespace gpumemtrace::bench
