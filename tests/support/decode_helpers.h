// Decoding helpers for the reader's tests: read a whole trace into a list, a trace with every record, and
// one with Python frames.
#pragma once

#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "trace/reader/reader.h"
#include "tests/support/trace_builder.h"

namespace gpumemtrace::test {

struct Decoded {
  std::unique_ptr<trace::Reader> reader;  // kept: records point into it
  std::vector<trace::Record> records;
  std::vector<uint64_t> ends;  // the byte offset just past each record
};

// The record as the type the test expects it to be; another type is an error that names it.
template <typename T>
const T& as(const trace::Record& record) {
  const T* out = std::get_if<T>(&record);
  if (!out) throw std::runtime_error("unexpected record " + std::string(trace::record_name(record)));
  return *out;
}

// The bytes must outlive the result.
inline Decoded decode_all(std::span<const uint8_t> bytes) {
  Decoded out;
  out.reader = std::make_unique<trace::Reader>(bytes);
  while (const trace::Record* record = out.reader->next()) {
    out.records.push_back(*record);
    out.ends.push_back(out.reader->stop_offset());
  }
  return out;
}

// One record of each type (the reader's decoding test checks that none is missing), in an order the reader
// accepts, its strings static. Events happen at time 0 on thread 1.
inline std::vector<trace::Record> one_record_of_each_type() {
  using format::Api;
  static constexpr std::string_view argv[] = {"python3", "-v"};
  trace::Event at{0, 1};  // no time passes; thread 1 after its ThreadNew
  return {
      trace::Process{4242, 1, 17, 64, -1, "node7", "/usr/bin/python3", argv},
      trace::ModulesBegin{3},
      trace::Module{0x400000, 0x400000, 0x480000, "/usr/bin/python3", "\x01\x02"},
      trace::ThreadNew{1, 4242, "main"},
      trace::StackNode{1, 0, 0x401000},
      trace::PythonCode{0, "/srv/train.py", "Trainer.step", 50},
      trace::StackNode{2, 1, format::python_frame(0, 57)},
      trace::NativeFunction{0, "at::empty_cuda(c10::ArrayRef<long>)", "EmptyTensor.cpp"},
      trace::StackNode{3, 2, format::named_frame(0, 12)},
      trace::Alloc{at, Api::cudaMallocFromPoolAsync, 2, 0x7f0000000000, 4096, 1, 0x5, 0x6},
      trace::Free{at, Api::cudaFreeAsync, 0x7f0000000000, 0x5},
      trace::AllocFailed{at, Api::cuMemAlloc, 0, uint64_t{1} << 40, 1, format::kErrorOutOfMemory, 5, 6},
      trace::FreeFailed{at, Api::cuMemFree, 0x10, 1},
      trace::MemMap{at, 0x8000, 4096, 9, 128},
      trace::MemUnmap{{at, 0x8000, 4096}},
      trace::AddressReserve{{at, 0x8000, 1 << 21}},
      trace::AddressFree{{at, 0x8000, 1 << 21}},
      trace::PoolCreate{{at, 0x77, 1}},
      trace::PoolDestroy{{at, 0x77, trace::kNoDevice}},
      trace::PoolTrim{at, 0x77, 1, 2, 3},
      trace::PoolUsage{at, 0x77, 0, 4, 5},
      trace::Source{1},
      trace::PoolThreshold{at, 0x77, 8},
      trace::Source{0},
      trace::MemInfo{at, trace::kNoDevice, 6, 7},
      trace::TorchHook{at, "2.6.0+cu126", 100000, 2},
      trace::TorchSnapshot{at, 1, 2, 5000, 1700000000123456789, "run.trace.torch-oom-2.pickle", 0, 30 << 20, 80ull << 30, 7},
      trace::TorchSnapshot{at, 0, 1, 6000, 1700000000223456789, "run.trace.torch-exit.pickle"},
      trace::DeviceState{at, 1, 0, "GPU-4d1b6a70-0000-4000-8000-000000000001", "00000000:01:00.0", 256 << 20, 1 << 30, 2},
      trace::DeviceProcess{4194401, 512 << 20, "python train.py"},
      trace::DeviceProcess{4194402, 256 << 20, "stale worker"},
      trace::Context{at, 1, 1, "GPU-4d1b6a70-0000-4000-8000-000000000001", 512 << 20, 480 << 20, 1 << 30},
      trace::Placement{-1, 1, ""},
      trace::Param{"batch", "32"},
      trace::Fork{99},
      trace::PhaseDomain{1, "net"},
      trace::PhaseName{0, 1, "forward"},
      trace::PhasePush{at, 0},
      trace::PhasePop{at, 1},
      trace::RangeStart{at, 7, 0},
      trace::RangeEnd{at, 7},
      trace::HeapCreate{at, 1, 0, 0x7f1000000000, 2 << 20, "small"},
      trace::SubAlloc{at, 1, 0x7f1000000200, 1000, 1024, 0},
      trace::SubName{at, 1, 0x7f1000000200, "activations"},
      trace::SubFreeRequested{at, 1, 0x7f1000000200},
      trace::SubFree{at, 1, 0x7f1000000200},
      trace::HeapReset{at, 1},
      trace::HeapDestroy{at, 1},
      trace::ThreadSwitch{1},
      trace::StacksReset{},
      trace::End{at, 14},
  };
}

// Every kind of record once at least, ending with End: what the truncation and bit-flip tests cut up.
inline TraceBuilder every_record_trace() {
  using format::Api;
  using format::Token;
  TraceBuilder b;
  b.process(4242, 1, 1'700'000'000'123'456'789, 64, 3, "node7", "/usr/bin/python3", {"python3", "train.py", "-v"});
  b.modules_begin(1);
  b.module(0x400000, 0x400000, 0x480000, "/usr/bin/python3", "\x12\x34\xab");
  b.module(0x7f0000000000, 0x7f0000001000, 0x7f0000090000, "/lib/libcuda.so.1", "");
  b.thread_new(1, 4242, "python3");
  b.stack_node(0, 0x401000).stack_node(1, 0x402000).stack_node(1, 0x403000);
  b.alloc(Api::cudaMalloc, 0, 0x7f1000000000, 1 << 20, 2, 1000);
  b.thread_new(2, 4250, "worker");
  b.alloc(Api::cudaMallocAsync, 1, 0x7f1000200000, 4096, 3, 10, 0x5000);
  b.alloc(Api::cuMemAllocFromPoolAsync, 1, 0x7f1000100000, 512, 3, 10, 0x5000, 0x6000);
  b.alloc(Api::cuMemHostAlloc, -1, 0x7e0000000000, 3 << 20, 1, 5);
  b.thread_switch(1);
  b.free(Api::cudaFree, 0x7f1000000000, 20);
  b.free(Api::cudaFreeAsync, 0x7f1000200000, 1, 0x5000);
  b.alloc_failed(Api::cudaMalloc, 0, uint64_t{80} << 30, 2, 2, 7, uint64_t{1} << 30, uint64_t{16} << 30);
  b.alloc_failed(Api::cuMemAlloc, 0, 12, 0, 1, 1);
  b.free_failed(Api::cuMemFree, 0xdead000, 1, 2);
  b.mem_map(0x7f2000000000, 2 << 20, 7, 0, 3);
  b.range(Token::MemUnmap, 0x7f2000000000, 2 << 20, 4);
  b.range(Token::AddressReserve, 0x7f3000000000, 1 << 30, 5);
  b.range(Token::AddressFree, 0x7f3000000000, 1 << 30, 6);
  b.pool(Token::PoolCreate, 0x6000, 1, 7);
  b.pool_trim(0x6000, 0, 2 << 20, 1 << 20, 8);
  b.pool(Token::PoolDestroy, 0x6000, 1, 9);
  b.mem_info(0, uint64_t{15} << 30, uint64_t{16} << 30, 10);
  b.fork(4300);
  b.stacks_reset();
  b.stack_node(0, 0x404000);
  b.modules_begin(2);
  b.module(0x400000, 0x400000, 0x480000, "/usr/bin/python3", "\x12\x34\xab");
  b.alloc(Api::cuMemCreate, 0, 3, 2 << 20, 1, 11);
  b.free(Api::cuMemRelease, 3, 12);
  b.event(trace::DeviceState{{}, 1, 0, "GPU-4d1b6a70", "00000000:01:00.0", 256 << 20, 1 << 30, 1}, 1);
  b.record(trace::DeviceProcess{4194401, 512 << 20, "python train.py"});
  b.event(trace::Context{{}, 1, 1, "GPU-4d1b6a70", 256 << 20, 224 << 20, 1 << 30}, 1);
  b.record(trace::Placement{1, 1, "0,1"});
  b.end(21, 13);
  return b;
}

// Python frames: two codes, a mixed stack whose outermost node is the truncation marker, an Alloc on it,
// then a StacksReset after which the codes are still defined.
inline TraceBuilder python_frames_trace() {
  using format::Api;
  TraceBuilder b;
  b.thread_new(1, 4242, "python3");
  b.python_code("/srv/train.py", "Trainer.step", 50);
  b.python_code("/srv/train.py", "<module>", 1);
  b.stack_node(0, format::kTruncatedFrame);
  b.stack_node(1, format::python_frame(1, 90));
  b.stack_node(2, 0x401000);
  b.stack_node(3, format::python_frame(0, 57));
  b.stack_node(4, 0x7f0000001234);
  b.alloc(Api::cudaMalloc, 0, 0x7f1000000000, 1 << 20, 5, 1000);
  b.stacks_reset();
  b.stack_node(0, format::python_frame(0, 58));
  b.alloc(Api::cudaMalloc, 0, 0x7f1000100000, 1 << 20, 1, 10);
  b.end(2, 1);
  return b;
}

// A workload of the benchmark's mixed shape, smaller: 256 stacks, 64 sizes, 1024 slots freed at random,
// addresses from exact-size LIFO free lists as the simulated device hands them out, 300 to 700 ns per event
// (a Time record of whole microseconds once one has passed, as the writer does).
inline TraceBuilder mixed_workload_trace(uint64_t pairs) {
  using format::Api;
  TraceBuilder b;
  b.process(7, 1, 0, 64, -1, "host", "/bin/mixed", {"mixed"});
  b.thread_new(1, 7, "mixed");
  for (int i = 0; i < 256; ++i) b.stack_node(0, 0x401000 + 16 * i);
  uint64_t random = 88172645463325252ull;
  auto next = [&] {
    random ^= random << 13;
    random ^= random >> 7;
    random ^= random << 17;
    return random;
  };
  std::vector<std::pair<uint64_t, uint64_t>> slots(1024);  // address, size
  std::map<uint64_t, std::vector<uint64_t>> free_lists;
  uint64_t bump = 0x7f0000000000;
  uint64_t pending_ns = 0;
  auto dt = [&] {  // whole microseconds, the rest carried, as the writer steps
    pending_ns += 300 + next() % 400;
    uint64_t step = pending_ns / format::kTimeGranularityNs * format::kTimeGranularityNs;
    pending_ns -= step;
    return step;
  };
  uint64_t events = 0;
  for (uint64_t i = 0; i < pairs; ++i) {
    uint64_t r = next();
    auto& [address, size] = slots[r % slots.size()];
    if (address) {
      b.free(Api::cudaFree, address, dt());
      free_lists[(size + 511) / 512 * 512].push_back(address);
      ++events;
    }
    size = 1024 * (1 + (r >> 16) % 64);
    std::vector<uint64_t>& reuse = free_lists[size];
    if (reuse.empty()) {
      address = bump;
      bump += size;
    } else {
      address = reuse.back();
      reuse.pop_back();
    }
    b.alloc(Api::cudaMalloc, 0, address, size, 1 + (r >> 24) % 256, dt());
    ++events;
  }
  b.end(events, dt());
  return b;
}

}  // namespace gpumemtrace::test
