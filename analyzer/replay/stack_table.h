// The call stacks of a trace, interned for the whole replay. The reader's stack ids are trie nodes that
// are only valid until the next StacksReset, and its addresses only mean something with the module set
// current when they were recorded. So each of the reader's trie nodes is resolved once, the first time an
// id under it is seen, into a node of this table's own trie of frames of (module, offset): a stack is its
// innermost frame and the stack it was called from, so stacks share their callers' frames (a chain of N
// nested calls costs N nodes, not N²/2 frames) and equal stacks share one StackId across resets. Frames
// inside the tracer itself are dropped: they are never part of what the program did.
//
// A Python frame (format::is_python_frame) becomes a frame of the code table python_codes(), where a code
// is its (file name, qualified name, first line): the same Python line is the same FrameRef across resets
// and whatever PythonCode index the trace gave it. A named native frame (format::is_named_frame) becomes a
// frame of the function table native_functions() the same way. The marker of a cut stack becomes a frame of
// its own.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "trace/reader/reader.h"

namespace gpumemtrace::replay {

using StackId = uint32_t;               // 0 is the empty stack
inline constexpr uint32_t kNoModule = UINT32_MAX;
inline constexpr uint32_t kPythonCode = UINT32_MAX - 1;  // FrameRef::module of a Python frame
inline constexpr uint32_t kTruncation = UINT32_MAX - 2;  // FrameRef::module of the marker of a cut stack
inline constexpr uint32_t kNativeFunction = UINT32_MAX - 3;  // FrameRef::module of a named native frame

struct ModuleRef {
  std::string path;
  std::string build_id;  // raw bytes
  uint64_t base = 0;     // load bias
};

// A Python code of the stack table: a function, method, module body, ...
struct PythonCodeRef {
  std::string filename;
  std::string qualname;  // "Class.method", "outer.<locals>.inner"; CPython 3.10: the plain name
  uint64_t first_line = 0;
  auto operator<=>(const PythonCodeRef&) const = default;
};

// A native function of the stack table known by name only (a frame of a PyTorch snapshot).
struct NativeFunctionRef {
  std::string name;
  std::string file;  // empty: unknown
  auto operator<=>(const NativeFunctionRef&) const = default;
};

struct FrameRef {
  uint32_t module = kNoModule;  // index into modules(), or kNoModule, kPythonCode, kTruncation, kNativeFunction
  uint64_t offset = 0;          // address - base; the absolute address when there is no module;
                                // a Python frame: code index into python_codes() << 32 | line;
                                // a named native frame: index into native_functions() << 32 | line
  auto operator<=>(const FrameRef&) const = default;

  static FrameRef python(uint32_t code, uint32_t line) { return {kPythonCode, uint64_t{code} << 32 | line}; }
  static FrameRef named(uint32_t function, uint32_t line) { return {kNativeFunction, uint64_t{function} << 32 | line}; }
  static FrameRef truncation() { return {kTruncation, 0}; }
  bool is_python() const { return module == kPythonCode; }
  bool is_named() const { return module == kNativeFunction; }
  bool is_truncation() const { return module == kTruncation; }
  // Python and named frames: the index into their table, and the line (0: unknown).
  uint32_t table_index() const { return static_cast<uint32_t>(offset >> 32); }
  uint32_t python_code() const { return table_index(); }                  // Python frames only
  uint32_t python_line() const { return static_cast<uint32_t>(offset); }  // Python and named frames
};

// The most frames of one stack that reports and exports show: the deepest stack the tracer records
// (GPUMEMTRACE_STACK_DEPTH's maximum). Deeper stacks come from PyTorch snapshots or crafted traces; their
// outer frames are cut with the marker of a cut stack, so output stays in proportion to the trace.
inline constexpr size_t kMaxShownFrames = 256;

bool is_tracer_module(std::string_view path);

class StackTable {
 public:
  StackTable();

