// The records of a trace, each declared once: its token, its name, its fields in the order they are
// stored, and what each field holds. From these declarations the writer encodes
// (trace/writer/record_encoder.h), the reader decodes and checks (trace/reader/reader.cpp),
// `gpumemtrace dump` shows (analyzer/cli/record_fields.h) and the tests build traces
// (tests/support/trace_builder.h). docs/trace-format.md says the same in prose.
//
// Each record has its token (kToken), its name in dumps and messages (kName; kNoun where messages say it
// otherwise) and `fields(record, f)`, which calls `f` once per field, in stored order, saying how it is stored:
//   f.u(name, value, As)       u; shown as a number, an address, a size, an error code or a wall-clock time
//   f.s(name, value)           s
//   f.str(name, value, As)     str; shown as text or as raw bytes in hex
//   f.strs(name, values)       u count, then count × str
//   f.device(name, value)      u device+1 (0: none); the reader accepts values below 2^31
//   f.alloc_api(name, value)   u api, which must be an allocating API
//   f.free_api(name, value)    u api, which must be a freeing API
//   f.stack(name, value)       u stack trie node id, which must be defined (0: the root, an empty stack)
//   f.implicit(name, value)    not stored: the reader knows it
// A field that only some records carry is behind an `if` on fields stored before it.
//
// A new record takes its token in trace_format.h, its struct here and its type in Record below; see "Adding
// a record type" in docs/trace-format.md.
//
// Times and addresses are absolute: the reader sums the deltas, the writer makes them. Strings are views:
// into the mapped trace for a record a Reader returned (valid as long as the Reader), into the caller's
// memory for a record given to the writer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "gpumemtrace/trace_format.h"

namespace gpumemtrace::trace {

using format::Api;
using format::MemoryKind;
using format::Token;

inline constexpr int32_t kNoDevice = -1;
// The highest device index a trace may name: far above any machine's GPUs, and low enough that a table by
// device index is small whatever the trace says.
inline constexpr int32_t kMaxDevice = 4095;

// How `gpumemtrace dump` shows a u or str field.
// Frame: a StackNode's ip, an address or a tagged frame (format::is_tagged_frame).
enum class As : uint8_t { Number, Address, Size, Error, WallTime, Text, Bytes, Frame };

struct Process {
  static constexpr Token kToken = Token::Process;
  static constexpr std::string_view kName = "process";
  uint64_t pid = 0;
  uint64_t ppid = 0;
  uint64_t start_wall_ns = 0;  // since the epoch, when the clock of the Time records was at 0
  uint64_t max_stack_depth = 0;
  int64_t rank = -1;  // -1: unknown
  std::string_view hostname;
  std::string_view executable;
  std::span<const std::string_view> argv;

  static void fields(auto& r, auto&& f) {
    f.u("pid", r.pid);
    f.u("ppid", r.ppid);
    f.u("start", r.start_wall_ns, As::WallTime);
    f.u("max_stack_depth", r.max_stack_depth);
    f.s("rank", r.rank);
    f.str("hostname", r.hostname);
    f.str("executable", r.executable);
    f.strs("argv", r.argv);
  }
  bool operator==(const Process& other) const {
    return pid == other.pid && ppid == other.ppid && start_wall_ns == other.start_wall_ns &&
           max_stack_depth == other.max_stack_depth && rank == other.rank && hostname == other.hostname &&
           executable == other.executable && std::ranges::equal(argv, other.argv);
  }
};

struct ModulesBegin {
  static constexpr Token kToken = Token::ModulesBegin;
  static constexpr std::string_view kName = "modules-begin";
  uint64_t generation = 0;

  static void fields(auto& r, auto&& f) {
    f.u("generation", r.generation);
  }
  bool operator==(const ModulesBegin&) const = default;
};

struct Module {
  static constexpr Token kToken = Token::Module;
  static constexpr std::string_view kName = "module";
  uint64_t base = 0;  // load bias
  uint64_t low = 0;   // [low, high) covers every PT_LOAD segment, in absolute addresses
  uint64_t high = 0;
  std::string_view path;
  std::string_view build_id;  // raw bytes, may be empty

  static void fields(auto& r, auto&& f) {
    f.u("base", r.base, As::Address);
    f.u("low", r.low, As::Address);
    f.u("high", r.high, As::Address);
    f.str("path", r.path);
    f.str("build_id", r.build_id, As::Bytes);
  }
  bool operator==(const Module&) const = default;
};

// A Module with its own strings: what the tracer finds loaded, and the module set the reader keeps.
struct ModuleInfo {
  uint64_t base = 0;
  uint64_t low = 0;
  uint64_t high = 0;
  std::string path;
  std::string build_id;

