// Steady allocation for the load test (scripts/load.sh) and the resident-set test: cudaMalloc/cudaFree as
// fast as the device answers, from 4 call sites into 4096 slots (a slot's allocation is freed when the slot
// comes round again, so the live set stays near 4096 allocations), sizes 256 B to 64 KiB, for argv[1]
// seconds (or until SIGUSR1) or, with "--pairs N", N pairs. Then everything is freed and it prints the pairs made, its
// resident set (RssAnon and RssFile of /proc/self/status, KiB) after the first call and at the end, its
// peak resident set (VmHWM) and the CPU time it used.
#include <cuda_runtime_api.h>
#include <signal.h>
#include <sys/resource.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/program_check.h"

namespace {

volatile sig_atomic_t stop = 0;

struct Resident {
  long anon_kib = -1;
  long file_kib = -1;
  long peak_kib = -1;
};

Resident resident() {
  Resident r;
  std::ifstream status("/proc/self/status");
  std::string key;
  long value = 0;
  while (status >> key) {
    if (key == "RssAnon:" && status >> value) r.anon_kib = value;
    if (key == "RssFile:" && status >> value) r.file_kib = value;
    if (key == "VmHWM:" && status >> value) r.peak_kib = value;
  }
  return r;
}

template <int Site>
__attribute__((noinline)) void* allocate_at(size_t size) {
  void* p = nullptr;
  CHECK_OK(cudaMalloc(&p, size));
  asm volatile("" : : "r"(p) : "memory");
  return p;
}

constexpr std::array<void* (*)(size_t), 4> kSites = {&allocate_at<0>, &allocate_at<1>, &allocate_at<2>,
                                                     &allocate_at<3>};

}  // namespace

int main(int argc, char** argv) {
  bool by_count = argc == 3 && std::strcmp(argv[1], "--pairs") == 0;
  if (argc != 2 && !by_count) {
    std::fprintf(stderr, "usage: %s SECONDS | --pairs N\n", argv[0]);
    return 2;
  }
  uint64_t limit = std::strtoull(argv[argc - 1], nullptr, 10);
  signal(SIGUSR1, [](int) { stop = 1; });
  CHECK_OK(cudaFree(nullptr));
  Resident start = resident();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(limit);
  std::vector<void*> slots(4096, nullptr);
  uint64_t state = 0x9E3779B97F4A7C15ull;
  uint64_t pairs = 0;
  for (;;) {
    if (by_count ? pairs >= limit : (pairs % 4096 == 0 && (stop || std::chrono::steady_clock::now() >= deadline)))
      break;
    state ^= state >> 12;  // xorshift64*
    state ^= state << 25;
    state ^= state >> 27;
    uint64_t r = state * 0x2545F4914F6CDD1Dull;
    void*& slot = slots[r % slots.size()];
    if (slot) CHECK_OK(cudaFree(slot));
    slot = kSites[(r >> 12) % kSites.size()](256 * (1 + (r >> 16) % 256));
    ++pairs;
  }
  for (void* p : slots)
    if (p) CHECK_OK(cudaFree(p));
  Resident end = resident();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](timeval t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  std::printf("pairs %llu\nrss_anon_kib %ld %ld\nrss_file_kib %ld %ld\nrss_peak_kib %ld\ncpu_seconds %.1f\n",
              static_cast<unsigned long long>(pairs), start.anon_kib, end.anon_kib, start.file_kib, end.file_kib,
              end.peak_kib, seconds(usage.ru_utime) + seconds(usage.ru_stime));
  return 0;
}