  // The interned stack of a trie id of the reader's current trie. O(1) once the id has been seen.
  StackId intern(const trace::Reader& reader, uint32_t trie_id) {
    ReaderIds& ids = ids_of(reader);
    if (trie_id < ids.by_trie_id.size() && ids.by_trie_id[trie_id] != kUnseen) return ids.by_trie_id[trie_id];
    return resolve(reader, ids, trie_id);
  }

  // Stacks and the stacks they were called from (each a StackId), the empty one included.
  size_t size() const { return nodes_.size(); }
  size_t depth(StackId id) const { return nodes_[id].depth; }
  StackId caller(StackId id) const { return nodes_[id].caller; }
  // The frames of a stack, innermost first: a walk of depth(id) steps. With `limit`, a stack deeper than
  // that keeps its `limit` innermost frames and ends with the marker of a cut stack, as the tracer cuts
  // stacks deeper than its GPUMEMTRACE_STACK_DEPTH.
  std::vector<FrameRef> frames(StackId id, size_t limit = SIZE_MAX) const;
  const std::vector<ModuleRef>& modules() const { return modules_; }
  const std::vector<PythonCodeRef>& python_codes() const { return python_codes_; }
  const std::vector<NativeFunctionRef>& native_functions() const { return native_functions_; }

 private:
  static constexpr StackId kUnseen = UINT32_MAX;
  // What one reader's ids are in this table.
  struct ReaderIds {
    const trace::Reader* reader = nullptr;
    uint32_t trie_generation = 0;
    std::vector<StackId> by_trie_id;         // for its current trie
    std::vector<uint32_t> by_trace_code;      // its PythonCode index -> python_codes() index
    std::vector<uint32_t> by_trace_function;  // its NativeFunction index -> native_functions() index
  };
  ReaderIds& ids_of(const trace::Reader& reader) {
    ReaderIds& last = readers_[last_reader_];
    if (last.reader == &reader && reader.stacks().generation() == last.trie_generation) return last;
    return switch_reader(reader);
  }
  ReaderIds& switch_reader(const trace::Reader& reader);
  StackId resolve(const trace::Reader& reader, ReaderIds& ids, uint32_t trie_id);
  uint32_t module_index(const trace::ModuleInfo& module);
  uint32_t python_code_index(const trace::Reader& reader, ReaderIds& ids, uint32_t trace_code);
  uint32_t native_function_index(const trace::Reader& reader, ReaderIds& ids, uint32_t trace_function);

  std::vector<ReaderIds> readers_ = std::vector<ReaderIds>(1);
  size_t last_reader_ = 0;
  struct Node {
    FrameRef frame;         // the innermost frame
    StackId caller = 0;     // the rest of the stack
    uint32_t depth = 0;
  };
  struct NodeKey {
    StackId caller;
    FrameRef frame;
    bool operator==(const NodeKey&) const = default;
  };
  struct NodeKeyHash {
    size_t operator()(const NodeKey& key) const {
      uint64_t h = (uint64_t{key.caller} << 32 | key.frame.module) * 0x9E3779B97F4A7C15ull;
      return static_cast<size_t>(h ^ (key.frame.offset + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2)));
    }
  };
  // The stack of `frame` called from `caller`.
  StackId child(StackId caller, FrameRef frame);
  // The frame a trie node's address stands for; nullopt for a frame of the tracer.
  std::optional<FrameRef> frame_of(const trace::Reader& reader, ReaderIds& ids, uint64_t ip);

  std::vector<Node> nodes_;  // by StackId; 0 is the empty stack
  std::unordered_map<NodeKey, StackId, NodeKeyHash> ids_;
  std::vector<ModuleRef> modules_;
  std::map<std::tuple<std::string, std::string, uint64_t>, uint32_t> module_ids_;
  std::vector<bool> tracer_modules_;  // by module index
  std::vector<PythonCodeRef> python_codes_;
  std::map<PythonCodeRef, uint32_t> python_code_ids_;
  std::vector<NativeFunctionRef> native_functions_;
  std::map<NativeFunctionRef, uint32_t> native_function_ids_;
};

}  // namespace gpumemtrace::replay
