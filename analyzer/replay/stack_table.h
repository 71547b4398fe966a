// The call stacks of a trace, interned for the whole replay. The reader's stack ids are trie nodes that
// are only valid until the next StacksReset, and its addresses only mean something with the module set
// current when they were recorded. So each stack is resolved once, the first time an id is seen, into
// frames of (module, offset); equal stacks share one StackId across resets. Frames inside the tracer
// itself are dropped: they are never part of what the program did.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "trace/reader/reader.h"

namespace gpumemtrace::replay {

using StackId = uint32_t;               // 0 is the empty stack
inline constexpr uint32_t kNoModule = UINT32_MAX;

struct ModuleRef {
  std::string path;
  std::string build_id;  // raw bytes
  uint64_t base = 0;     // load bias
};

struct FrameRef {
  uint32_t module = kNoModule;  // index into modules(), or kNoModule
  uint64_t offset = 0;          // address - base; the absolute address when there is no module
  auto operator<=>(const FrameRef&) const = default;
};

bool is_tracer_module(std::string_view path);

class StackTable {
 public:
  StackTable();

  // The interned stack of a trie id of the reader's current trie. O(1) once the id has been seen.
  StackId intern(const trace::Reader& reader, uint32_t trie_id) {
    if (reader.stacks().generation() != trie_generation_) forget_trie(reader.stacks().generation());
    if (trie_id < by_trie_id_.size() && by_trie_id_[trie_id] != kUnseen) return by_trie_id_[trie_id];
    return resolve(reader, trie_id);
  }

  size_t size() const { return stacks_.size(); }
  std::span<const FrameRef> frames(StackId id) const { return *stacks_[id]; }  // innermost first
  const std::vector<ModuleRef>& modules() const { return modules_; }

 private:
  static constexpr StackId kUnseen = UINT32_MAX;
  StackId resolve(const trace::Reader& reader, uint32_t trie_id);
  void forget_trie(uint32_t generation);
  uint32_t module_index(const trace::ModuleInfo& module);

  uint32_t trie_generation_ = 0;
  std::vector<StackId> by_trie_id_;  // for the current trie
  std::vector<const std::vector<FrameRef>*> stacks_;  // the keys of ids_
  std::map<std::vector<FrameRef>, StackId> ids_;
  std::vector<ModuleRef> modules_;
  std::map<std::tuple<std::string, std::string, uint64_t>, uint32_t> module_ids_;
  std::vector<bool> tracer_modules_;  // by module index
};

}  // namespace gpumemtrace::replay