  bool contains(uint64_t address) const { return address >= low && address < high; }
  Module record() const { return Module{base, low, high, path, build_id}; }
  static ModuleInfo of(const Module& m) {
    return {m.base, m.low, m.high, std::string(m.path), std::string(m.build_id)};
  }
};

struct StacksReset {
  static constexpr Token kToken = Token::StacksReset;
  static constexpr std::string_view kName = "stacks-reset";

  static void fields(auto&, auto&&) {}
  bool operator==(const StacksReset&) const = default;
};

// A stack id names the innermost frame's node; walking parents to the root gives the outer frames.
struct StackNode {
  static constexpr Token kToken = Token::StackNode;
  static constexpr std::string_view kName = "stack-node";
  static constexpr std::string_view kNoun = "stack node";  // in the reader's messages
  uint32_t id = 0;  // the n-th StackNode since the start or the last StacksReset has id n, from 1
  uint32_t parent = 0;
  uint64_t ip = 0;  // already adjusted to point into the call instruction; or a Python frame or a marker
                    // (bit 63 set: format::is_tagged_frame)

  static void fields(auto& r, auto&& f) {
    f.implicit("id", r.id);
    f.stack("parent", r.parent);
    f.u("ip", r.ip, As::Frame);
  }
  bool operator==(const StackNode&) const = default;
};

// A Python code object (a function, a method, a module's body, ...) that Python frames of StackNode
// records refer to by index (format::python_frame): the n-th PythonCode since the start has index n, from
// 0. Written before the first StackNode that uses it; StacksReset does not forget it.
struct PythonCode {
  static constexpr Token kToken = Token::PythonCode;
  static constexpr std::string_view kName = "python-code";
  static constexpr std::string_view kNoun = "Python code";
  uint32_t index = 0;
  std::string_view filename;  // co_filename, as UTF-8
  std::string_view qualname;  // co_qualname ("Class.method", "outer.<locals>.inner"); CPython 3.10: co_name
  uint64_t first_line = 0;    // co_firstlineno

  static void fields(auto& r, auto&& f) {
    f.implicit("index", r.index);
    f.str("filename", r.filename);
    f.str("qualname", r.qualname);
    f.u("first_line", r.first_line);
  }
  bool operator==(const PythonCode&) const = default;
};

// A PythonCode with its own strings: the code table the reader keeps.
struct PythonCodeInfo {
  std::string filename;
  std::string qualname;
  uint64_t first_line = 0;

  static PythonCodeInfo of(const PythonCode& c) {
    return {std::string(c.filename), std::string(c.qualname), c.first_line};
  }
};

// A native function known by its name and source file only, which named frames of StackNode records refer
// to by index (format::named_frame): the n-th NativeFunction since the start has index n, from 0. Written
// before the first StackNode that uses it; StacksReset does not forget it. The frames of a PyTorch memory
// snapshot's C++ stacks are such: they have names, not addresses.
struct NativeFunction {
  static constexpr Token kToken = Token::NativeFunction;
  static constexpr std::string_view kName = "native-function";
  static constexpr std::string_view kNoun = "native function";
  uint32_t index = 0;
  std::string_view name;  // as the stack had it (demangled)
  std::string_view file;  // the source file; empty when unknown

  static void fields(auto& r, auto&& f) {
    f.implicit("index", r.index);
    f.str("name", r.name);
    f.str("file", r.file);
  }
  bool operator==(const NativeFunction&) const = default;
};

// A NativeFunction with its own strings: the function table the reader keeps.
struct NativeFunctionInfo {
  std::string name;
  std::string file;

  static NativeFunctionInfo of(const NativeFunction& f) { return {std::string(f.name), std::string(f.file)}; }
};

struct ThreadNew {
  static constexpr Token kToken = Token::ThreadNew;
  static constexpr std::string_view kName = "thread-new";
  uint32_t index = 0;  // from 1, in order of appearance
  uint64_t tid = 0;
  std::string_view name;

  static void fields(auto& r, auto&& f) {
    f.u("index", r.index);
    f.u("tid", r.tid);
    f.str("name", r.name);
  }
  bool operator==(const ThreadNew&) const = default;
};

struct ThreadSwitch {
  static constexpr Token kToken = Token::ThreadSwitch;
  static constexpr std::string_view kName = "thread-switch";
  uint32_t index = 0;

