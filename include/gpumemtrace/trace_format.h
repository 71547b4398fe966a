// The gpumemtrace trace format, shared by the writer (interpose/) and the reader (analyzer/).
// docs/trace-format.md is the prose version of this file; change both together and bump kVersion.
//
// A trace is a 16-byte header followed by records. Every record starts with a one-byte token; its
// fields are unsigned LEB128 varints ("u"), zig-zag varints ("s"), or strings (a u length, then bytes).
// The writer appends through a shared file mapping, writing a record's body first and its token last,
// so a byte 0 where a token is expected marks the end of what was written: a process killed mid-record
// leaves a token of 0, never half a record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gpumemtrace::format {

inline constexpr char kMagic[8] = {'G', 'P', 'U', 'M', 'T', 'R', 'C', '\n'};
inline constexpr uint32_t kVersion = 1;
inline constexpr size_t kHeaderSize = 16;  // magic, u32 version (little endian), u32 reserved (0, ignored)

// Tokens. 0 means "nothing written here yet": the reader stops.
//
// State records (Time, Device, ThreadNew, ThreadSwitch) set what the records after them share, so that
// the frequent ones, Alloc and Free, carry only what changes: in a steady loop an Alloc takes 4 bytes and
// a Free 2. Every event happens at the current time on the current thread.
enum class Token : uint8_t {
  Unwritten = 0x00,
  // u pid, u ppid, u start wall-clock ns since the epoch, u max stack depth, s rank,
  // str hostname, str executable, u argc, argc × str argv. The clock of the Time records starts at 0
  // at the same moment as the wall-clock start.
  Process = 0x01,
  // u generation: the module records that follow replace the previous set
  ModulesBegin = 0x02,
  // u base (load bias), u low address, u high address (absolute, covering every PT_LOAD), str path,
  // str build id (raw bytes, may be empty)
  Module = 0x03,
  // The stack trie restarts empty (after a library was unloaded): node ids count from 1 again.
  StacksReset = 0x04,
  // u parent node id (0 = root), u instruction address (already adjusted to the call instruction).
  // Node ids are implicit: the n-th StackNode since the last StacksReset has id n (from 1).
  // A stack id names the innermost frame's node; walking parents gives the outer frames.
  StackNode = 0x05,
  // u thread index (from 1, in order of appearance), u tid, str name: a thread seen for the first time;
  // it is the current thread from here (as after a ThreadSwitch)
  ThreadNew = 0x06,
  // u thread index: the records that follow come from this thread (until the next switch)
  ThreadSwitch = 0x07,
  // u api (an allocating one), u device+1 (0 = none), u size, u stack id, u error, and for out-of-memory
  // errors (error 2): u device free bytes, u device total bytes (0, 0 if unknown). The error is the
  // CUresult for driver APIs and the cudaError_t for runtime APIs (2 is out of memory in both).
  AllocFailed = 0x08,
  // u address, u size, u handle, u offset: physical memory bound to an address range
  MemMap = 0x09,
  // u address, u size (MemUnmap, AddressReserve and AddressFree alike)
  MemUnmap = 0x0A,
  AddressReserve = 0x0B,
  AddressFree = 0x0C,
  // u pool handle, u device+1 (PoolCreate and PoolDestroy alike; PoolDestroy writes device 0)
  PoolCreate = 0x0D,
  PoolDestroy = 0x0E,
  // u pool handle, u min bytes to keep, u reserved bytes after, u used bytes after
  PoolTrim = 0x0F,
  // u device+1, u free bytes, u total bytes: a cuMemGetInfo result the program asked for
  MemInfo = 0x10,
  // u child pid: this process forked; the child writes its own trace
  Fork = 0x11,
  // u events written (every event record: those that are not state, stack, module, Process, Fork or End):
  // the process ended normally; the trace is complete and nothing after End is read
  End = 0x12,
  // u api (a freeing one), u address/handle, u error: a free the driver refused after it was recorded
  FreeFailed = 0x13,
  // u ns: the current time advances by this much (CLOCK_MONOTONIC since the trace start). The writer
  // advances it only when at least kTimeGranularityNs have passed, so event times are exact to that.
  Time = 0x14,
  // u device+1: the device of the Alloc records that follow
  Device = 0x15,
  // u pool handle, u device+1, u reserved bytes, u used bytes: a memory pool's state, written for the
  // device's pools when an allocation runs out of memory
  PoolUsage = 0x16,
  // Alloc: token = AllocBase | api (an allocating one). s address delta (from the previous Alloc/Free
  //   address, starting at 0), u stack id, s size delta (from the previous Alloc with the same stack id,
  //   starting at 0; stack 0 is a stack id like any other), then u stream for APIs that take one,
  //   u pool handle for *FromPool* APIs.
  AllocBase = 0x40,
  // Free: token = FreeBase | api (a freeing one). s address delta, then u stream for APIs that take one.
  FreeBase = 0x80,
};
inline constexpr uint64_t kTimeGranularityNs = 1000;
inline constexpr uint8_t kApiMask = 0x3F;

// Memory kinds, derived from the API (never stored). For VmmPhysical the "address" of an allocation is
// its CUmemGenericAllocationHandle, for Array its CUarray.
enum class MemoryKind : uint8_t { Device, AsyncPool, VmmPhysical, Managed, HostPinned, Array };

