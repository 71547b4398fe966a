// The decoded records of a trace, one struct per token (see include/gpumemtrace/trace_format.h).
// Times and addresses are absolute: the reader has already summed the deltas. Strings are views into the
// mapped trace and stay valid as long as the Reader that returned them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string_view>
#include <variant>

#include "gpumemtrace/trace_format.h"

namespace gpumemtrace::trace {

using format::Api;
using format::MemoryKind;

inline constexpr int32_t kNoDevice = -1;
inline constexpr uint64_t kErrorOutOfMemory = 2;  // CUDA_ERROR_OUT_OF_MEMORY == cudaErrorMemoryAllocation

struct Process {
  uint64_t pid = 0;
  uint64_t ppid = 0;
  uint64_t start_wall_ns = 0;  // since the epoch
  uint64_t max_stack_depth = 0;
  int64_t rank = -1;
  std::string_view hostname;
  std::string_view executable;
  std::span<const std::string_view> argv;

  bool operator==(const Process& other) const {
    return pid == other.pid && ppid == other.ppid && start_wall_ns == other.start_wall_ns &&
           max_stack_depth == other.max_stack_depth && rank == other.rank && hostname == other.hostname &&
           executable == other.executable && std::ranges::equal(argv, other.argv);
  }
};

struct ModulesBegin {
  uint64_t generation = 0;
  bool operator==(const ModulesBegin&) const = default;
};

struct Module {
  uint64_t base = 0;  // load bias
  uint64_t low = 0;
  uint64_t high = 0;
  std::string_view path;
  std::string_view build_id;  // raw bytes
  bool operator==(const Module&) const = default;
};

struct StacksReset {
  bool operator==(const StacksReset&) const = default;
};

struct StackNode {
  uint32_t id = 0;  // implicit in the file: the n-th node since the last reset
  uint32_t parent = 0;
  uint64_t ip = 0;
  bool operator==(const StackNode&) const = default;
};

struct ThreadNew {
  uint32_t index = 0;
  uint64_t tid = 0;
  std::string_view name;
  bool operator==(const ThreadNew&) const = default;
};

struct ThreadSwitch {
  uint32_t index = 0;
  bool operator==(const ThreadSwitch&) const = default;
};

struct Fork {
  uint64_t child_pid = 0;
  bool operator==(const Fork&) const = default;
};

// What every timed record carries: when it happened and on which thread (0 = before any thread record).
struct Event {
  uint64_t time_ns = 0;  // CLOCK_MONOTONIC ns since the trace start
  uint32_t thread = 0;
  bool operator==(const Event&) const = default;
};

struct Alloc : Event {
  Api api{};
  int32_t device = kNoDevice;
  uint64_t address = 0;  // the CUmemGenericAllocationHandle for VMM physical memory, the CUarray for arrays
  uint64_t size = 0;
  uint32_t stack = 0;
  uint64_t stream = 0;  // async APIs only
  uint64_t pool = 0;    // *FromPool* APIs only
  MemoryKind kind() const { return format::api_info(api).kind; }
  bool operator==(const Alloc&) const = default;
};

struct Free : Event {
  Api api{};
  uint64_t address = 0;
  uint64_t stream = 0;  // async APIs only
  MemoryKind kind() const { return format::api_info(api).kind; }
  bool operator==(const Free&) const = default;
};

struct AllocFailed : Event {
  Api api{};
  int32_t device = kNoDevice;
  uint64_t size = 0;
  uint32_t stack = 0;
  uint64_t error = 0;         // CUresult
  uint64_t device_free = 0;   // out-of-memory errors only; 0 when unknown
  uint64_t device_total = 0;  // out-of-memory errors only; 0 when unknown
  bool operator==(const AllocFailed&) const = default;
};

struct FreeFailed : Event {
  Api api{};
  uint64_t address = 0;
  uint64_t error = 0;
  bool operator==(const FreeFailed&) const = default;
};

struct MemMap : Event {
  uint64_t address = 0;
  uint64_t size = 0;
  uint64_t handle = 0;
  uint64_t offset = 0;
  bool operator==(const MemMap&) const = default;
};

// An address range: MemUnmap, AddressReserve and AddressFree share this layout.
struct AddressRange : Event {
  uint64_t address = 0;
  uint64_t size = 0;
  bool operator==(const AddressRange&) const = default;
};
struct MemUnmap : AddressRange {};
struct AddressReserve : AddressRange {};
struct AddressFree : AddressRange {};

// PoolCreate and PoolDestroy share this layout.
struct PoolEvent : Event {
  uint64_t pool = 0;
  int32_t device = kNoDevice;
  bool operator==(const PoolEvent&) const = default;
};
struct PoolCreate : PoolEvent {};
struct PoolDestroy : PoolEvent {};

struct PoolTrim : Event {
  uint64_t pool = 0;
  uint64_t min_bytes_to_keep = 0;
  uint64_t reserved_after = 0;
  uint64_t used_after = 0;
  bool operator==(const PoolTrim&) const = default;
};

// A memory pool's state when an allocation ran out of memory.
struct PoolUsage : Event {
  uint64_t pool = 0;
  int32_t device = kNoDevice;
  uint64_t reserved_bytes = 0;
  uint64_t used_bytes = 0;
  bool operator==(const PoolUsage&) const = default;
};

struct MemInfo : Event {
  int32_t device = kNoDevice;
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
  bool operator==(const MemInfo&) const = default;
};

struct End : Event {
  uint64_t events_written = 0;
  bool operator==(const End&) const = default;
};

using Record = std::variant<Process, ModulesBegin, Module, StacksReset, StackNode, ThreadNew, ThreadSwitch, Fork, Alloc,
                            Free, AllocFailed, FreeFailed, MemMap, MemUnmap, AddressReserve, AddressFree, PoolCreate,
                            PoolDestroy, PoolTrim, PoolUsage, MemInfo, End>;

// "alloc", "free", "stack-node", ...: the record's name in dumps and messages.
std::string_view record_name(const Record& record);

}  // namespace gpumemtrace::trace