  static void fields(auto& r, auto&& f) {
    f.u("index", r.index);
  }
  bool operator==(const ThreadSwitch&) const = default;
};

struct Fork {
  static constexpr Token kToken = Token::Fork;
  static constexpr std::string_view kName = "fork";
  uint64_t child_pid = 0;

  static void fields(auto& r, auto&& f) {
    f.u("child_pid", r.child_pid);
  }
  bool operator==(const Fork&) const = default;
};

// What every timed record carries: when it happened and on which thread (0 = before any thread record).
// Neither is stored in the record: the reader fills them in from the Time and thread records, and the
// writer ignores them.
struct Event {
  uint64_t time_ns = 0;  // CLOCK_MONOTONIC ns since the trace start
  uint32_t thread = 0;
  bool operator==(const Event&) const = default;
};

// A successful allocation, recorded after the real call returned. Stored unlike its field list (the hot
// path, coded by hand in record_encoder.h and reader.cpp): the API in the token's low 6 bits, the device
// in the Device state record, then s address delta (from the last Alloc or Free), u stack id, s size delta
// (from the last Alloc with the same stack id), u stream and u pool when the API takes them.
struct Alloc : Event {
  static constexpr Token kToken = Token::AllocBase;
  static constexpr std::string_view kName = "alloc";
  Api api{};
  int32_t device = kNoDevice;
  uint64_t address = 0;  // the CUmemGenericAllocationHandle for VMM physical memory, the CUarray for arrays
  uint64_t size = 0;
  uint32_t stack = 0;
  uint64_t stream = 0;  // async APIs only
  uint64_t pool = 0;    // *FromPool* APIs only

  MemoryKind kind() const { return format::api_info(api).kind; }
  static void fields(auto& r, auto&& f) {
    f.alloc_api("api", r.api);
    f.device("device", r.device);
    f.u("address", r.address, As::Address);
    f.u("size", r.size, As::Size);
    f.stack("stack", r.stack);
    if (format::api_info(r.api).takes_stream) f.u("stream", r.stream, As::Address);
    if (format::api_info(r.api).takes_pool) f.u("pool", r.pool, As::Address);
  }
  bool operator==(const Alloc&) const = default;
};

// A free, recorded before the real call. Stored like Alloc: the API in the token, then s address delta,
// then u stream when the API takes one.
struct Free : Event {
  static constexpr Token kToken = Token::FreeBase;
  static constexpr std::string_view kName = "free";
  Api api{};
  uint64_t address = 0;
  uint64_t stream = 0;  // async APIs only

  MemoryKind kind() const { return format::api_info(api).kind; }
  static void fields(auto& r, auto&& f) {
    f.free_api("api", r.api);
    f.u("address", r.address, As::Address);
    if (format::api_info(r.api).takes_stream) f.u("stream", r.stream, As::Address);
  }
  bool operator==(const Free&) const = default;
};

struct AllocFailed : Event {
  static constexpr Token kToken = Token::AllocFailed;
  static constexpr std::string_view kName = "alloc-failed";
  static constexpr std::string_view kNoun = "failed allocation";
  Api api{};
  int32_t device = kNoDevice;
  uint64_t size = 0;
  uint32_t stack = 0;
  uint64_t error = 0;         // the CUresult, or the cudaError_t for runtime APIs
  uint64_t device_free = 0;   // out-of-memory errors only; 0 when unknown
  uint64_t device_total = 0;  // out-of-memory errors only; 0 when unknown

  static void fields(auto& r, auto&& f) {
    f.alloc_api("api", r.api);
    f.device("device", r.device);
    f.u("size", r.size, As::Size);
    f.stack("stack", r.stack);
    f.u("error", r.error, As::Error);
    if (r.error == format::kErrorOutOfMemory) {
      f.u("device_free", r.device_free, As::Size);
      f.u("device_total", r.device_total, As::Size);
    }
  }
  bool operator==(const AllocFailed&) const = default;
};

struct FreeFailed : Event {
  static constexpr Token kToken = Token::FreeFailed;
  static constexpr std::string_view kName = "free-failed";
  static constexpr std::string_view kNoun = "failed free";
  Api api{};
  uint64_t address = 0;
  uint64_t error = 0;