// The API the application called. Runtime APIs appear when the shared runtime was called directly;
// allocations that only the driver chain saw carry the driver API. Values are part of the format.
enum class Api : uint8_t {
  cuMemAlloc = 0,
  cuMemAllocPitch = 1,
  cuMemAllocManaged = 2,
  cuMemHostAlloc = 3,
  cuMemAllocHost = 4,
  cuMemAllocAsync = 5,
  cuMemAllocFromPoolAsync = 6,
  cuMemCreate = 7,
  cuArrayCreate = 8,
  cuArray3DCreate = 9,
  cuMemFree = 10,
  cuMemFreeHost = 11,
  cuMemFreeAsync = 12,
  cuMemRelease = 13,
  cuArrayDestroy = 14,
  cudaMalloc = 15,
  cudaMallocPitch = 16,
  cudaMalloc3D = 17,
  cudaMallocManaged = 18,
  cudaMallocHost = 19,
  cudaHostAlloc = 20,
  cudaMallocAsync = 21,
  cudaMallocFromPoolAsync = 22,
  cudaMallocArray = 23,
  cudaMalloc3DArray = 24,
  cudaFree = 25,
  cudaFreeHost = 26,
  cudaFreeAsync = 27,
  cudaFreeArray = 28,
  Count = 29,
};

struct ApiInfo {
  std::string_view name;
  MemoryKind kind;
  bool is_free;
  bool takes_stream;
  bool takes_pool;
};

// Indexed by Api. The single source of API names and kinds for writer, reader and reports.
inline constexpr ApiInfo kApis[] = {
    {"cuMemAlloc", MemoryKind::Device, false, false, false},
    {"cuMemAllocPitch", MemoryKind::Device, false, false, false},
    {"cuMemAllocManaged", MemoryKind::Managed, false, false, false},
    {"cuMemHostAlloc", MemoryKind::HostPinned, false, false, false},
    {"cuMemAllocHost", MemoryKind::HostPinned, false, false, false},
    {"cuMemAllocAsync", MemoryKind::AsyncPool, false, true, false},
    {"cuMemAllocFromPoolAsync", MemoryKind::AsyncPool, false, true, true},
    {"cuMemCreate", MemoryKind::VmmPhysical, false, false, false},
    {"cuArrayCreate", MemoryKind::Array, false, false, false},
    {"cuArray3DCreate", MemoryKind::Array, false, false, false},
    {"cuMemFree", MemoryKind::Device, true, false, false},
    {"cuMemFreeHost", MemoryKind::HostPinned, true, false, false},
    {"cuMemFreeAsync", MemoryKind::AsyncPool, true, true, false},
    {"cuMemRelease", MemoryKind::VmmPhysical, true, false, false},
    {"cuArrayDestroy", MemoryKind::Array, true, false, false},
    {"cudaMalloc", MemoryKind::Device, false, false, false},
    {"cudaMallocPitch", MemoryKind::Device, false, false, false},
    {"cudaMalloc3D", MemoryKind::Device, false, false, false},
    {"cudaMallocManaged", MemoryKind::Managed, false, false, false},
    {"cudaMallocHost", MemoryKind::HostPinned, false, false, false},
    {"cudaHostAlloc", MemoryKind::HostPinned, false, false, false},
    {"cudaMallocAsync", MemoryKind::AsyncPool, false, true, false},
    {"cudaMallocFromPoolAsync", MemoryKind::AsyncPool, false, true, true},
    {"cudaMallocArray", MemoryKind::Array, false, false, false},
    {"cudaMalloc3DArray", MemoryKind::Array, false, false, false},
    {"cudaFree", MemoryKind::Device, true, false, false},
    {"cudaFreeHost", MemoryKind::HostPinned, true, false, false},
    {"cudaFreeAsync", MemoryKind::AsyncPool, true, true, false},
    {"cudaFreeArray", MemoryKind::Array, true, false, false},
};
static_assert(sizeof(kApis) / sizeof(kApis[0]) == static_cast<size_t>(Api::Count));
static_assert(static_cast<size_t>(Api::Count) <= kApiMask + 1);

inline constexpr const ApiInfo& api_info(Api api) { return kApis[static_cast<size_t>(api)]; }

inline constexpr std::string_view kMemoryKindNames[] = {"device", "async-pool", "vmm-physical",
                                                        "managed", "host-pinned", "array"};
inline constexpr std::string_view memory_kind_name(MemoryKind kind) {
  return kMemoryKindNames[static_cast<size_t>(kind)];
}

// Varint coding (the reader's bounded decoder is analyzer/trace/field_cursor.h).
inline uint8_t* put_varint(uint8_t* out, uint64_t value) {
  while (value >= 0x80) {
    *out++ = static_cast<uint8_t>(value | 0x80);
    value >>= 7;
  }
  *out++ = static_cast<uint8_t>(value);
  return out;
}
inline constexpr uint64_t zigzag(int64_t value) {
  return (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
}
inline constexpr int64_t unzigzag(uint64_t value) {
  return static_cast<int64_t>(value >> 1) ^ -static_cast<int64_t>(value & 1);
}
inline constexpr size_t kMaxVarintBytes = 10;

}  // namespace gpumemtrace::format
