// NVTX ranges with NVIDIA's own header-only NVTX3, on the main thread and on two workers that take turns
// (a barrier between steps), so that each thread's phases must be told apart. Every allocation's size says
// which phase path it was made in (nvtx_phases_test.cpp has the table). Worker 1 enters "worker" first, so
// that its instance is the first one.
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include <barrier>
#include <cstdio>
#include <latch>
#include <thread>
#include <vector>

#include "tests/support/program_check.h"

namespace {

std::vector<void*> g_kept;  // freed at the end, so that no address is reused while the phases change

void alloc(size_t size) {
  void* ptr = nullptr;
  CHECK_OK(cudaMalloc(&ptr, size));
  g_kept.push_back(ptr);
}

void worker(int t, std::barrier<>& turns, std::latch& first_in, nvtxDomainHandle_t net, nvtxStringHandle_t layer) {
  std::vector<void*> mine;
  auto step = [&](size_t size) {
    turns.arrive_and_wait();
    void* ptr = nullptr;
    CHECK_OK(cudaMalloc(&ptr, size));
    mine.push_back(ptr);
    turns.arrive_and_wait();
  };
  size_t base = 10000 * static_cast<size_t>(t);
  if (t != 1) first_in.wait();
  nvtxRangePushA("worker");
  if (t == 1) first_in.count_down();
  nvtxRangePushA(t == 1 ? "step" : "other-step");
  step(base + 1);
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attributes.message.registered = layer;
  nvtxDomainRangePushEx(net, &attributes);
  step(base + 2);
  nvtxDomainRangePop(net);
  nvtxRangePop();
  step(base + 3);
  nvtxRangePop();
  step(base + 4);
  nvtxRangePushW(L"wide-\u00e9");
  step(base + 5);
  nvtxRangePop();
  for (void* ptr : mine) CHECK_OK(cudaFree(ptr));
}

}  // namespace

int main() {
  CHECK_OK(cudaFree(nullptr));
  alloc(100);  // no phase
  nvtxRangeId_t epoch = nvtxRangeStartA("epoch");
  nvtxRangePushA("main");
  alloc(101);
  nvtxRangePushA("setup");
  alloc(102);
  nvtxRangePop();
  alloc(103);

  nvtxDomainHandle_t net = nvtxDomainCreateA("net");
  nvtxStringHandle_t layer = nvtxDomainRegisterStringA(net, "layer");
  std::barrier turns(2);
  std::latch first_in(1);
  std::thread a(worker, 1, std::ref(turns), std::ref(first_in), net, layer);
  std::thread b(worker, 2, std::ref(turns), std::ref(first_in), net, layer);
  a.join();
  b.join();

  nvtxRangePop();
  nvtxRangeEnd(epoch);
  alloc(104);  // no phase again
  for (void* ptr : g_kept) CHECK_OK(cudaFree(ptr));
  std::printf("done\n");
  return 0;
}