  static void fields(auto& r, auto&& f) {
    f.free_api("api", r.api);
    f.u("address", r.address, As::Address);
    f.u("error", r.error, As::Error);
  }
  bool operator==(const FreeFailed&) const = default;
};

// The physical allocation `handle`, from `offset`, mapped at [address, address + size).
struct MemMap : Event {
  static constexpr Token kToken = Token::MemMap;
  static constexpr std::string_view kName = "mem-map";
  uint64_t address = 0;
  uint64_t size = 0;
  uint64_t handle = 0;
  uint64_t offset = 0;

  static void fields(auto& r, auto&& f) {
    f.u("address", r.address, As::Address);
    f.u("size", r.size, As::Size);
    f.u("handle", r.handle, As::Address);
    f.u("offset", r.offset);
  }
  bool operator==(const MemMap&) const = default;
};

// An address range: MemUnmap, AddressReserve and AddressFree share these fields.
struct AddressRange : Event {
  uint64_t address = 0;
  uint64_t size = 0;

  static void fields(auto& r, auto&& f) {
    f.u("address", r.address, As::Address);
    f.u("size", r.size, As::Size);
  }
  bool operator==(const AddressRange&) const = default;
};
struct MemUnmap : AddressRange {
  static constexpr Token kToken = Token::MemUnmap;
  static constexpr std::string_view kName = "mem-unmap";
};
struct AddressReserve : AddressRange {
  static constexpr Token kToken = Token::AddressReserve;
  static constexpr std::string_view kName = "address-reserve";
};
struct AddressFree : AddressRange {
  static constexpr Token kToken = Token::AddressFree;
  static constexpr std::string_view kName = "address-free";
};

// PoolCreate and PoolDestroy share these fields (the tracer writes PoolDestroy without a device).
struct PoolEvent : Event {
  uint64_t pool = 0;
  int32_t device = kNoDevice;

  static void fields(auto& r, auto&& f) {
    f.u("pool", r.pool, As::Address);
    f.device("device", r.device);
  }
  bool operator==(const PoolEvent&) const = default;
};
struct PoolCreate : PoolEvent {
  static constexpr Token kToken = Token::PoolCreate;
  static constexpr std::string_view kName = "pool-create";
};
struct PoolDestroy : PoolEvent {
  static constexpr Token kToken = Token::PoolDestroy;
  static constexpr std::string_view kName = "pool-destroy";
};

struct PoolTrim : Event {
  static constexpr Token kToken = Token::PoolTrim;
  static constexpr std::string_view kName = "pool-trim";
  uint64_t pool = 0;
  uint64_t min_bytes_to_keep = 0;
  uint64_t reserved_after = 0;
  uint64_t used_after = 0;

  static void fields(auto& r, auto&& f) {
    f.u("pool", r.pool, As::Address);
    f.u("min_bytes_to_keep", r.min_bytes_to_keep, As::Size);
    f.u("reserved_after", r.reserved_after, As::Size);
    f.u("used_after", r.used_after, As::Size);
  }
  bool operator==(const PoolTrim&) const = default;
};

// A memory pool's release threshold (CU_MEMPOOL_ATTR_RELEASE_THRESHOLD): the pool keeps up to this many
// bytes reserved when it has memory to give back. Written by the CUPTI backend when it first learns it, and
// when it changes.
struct PoolThreshold : Event {
  static constexpr Token kToken = Token::PoolThreshold;
  static constexpr std::string_view kName = "pool-threshold";
  uint64_t pool = 0;
  uint64_t release_threshold = 0;

  static void fields(auto& r, auto&& f) {
    f.u("pool", r.pool, As::Address);
    f.u("release_threshold", r.release_threshold, As::Size);
  }
  bool operator==(const PoolThreshold&) const = default;
};

// The capture source of the records that follow, until the next Source record (format::CaptureSource;
// before the first one: interposition). Not an event: it has no time.
struct Source {
  static constexpr Token kToken = Token::Source;
  static constexpr std::string_view kName = "source";
  uint64_t source = 0;

  static void fields(auto& r, auto&& f) {
    f.u("source", r.source);
  }
  bool operator==(const Source&) const = default;
};

// A memory pool's state when an allocation ran out of memory.
struct PoolUsage : Event {
  static constexpr Token kToken = Token::PoolUsage;
  static constexpr std::string_view kName = "pool-usage";
  uint64_t pool = 0;
  int32_t device = kNoDevice;
  uint64_t reserved_bytes = 0;
  uint64_t used_bytes = 0;

