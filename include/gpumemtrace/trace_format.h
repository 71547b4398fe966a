// The gpumemtrace trace format, shared by the writer (trace/writer/) and the reader (trace/reader/): tokens,
// APIs, memory kinds and the field encodings. The records themselves are declared in trace_records.h.
// docs/trace-format.md is the prose version of both; change them together, and bump kVersion when an
// existing record's layout changes (a new record with a new token does not: docs/trace-format.md, Versions).
//
// A trace is a 16-byte header followed by records. Every record starts with a one-byte token; its
// fields are unsigned LEB128 varints ("u"), zig-zag varints ("s"), or strings (a u length, then bytes).
// The writer appends through a shared file mapping, writing a record's body first and its token last,
// so a byte 0 where a token is expected marks the end of what was written: a process killed mid-record
// leaves a token of 0, never half a record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <string_view>

namespace gpumemtrace::format {

inline constexpr char kMagic[8] = {'G', 'P', 'U', 'M', 'T', 'R', 'C', '\n'};
inline constexpr uint32_t kVersion = 1;
inline constexpr size_t kHeaderSize = 16;  // magic, u32 version (little endian), u32 reserved (0, ignored)

// Writes the kHeaderSize bytes of the header.
inline void put_header(uint8_t* out, uint32_t version = kVersion) {
  for (size_t i = 0; i < sizeof kMagic; ++i) out[i] = static_cast<uint8_t>(kMagic[i]);
  for (size_t i = 0; i < 4; ++i) out[8 + i] = static_cast<uint8_t>(version >> (8 * i));
  for (size_t i = 12; i < kHeaderSize; ++i) out[i] = 0;
}

// Tokens: one byte in front of every record. Each record's fields are declared with it in trace_records.h.
// 0 means "nothing written here yet": the reader stops.
//
// State records (Time, Device, ThreadNew, ThreadSwitch) set what the records after them share, so that
// the frequent ones, Alloc and Free, carry only what changes: in a steady loop an Alloc takes 4 bytes and
// a Free 2. Every event happens at the current time on the current thread.
enum class Token : uint8_t {
  Unwritten = 0x00,
  Process = 0x01,         // who wrote the trace
  ModulesBegin = 0x02,    // the Module records that follow replace the previous set
  Module = 0x03,          // a loaded object
  StacksReset = 0x04,     // the stack trie restarts empty
  StackNode = 0x05,       // the next node of the stack trie
  ThreadNew = 0x06,       // a thread seen for the first time; it is the current thread from here
  ThreadSwitch = 0x07,    // the records that follow come from this thread
  AllocFailed = 0x08,     // a refused allocation
  MemMap = 0x09,          // VMM: physical memory bound to an address range
  MemUnmap = 0x0A,        // VMM: the range is unmapped
  AddressReserve = 0x0B,  // VMM: an address range reserved
  AddressFree = 0x0C,     // VMM: the reservation released
  PoolCreate = 0x0D,
  PoolDestroy = 0x0E,
  PoolTrim = 0x0F,        // cuMemPoolTrimTo, with the pool's state after it
  MemInfo = 0x10,         // a cuMemGetInfo result the program asked for
  Fork = 0x11,            // this process forked; the child writes its own trace
  End = 0x12,             // the process ended normally: the trace is complete and nothing after End is read
  FreeFailed = 0x13,      // a free the driver refused after it was recorded
  Time = 0x14,            // state: the current time advances
  Device = 0x15,          // state: the device of the Alloc records that follow
  PoolUsage = 0x16,       // a pool's state, written for the device's pools when an allocation runs out of memory
  PythonCode = 0x17,      // a Python code object that StackNode frames refer to (see "Stack frames" below)
  NativeFunction = 0x18,  // a native function known by name and file only, that StackNode frames refer to
  SubFreeRequested = 0x19,  // a block freed by the program that its allocator keeps until the GPU is done with it
  PhaseDomain = 0x20,     // an NVTX domain that phase names belong to
  PhaseName = 0x21,       // a phase (range) name, written once before the records that use it
  PhasePush = 0x22,       // the current thread enters a nested phase (nvtxRangePush)
  PhasePop = 0x23,        // the current thread leaves its innermost phase of a domain (nvtxRangePop)
  RangeStart = 0x24,      // a process-wide phase starts (nvtxRangeStart)
  RangeEnd = 0x25,        // that phase ends, on any thread (nvtxRangeEnd)
  HeapCreate = 0x26,      // a sub-allocator's heap: memory it sub-allocates blocks from
  HeapDestroy = 0x27,     // the heap is gone, with its blocks
  HeapReset = 0x28,       // every block of the heap is freed at once
  SubAlloc = 0x29,        // a block sub-allocated from a heap
  SubFree = 0x2A,         // a block returned to its heap
  SubName = 0x2B,         // a live block's name (what it holds)
  Source = 0x2C,          // the capture source of the events that follow (interposition or CUPTI)
  PoolThreshold = 0x2D,   // a memory pool's release threshold, as CUPTI reported it
  TorchSnapshot = 0x2E,   // the PyTorch hook wrote a snapshot of PyTorch's caching allocator next to the trace
  TorchHook = 0x2F,       // the PyTorch hook is on: PyTorch records its allocation history
  DeviceState = 0x30,     // a device as NVML saw it (memory, UUID) at a moment of the process; its processes follow
  DeviceProcess = 0x31,   // a process holding memory on the device of the DeviceState before it
  Context = 0x32,         // the process made a CUDA context on a device: the device's UUID, its free memory around it
  Placement = 0x33,       // the variables that place the process on a GPU: local rank, CUDA_VISIBLE_DEVICES
  Param = 0x34,           // a named parameter of the run (gpumemtrace run --param batch=32: GPUMEMTRACE_PARAMS)
  AllocBase = 0x40,       // Alloc: AllocBase | api (an allocating one)
  FreeBase = 0x80,        // Free: FreeBase | api (a freeing one)
};
// The writer advances the time only when at least this much has passed, so event times are exact to it.
inline constexpr uint64_t kTimeGranularityNs = 1000;
inline constexpr uint8_t kApiMask = 0x3F;

// The error of an allocation that ran out of memory: CUDA_ERROR_OUT_OF_MEMORY for driver APIs and
// cudaErrorMemoryAllocation for runtime APIs are both 2. Only these AllocFailed records carry free and total.
inline constexpr uint64_t kErrorOutOfMemory = 2;

// The lists below are each declared once, as a list macro of rows X(enumerator, ...); the enum and its tables
// are made from it with GPUMEMTRACE_ENUM_VALUE and a row macro of their own, so that they cannot disagree.
#define GPUMEMTRACE_ENUM_VALUE(name, value, ...) name = value,
#define GPUMEMTRACE_ENUM_NAME(name, value, text, ...) text,
#define GPUMEMTRACE_ENUM_INDEX(name, value, ...) value,
// The values of a list are 0, 1, 2, ...: the tables made from it are indexed by its enum.
constexpr bool list_is_indexed(std::initializer_list<int> values) {
  int index = 0;
  for (int value : values)
    if (value != index++) return false;
  return true;
}

// Where the events that follow a Source record were seen. Until the first Source record: Interposition.
#define GPUMEMTRACE_CAPTURE_SOURCES(X) \
  X(Interposition, 0, "interposition") \
  X(Cupti, 1, "cupti")
enum class CaptureSource : uint8_t { GPUMEMTRACE_CAPTURE_SOURCES(GPUMEMTRACE_ENUM_VALUE) Count };
inline constexpr std::string_view kCaptureSourceNames[] = {GPUMEMTRACE_CAPTURE_SOURCES(GPUMEMTRACE_ENUM_NAME)};
static_assert(list_is_indexed({GPUMEMTRACE_CAPTURE_SOURCES(GPUMEMTRACE_ENUM_INDEX)}));

// Why the PyTorch hook (python/gpumemtrace/torch_hook.py) wrote a snapshot: TorchSnapshot records. The name is
// the one in the snapshot's file name, "<trace file name>.torch-<name>[-<sequence>].pickle".
#define GPUMEMTRACE_TORCH_SNAPSHOT_REASONS(X) \
  X(Exit, 0, "exit")                          \
  X(OutOfMemory, 1, "oom")                    \
  X(Signal, 2, "usr1")
enum class TorchSnapshotReason : uint8_t { GPUMEMTRACE_TORCH_SNAPSHOT_REASONS(GPUMEMTRACE_ENUM_VALUE) Count };
inline constexpr std::string_view kTorchSnapshotReasonNames[] = {
    GPUMEMTRACE_TORCH_SNAPSHOT_REASONS(GPUMEMTRACE_ENUM_NAME)};
static_assert(list_is_indexed({GPUMEMTRACE_TORCH_SNAPSHOT_REASONS(GPUMEMTRACE_ENUM_INDEX)}));

// When the tracer asked NVML about the devices: DeviceState records.
#define GPUMEMTRACE_DEVICE_STATE_MOMENTS(X) \
  X(Start, 0, "start")                      \
  X(OutOfMemory, 1, "oom")                  \
  X(End, 2, "end")
enum class DeviceStateMoment : uint8_t { GPUMEMTRACE_DEVICE_STATE_MOMENTS(GPUMEMTRACE_ENUM_VALUE) Count };
inline constexpr std::string_view kDeviceStateMomentNames[] = {GPUMEMTRACE_DEVICE_STATE_MOMENTS(GPUMEMTRACE_ENUM_NAME)};
static_assert(list_is_indexed({GPUMEMTRACE_DEVICE_STATE_MOMENTS(GPUMEMTRACE_ENUM_INDEX)}));

// What SIGUSR1 does in a process whose PyTorch hook is on (TorchHook records): nothing of ours (the program
// handles it in C, or the hook could not take it), a snapshot, or a snapshot and then the program's own handler.
enum class TorchSignal : uint8_t { NotTaken = 0, Taken = 1, Chained = 2, Count };

// Where a memory kind's bytes live, the accounts the analyzer adds them up in: device memory (each device),
// managed memory, pinned host memory.
enum class MemoryCategory : uint8_t { Device, Managed, HostPinned };

// Memory kinds, derived from the API (never stored). For VmmPhysical the "address" of an allocation is
// its CUmemGenericAllocationHandle, for Array its CUarray. Rows: X(kind, index, name, category).
#define GPUMEMTRACE_MEMORY_KINDS(X)                      \
  X(Device, 0, "device", Device)                         \
  X(AsyncPool, 1, "async-pool", Device)                  \
  X(VmmPhysical, 2, "vmm-physical", Device)              \
  X(Managed, 3, "managed", Managed)                      \
  X(HostPinned, 4, "host-pinned", HostPinned)            \
  X(Array, 5, "array", Device)
enum class MemoryKind : uint8_t { GPUMEMTRACE_MEMORY_KINDS(GPUMEMTRACE_ENUM_VALUE) Count };
inline constexpr size_t kMemoryKinds = static_cast<size_t>(MemoryKind::Count);
static_assert(list_is_indexed({GPUMEMTRACE_MEMORY_KINDS(GPUMEMTRACE_ENUM_INDEX)}));
#define GPUMEMTRACE_MEMORY_CATEGORY(kind, value, name, category) MemoryCategory::category,
inline constexpr MemoryCategory kMemoryCategories[] = {GPUMEMTRACE_MEMORY_KINDS(GPUMEMTRACE_MEMORY_CATEGORY)};
#undef GPUMEMTRACE_MEMORY_CATEGORY
inline constexpr MemoryCategory memory_category(MemoryKind kind) {
  return kMemoryCategories[static_cast<size_t>(kind)];
}

// The API the application called. Runtime APIs appear when the shared runtime was called directly;
// allocations that only the driver chain saw carry the driver API. Values are part of the format.
// Rows: X(api, value, memory kind, is a free, takes a stream, takes a pool); the name is the api's.
#define GPUMEMTRACE_APIS(X)                                        \
  X(cuMemAlloc, 0, Device, false, false, false)                    \
  X(cuMemAllocPitch, 1, Device, false, false, false)               \
  X(cuMemAllocManaged, 2, Managed, false, false, false)            \
  X(cuMemHostAlloc, 3, HostPinned, false, false, false)            \
  X(cuMemAllocHost, 4, HostPinned, false, false, false)            \
  X(cuMemAllocAsync, 5, AsyncPool, false, true, false)             \
  X(cuMemAllocFromPoolAsync, 6, AsyncPool, false, true, true)      \
  X(cuMemCreate, 7, VmmPhysical, false, false, false)              \
  X(cuArrayCreate, 8, Array, false, false, false)                  \
  X(cuArray3DCreate, 9, Array, false, false, false)                \
  X(cuMemFree, 10, Device, true, false, false)                     \
  X(cuMemFreeHost, 11, HostPinned, true, false, false)             \
  X(cuMemFreeAsync, 12, AsyncPool, true, true, false)              \
  X(cuMemRelease, 13, VmmPhysical, true, false, false)             \
  X(cuArrayDestroy, 14, Array, true, false, false)                 \
  X(cudaMalloc, 15, Device, false, false, false)                   \
  X(cudaMallocPitch, 16, Device, false, false, false)              \
  X(cudaMalloc3D, 17, Device, false, false, false)                 \
  X(cudaMallocManaged, 18, Managed, false, false, false)           \
  X(cudaMallocHost, 19, HostPinned, false, false, false)           \
  X(cudaHostAlloc, 20, HostPinned, false, false, false)            \
  X(cudaMallocAsync, 21, AsyncPool, false, true, false)            \
  X(cudaMallocFromPoolAsync, 22, AsyncPool, false, true, true)     \
  X(cudaMallocArray, 23, Array, false, false, false)               \
  X(cudaMalloc3DArray, 24, Array, false, false, false)             \
  X(cudaFree, 25, Device, true, false, false)                      \
  X(cudaFreeHost, 26, HostPinned, true, false, false)              \
  X(cudaFreeAsync, 27, AsyncPool, true, true, false)               \
  X(cudaFreeArray, 28, Array, true, false, false)
enum class Api : uint8_t { GPUMEMTRACE_APIS(GPUMEMTRACE_ENUM_VALUE) Count };

struct ApiInfo {
  std::string_view name;
  MemoryKind kind;
  bool is_free;
  bool takes_stream;
  bool takes_pool;
};

// Indexed by Api: the names and kinds for writer, reader and reports, made from GPUMEMTRACE_APIS.
#define GPUMEMTRACE_API_INFO(api, value, kind, is_free, takes_stream, takes_pool) \
  {#api, MemoryKind::kind, is_free, takes_stream, takes_pool},
inline constexpr ApiInfo kApis[] = {GPUMEMTRACE_APIS(GPUMEMTRACE_API_INFO)};
#undef GPUMEMTRACE_API_INFO
static_assert(list_is_indexed({GPUMEMTRACE_APIS(GPUMEMTRACE_ENUM_INDEX)}));
static_assert(static_cast<size_t>(Api::Count) <= kApiMask + 1);

inline constexpr const ApiInfo& api_info(Api api) { return kApis[static_cast<size_t>(api)]; }

// Indexed by MemoryKind.
inline constexpr std::string_view kMemoryKindNames[] = {GPUMEMTRACE_MEMORY_KINDS(GPUMEMTRACE_ENUM_NAME)};
inline constexpr std::string_view memory_kind_name(MemoryKind kind) {
  return kMemoryKindNames[static_cast<size_t>(kind)];
}

// Stack frames. A StackNode's "ip" is an instruction address, or, with bit 63 set (no user-space address has
// it), a frame that is not one:
//   bit 63 set, bit 62 clear: a Python frame: bits 32-61 the index of a PythonCode record written before
//                             (the n-th PythonCode of the trace has index n, from 0), bits 0-31 the line (0:
//                             unknown);
//   bits 63, 62 and 61 set:   a named native frame: bits 32-60 the index of a NativeFunction record written
//                             before (the n-th of the trace has index n, from 0), bits 0-31 the line (0: unknown);
//   bits 63 and 62 set, bit 61 clear: a marker; bits 0-60 say which. The only one is kTruncatedFrame, the
//                             outermost node of a stack whose outer frames were cut.
// Any other tagged value is corrupt.
inline constexpr uint64_t kTaggedFrame = uint64_t{1} << 63;
inline constexpr uint64_t kMarkerFrame = uint64_t{1} << 62;
inline constexpr uint64_t kNamedFrame = uint64_t{1} << 61;
inline constexpr unsigned kPythonCodeShift = 32;
inline constexpr uint64_t kPythonCodes = uint64_t{1} << 30;  // indexes 0 to 2^30 - 1
inline constexpr uint64_t kNativeFunctions = uint64_t{1} << 29;  // indexes 0 to 2^29 - 1
inline constexpr uint64_t kTruncatedFrame = kTaggedFrame | kMarkerFrame | 1;

inline constexpr bool is_tagged_frame(uint64_t ip) { return (ip & kTaggedFrame) != 0; }
inline constexpr bool is_python_frame(uint64_t ip) { return (ip & (kTaggedFrame | kMarkerFrame)) == kTaggedFrame; }
inline constexpr uint64_t python_frame(uint32_t code, uint32_t line) {
  return kTaggedFrame | uint64_t{code} << kPythonCodeShift | line;
}
inline constexpr uint32_t python_code_of(uint64_t ip) {
  return static_cast<uint32_t>((ip & ~(kTaggedFrame | kMarkerFrame)) >> kPythonCodeShift);
}
inline constexpr uint32_t python_line_of(uint64_t ip) { return static_cast<uint32_t>(ip); }
static_assert(python_code_of(python_frame(kPythonCodes - 1, 7)) == kPythonCodes - 1);
static_assert(is_python_frame(python_frame(kPythonCodes - 1, UINT32_MAX)) && !is_python_frame(kTruncatedFrame));

inline constexpr uint64_t kNamedFrameTags = kTaggedFrame | kMarkerFrame | kNamedFrame;
inline constexpr bool is_named_frame(uint64_t ip) { return (ip & kNamedFrameTags) == kNamedFrameTags; }
inline constexpr uint64_t named_frame(uint32_t function, uint32_t line) {
  return kNamedFrameTags | uint64_t{function} << kPythonCodeShift | line;
}
inline constexpr uint32_t native_function_of(uint64_t ip) {
  return static_cast<uint32_t>((ip & ~kNamedFrameTags) >> kPythonCodeShift);
}
inline constexpr uint32_t named_line_of(uint64_t ip) { return static_cast<uint32_t>(ip); }
static_assert(native_function_of(named_frame(kNativeFunctions - 1, 7)) == kNativeFunctions - 1);
static_assert(is_named_frame(named_frame(0, 0)) && !is_named_frame(kTruncatedFrame) &&
              !is_python_frame(named_frame(0, 0)));

// Varint coding (the reader's bounded decoder is trace/reader/field_cursor.h).
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
