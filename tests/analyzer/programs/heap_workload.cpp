// A program with its own pool allocator, no PyTorch: one cudaMalloc'd segment per device, blocks handed out from
// it one after the other (aligned to 512 B) and said with annotate.h, for `whatif` to replay them through the model
// of PyTorch's caching allocator (tests/analyzer/cli/whatif_command_test.cpp has the figures, computed by hand).
//   heap_workload [DEVICES]
//   device 0: heap "pool" of 64 MiB: a block of 1000 B, then ten of 6 MiB; all freed, the heap destroyed
//   device 1 (DEVICES 2): heap "pool" of 40 MiB: three blocks of 12 MiB; the heap reset, then destroyed
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "gpumemtrace/annotate.h"

namespace {
constexpr size_t kMiB = size_t{1} << 20;

class Pool {
 public:
  Pool(int device, size_t bytes) : size_(bytes) {
    if (cudaSetDevice(device) != cudaSuccess || cudaMalloc(&base_, bytes) != cudaSuccess) {
      std::printf("no memory for the pool on device %d\n", device);
      std::exit(3);
    }
    heap_ = gmt_heap_create("pool", device, base_, bytes);
  }
  void* take(size_t bytes) {
    size_t reserved = (bytes + 511) / 512 * 512;
    if (used_ + reserved > size_) std::exit(3);
    void* block = static_cast<char*>(base_) + used_;
    used_ += reserved;
    gmt_suballoc(heap_, block, bytes, reserved);  // every block handed out
    return block;
  }
  void give_back(void* block) { gmt_subfree(heap_, block); }
  void reset() { gmt_heap_reset(heap_); }
  ~Pool() {
    gmt_heap_destroy(heap_);
    cudaFree(base_);
  }

 private:
  void* base_ = nullptr;
  size_t size_ = 0;
  size_t used_ = 0;
  gmt_heap heap_ = 0;
};
}  // namespace

int main(int argc, char** argv) {
  int devices = argc > 1 ? std::atoi(argv[1]) : 1;
  {
    Pool pool(0, 64 * kMiB);
    std::vector<void*> blocks = {pool.take(1000)};
    for (int i = 0; i < 10; ++i) blocks.push_back(pool.take(6 * kMiB));  // the ten blocks of 6 MiB
    for (void* block : blocks) pool.give_back(block);
  }
  if (devices > 1) {
    Pool pool(1, 40 * kMiB);
    for (int i = 0; i < 3; ++i) pool.take(12 * kMiB);
    pool.reset();
  }
  return 0;
}