  static void fields(auto& r, auto&& f) {
    f.u("pool", r.pool, As::Address);
    f.device("device", r.device);
    f.u("reserved", r.reserved_bytes, As::Size);
    f.u("used", r.used_bytes, As::Size);
  }
  bool operator==(const PoolUsage&) const = default;
};

struct MemInfo : Event {
  static constexpr Token kToken = Token::MemInfo;
  static constexpr std::string_view kName = "mem-info";
  int32_t device = kNoDevice;
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;

  static void fields(auto& r, auto&& f) {
    f.device("device", r.device);
    f.u("free", r.free_bytes, As::Size);
    f.u("total", r.total_bytes, As::Size);
  }
  bool operator==(const MemInfo&) const = default;
};

// Phases (NVTX ranges; docs/trace-format.md, "Phases"). Names and domains are written once, before the
// first record that uses them; their indexes count from 0 (names) and 1 (domains; 0 is the default domain).
struct PhaseDomain {
  static constexpr Token kToken = Token::PhaseDomain;
  static constexpr std::string_view kName = "phase-domain";
  uint64_t index = 0;
  std::string_view name;

  static void fields(auto& r, auto&& f) {
    f.u("index", r.index);
    f.str("name", r.name);
  }
  bool operator==(const PhaseDomain&) const = default;
};

struct PhaseName {
  static constexpr Token kToken = Token::PhaseName;
  static constexpr std::string_view kName = "phase-name";
  uint64_t index = 0;
  uint64_t domain = 0;
  std::string_view name;

  static void fields(auto& r, auto&& f) {
    f.u("index", r.index);
    f.u("domain", r.domain);
    f.str("name", r.name);
  }
  bool operator==(const PhaseName&) const = default;
};

// The current thread enters the phase `name` (a PhaseName index), nested in the ones it is in.
struct PhasePush : Event {
  static constexpr Token kToken = Token::PhasePush;
  static constexpr std::string_view kName = "phase-push";
  uint64_t name = 0;

  static void fields(auto& r, auto&& f) {
    f.u("name", r.name);
  }
  bool operator==(const PhasePush&) const = default;
};

// The current thread leaves its innermost phase of `domain`.
struct PhasePop : Event {
  static constexpr Token kToken = Token::PhasePop;
  static constexpr std::string_view kName = "phase-pop";
  uint64_t domain = 0;

  static void fields(auto& r, auto&& f) {
    f.u("domain", r.domain);
  }
  bool operator==(const PhasePop&) const = default;
};

// A process-wide phase (not nested in a thread's phases): `id` is unique among the open ones.
struct RangeStart : Event {
  static constexpr Token kToken = Token::RangeStart;
  static constexpr std::string_view kName = "range-start";
  uint64_t id = 0;
  uint64_t name = 0;

  static void fields(auto& r, auto&& f) {
    f.u("id", r.id);
    f.u("name", r.name);
  }
  bool operator==(const RangeStart&) const = default;
};

struct RangeEnd : Event {
  static constexpr Token kToken = Token::RangeEnd;
  static constexpr std::string_view kName = "range-end";
  uint64_t id = 0;

  static void fields(auto& r, auto&& f) {
    f.u("id", r.id);
  }
  bool operator==(const RangeEnd&) const = default;
};

// Sub-allocators (docs/trace-format.md, "Heaps"): a heap is memory a program's own allocator hands out in
// blocks (annotate.h, or the NVTX memory extension). Heap ids are the tracer's, from 1, unique in a trace;
// heap 0 holds the blocks that belong to no heap. A heap's memory is [address, address+size) (size 0:
// not said).
struct HeapCreate : Event {
  static constexpr Token kToken = Token::HeapCreate;
  static constexpr std::string_view kName = "heap-create";
  uint64_t heap = 0;
  int32_t device = kNoDevice;
  uint64_t address = 0;
  uint64_t size = 0;
  std::string_view name;

  static void fields(auto& r, auto&& f) {
    f.u("heap", r.heap);
    f.device("device", r.device);
    f.u("address", r.address, As::Address);
    f.u("size", r.size, As::Size);
    f.str("name", r.name);
  }
  bool operator==(const HeapCreate&) const = default;
};

// The heap is gone (HeapDestroy), or all its blocks are freed at once (HeapReset).
struct HeapDestroy : Event {
  static constexpr Token kToken = Token::HeapDestroy;
  static constexpr std::string_view kName = "heap-destroy";
  uint64_t heap = 0;

  static void fields(auto& r, auto&& f) {
    f.u("heap", r.heap);
  }
  bool operator==(const HeapDestroy&) const = default;
};

struct HeapReset : Event {
  static constexpr Token kToken = Token::HeapReset;
  static constexpr std::string_view kName = "heap-reset";
  uint64_t heap = 0;

  static void fields(auto& r, auto&& f) {
    f.u("heap", r.heap);
  }
  bool operator==(const HeapReset&) const = default;
};

// A block of `size` bytes asked for, at `address` in `heap`, with the stack that asked. `reserved`: the
// bytes the allocator set aside for it (its size rounded up, a split's remainder kept), 0 when not said.
struct SubAlloc : Event {
  static constexpr Token kToken = Token::SubAlloc;
  static constexpr std::string_view kName = "sub-alloc";
  static constexpr std::string_view kNoun = "sub-allocation";
  uint64_t heap = 0;
  uint64_t address = 0;
  uint64_t size = 0;
  uint64_t reserved = 0;
  uint32_t stack = 0;

  static void fields(auto& r, auto&& f) {
    f.u("heap", r.heap);
    f.u("address", r.address, As::Address);
    f.u("size", r.size, As::Size);
    f.u("reserved", r.reserved, As::Size);
    f.stack("stack", r.stack);
  }
  bool operator==(const SubAlloc&) const = default;
};

struct SubFree : Event {
  static constexpr Token kToken = Token::SubFree;
  static constexpr std::string_view kName = "sub-free";
  uint64_t heap = 0;
  uint64_t address = 0;

  static void fields(auto& r, auto&& f) {
    f.u("heap", r.heap);
    f.u("address", r.address, As::Address);
  }
  bool operator==(const SubFree&) const = default;
};

// The program freed the live block at `address` in `heap`, but its allocator keeps the block until the GPU
// work that uses it is done (PyTorch's record_stream: a block "active_pending_free"): it is no longer the
// program's, and not free yet. Its SubFree follows.
struct SubFreeRequested : Event {
  static constexpr Token kToken = Token::SubFreeRequested;
  static constexpr std::string_view kName = "sub-free-requested";
  static constexpr std::string_view kNoun = "requested free";
  uint64_t heap = 0;
  uint64_t address = 0;

  static void fields(auto& r, auto&& f) {
    f.u("heap", r.heap);
    f.u("address", r.address, As::Address);
  }
  bool operator==(const SubFreeRequested&) const = default;
};

// The block at `address` in `heap` is named `name` (what it holds), until it is freed or named again.
struct SubName : Event {
  static constexpr Token kToken = Token::SubName;
  static constexpr std::string_view kName = "sub-name";
  uint64_t heap = 0;
  uint64_t address = 0;
  std::string_view name;

  static void fields(auto& r, auto&& f) {
    f.u("heap", r.heap);
    f.u("address", r.address, As::Address);
    f.str("name", r.name);
  }
  bool operator==(const SubName&) const = default;
};

// PyTorch's caching allocator under the tracer (docs/trace-format.md, "PyTorch snapshots"). In a process that
// uses torch the tracer starts the Python hook python/gpumemtrace/torch_hook.py, which says that it is on
// (TorchHook) and writes each snapshot it takes next to the trace (TorchSnapshot).
struct TorchHook : Event {
  static constexpr Token kToken = Token::TorchHook;
  static constexpr std::string_view kName = "torch-hook";
  static constexpr std::string_view kNoun = "PyTorch hook";
  std::string_view torch_version;  // torch.__version__
  uint64_t history_entries = 0;    // the allocator events PyTorch's history keeps; 0: the program's own setting
  uint64_t usr1 = 0;               // format::TorchSignal: what SIGUSR1 does now

  static void fields(auto& r, auto&& f) {
    f.str("torch_version", r.torch_version);
    f.u("history_entries", r.history_entries);
    f.u("usr1", r.usr1);
  }
  bool operator==(const TorchHook&) const = default;
};

// A snapshot of PyTorch's caching allocator (torch.cuda.memory._snapshot(), pickled as _dump_snapshot writes
// it), written once its file is complete.
struct TorchSnapshot : Event {
  static constexpr Token kToken = Token::TorchSnapshot;
  static constexpr std::string_view kName = "torch-snapshot";
  static constexpr std::string_view kNoun = "PyTorch snapshot";
  uint64_t reason = 0;         // format::TorchSnapshotReason
  uint64_t sequence = 0;       // the n-th snapshot of this reason in this process, from 1
  uint64_t taken_ns = 0;       // when PyTorch's state was taken, on the clock of event times
  uint64_t taken_wall_ns = 0;  // the same moment on the wall clock: the clock of the snapshot's time_us
  std::string_view file;       // the snapshot's file name, in the trace's directory
  // Out of memory only: what PyTorch told its out-of-memory observers.
  int32_t device = kNoDevice;
  uint64_t size = 0;          // the bytes PyTorch asked CUDA for and did not get
  uint64_t device_total = 0;  // the device's memory, or the limit of set_per_process_memory_fraction
  uint64_t device_free = 0;   // the free memory CUDA reported

  static void fields(auto& r, auto&& f) {
    f.u("reason", r.reason);
    f.u("sequence", r.sequence);
    f.u("taken_ns", r.taken_ns);
    f.u("taken_wall", r.taken_wall_ns, As::WallTime);
    f.str("file", r.file);
    if (r.reason == static_cast<uint64_t>(format::TorchSnapshotReason::OutOfMemory)) {
      f.device("device", r.device);
      f.u("size", r.size, As::Size);
      f.u("device_total", r.device_total, As::Size);
      f.u("device_free", r.device_free, As::Size);
    }
  }
  bool operator==(const TorchSnapshot&) const = default;
};

// A device as NVML showed it (docs/trace-format.md, "Device state"), written by the tracer when the process first
// allocates, at each out-of-memory failure and at the end, one per NVML device; `processes` DeviceProcess
// records follow it, the processes NVML listed on that device (the traced process among them when it holds
// memory there). No DeviceState at all: NVML was not available.
struct DeviceState : Event {
  static constexpr Token kToken = Token::DeviceState;
  static constexpr std::string_view kName = "device-state";
  static constexpr std::string_view kNoun = "device state";
  uint64_t moment = 0;        // format::DeviceStateMoment
  uint64_t index = 0;         // NVML's index of the device (not a CUDA ordinal)
  std::string_view uuid;      // "GPU-..."
  std::string_view pci_bus_id;
  uint64_t device_free = 0;   // 0 and 0 when NVML would not say
  uint64_t device_total = 0;
  uint64_t processes = 0;     // the DeviceProcess records that follow

  static void fields(auto& r, auto&& f) {
    f.u("moment", r.moment);
    f.u("index", r.index);
    f.str("uuid", r.uuid);
    f.str("pci_bus_id", r.pci_bus_id);
    f.u("device_free", r.device_free, As::Size);
    f.u("device_total", r.device_total, As::Size);
    f.u("processes", r.processes);
  }
  bool operator==(const DeviceState&) const = default;
};

// A process holding memory on the device of the DeviceState it follows.
struct DeviceProcess {
  static constexpr Token kToken = Token::DeviceProcess;
  static constexpr std::string_view kName = "device-process";
  static constexpr std::string_view kNoun = "device process";
  uint64_t pid = 0;
  uint64_t bytes = 0;
  std::string_view command;  // NVML's name of the process; empty when NVML would not say

  static void fields(auto& r, auto&& f) {
    f.u("pid", r.pid);
    f.u("bytes", r.bytes, As::Size);
    f.str("command", r.command);
  }
  bool operator==(const DeviceProcess&) const = default;
};

// A CUDA context the process made (docs/trace-format.md, "Contexts"): cuCtxCreate, or cuDevicePrimaryCtxRetain of
// a primary context that was not active. The device's UUID ties the CUDA ordinal to NVML's DeviceState; the
// device's free memory just before and just after, as NVML saw it, is what the context cost (0, 0 and 0 when
// NVML is not available).
struct Context : Event {
  static constexpr Token kToken = Token::Context;
  static constexpr std::string_view kName = "context";
  int32_t device = kNoDevice;  // the CUDA ordinal
  uint64_t primary = 0;        // 1: the device's primary context (what the runtime uses), 0: cuCtxCreate
  std::string_view uuid;       // "GPU-..." (cuDeviceGetUuid); empty when the driver would not say
  uint64_t free_before = 0;
  uint64_t free_after = 0;
  uint64_t total = 0;

  static void fields(auto& r, auto&& f) {
    f.device("device", r.device);
    f.u("primary", r.primary);
    f.str("uuid", r.uuid);
    f.u("free_before", r.free_before, As::Size);
    f.u("free_after", r.free_after, As::Size);
    f.u("total", r.total, As::Size);
  }
  bool operator==(const Context&) const = default;
};

// The variables that place a process on a GPU, as it started; written after Process when either is set.
struct Placement {
  static constexpr Token kToken = Token::Placement;
  static constexpr std::string_view kName = "placement";
  int64_t local_rank = -1;           // LOCAL_RANK and its launchers' names (common/output_pattern.h); -1: unset
  uint64_t visible_devices_set = 0;  // 1: CUDA_VISIBLE_DEVICES was set (maybe empty)
  std::string_view visible_devices;

  static void fields(auto& r, auto&& f) {
    f.s("local_rank", r.local_rank);
    f.u("visible_devices_set", r.visible_devices_set);
    f.str("visible_devices", r.visible_devices);
  }
  bool operator==(const Placement&) const = default;
};

// A named parameter of the run (`gpumemtrace run --param batch=32`, or GPUMEMTRACE_PARAMS set by hand); written after
// Process (and Placement), one per parameter.
struct Param {
  static constexpr Token kToken = Token::Param;
  static constexpr std::string_view kName = "param";
  std::string_view name;
  std::string_view value;

  static void fields(auto& r, auto&& f) {
    f.str("name", r.name);
    f.str("value", r.value);
  }
  bool operator==(const Param&) const = default;
};

// The process ended normally. It has a time but is not an event itself.
struct End : Event {
  static constexpr Token kToken = Token::End;
  static constexpr std::string_view kName = "end";
  uint64_t events_written = 0;

  static void fields(auto& r, auto&& f) {
    f.u("events_written", r.events_written);
  }
  bool operator==(const End&) const = default;
};

// The state records: the reader applies them itself and never returns them.
struct Time {
  static constexpr Token kToken = Token::Time;
  static constexpr std::string_view kName = "time";
  uint64_t delta_ns = 0;  // how far the current time advances

  static void fields(auto& r, auto&& f) {
    f.u("delta_ns", r.delta_ns);
  }
};

struct Device {
  static constexpr Token kToken = Token::Device;
  static constexpr std::string_view kName = "device";
  int32_t device = kNoDevice;  // of the Alloc records that follow

  static void fields(auto& r, auto&& f) {
    f.device("device", r.device);
  }
};

// Every record the reader returns.
using Record = std::variant<Process, ModulesBegin, Module, StacksReset, StackNode, ThreadNew, ThreadSwitch, Fork, Alloc,
                            Free, AllocFailed, FreeFailed, MemMap, MemUnmap, AddressReserve, AddressFree, PoolCreate,
                            PoolDestroy, PoolTrim, PoolUsage, MemInfo, End, PythonCode, PhaseDomain, PhaseName,
                            PhasePush, PhasePop, RangeStart, RangeEnd, HeapCreate, HeapDestroy, HeapReset, SubAlloc,
                            SubFree, SubName, PoolThreshold, Source, TorchHook, TorchSnapshot, NativeFunction,
                            SubFreeRequested, DeviceState, DeviceProcess, Context, Placement, Param>;

// Records that say what the program did, which End counts: those with a time, but End.
template <typename R>
inline constexpr bool kIsEvent = std::is_base_of_v<Event, R> && !std::is_same_v<R, End>;

// "alloc", "free", "stack-node", ...: the record's name in dumps and messages.
inline std::string_view record_name(const Record& record) {
  return std::visit([](const auto& r) { return std::decay_t<decltype(r)>::kName; }, record);
}

// What the reader's messages call a record: "failed allocation refers to undefined stack 3".
template <typename R>
constexpr std::string_view noun_of() {
  if constexpr (requires { R::kNoun; })
    return R::kNoun;
  else
    return R::kName;
}

namespace detail {
template <typename... Rs>
constexpr bool distinct_tokens(std::variant<Rs...>*) {
  const Token tokens[] = {Rs::kToken..., Time::kToken, Device::kToken};
  for (size_t i = 0; i < std::size(tokens); ++i)
    for (size_t j = i + 1; j < std::size(tokens); ++j)
      if (tokens[i] == tokens[j]) return false;
  return true;
}
}  // namespace detail
static_assert(detail::distinct_tokens(static_cast<Record*>(nullptr)), "two records share a token");

}  // namespace gpumemtrace::trace
