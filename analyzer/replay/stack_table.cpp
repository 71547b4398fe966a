#include "analyzer/replay/stack_table.h"

#include <algorithm>

namespace gpumemtrace::replay {

bool is_tracer_module(std::string_view path) {
  size_t slash = path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return name == "libgpumemtrace.so";
}

StackTable::StackTable() : nodes_(1) {}

std::vector<FrameRef> StackTable::frames(StackId id, size_t limit) const {
  std::vector<FrameRef> frames;
  frames.reserve(std::min<size_t>(nodes_[id].depth, limit == SIZE_MAX ? limit : limit + 1));
  for (; id != 0 && frames.size() < limit; id = nodes_[id].caller) frames.push_back(nodes_[id].frame);
  if (id != 0) frames.push_back(FrameRef::truncation());
  return frames;
}

StackId StackTable::child(StackId caller, FrameRef frame) {
  auto [it, added] = ids_.try_emplace(NodeKey{caller, frame}, static_cast<StackId>(nodes_.size()));
  if (added) nodes_.push_back(Node{frame, caller, nodes_[caller].depth + 1});
  return it->second;
}

StackTable::ReaderIds& StackTable::switch_reader(const trace::Reader& reader) {
  auto it = std::find_if(readers_.begin(), readers_.end(), [&](const ReaderIds& ids) { return ids.reader == &reader; });
  if (it == readers_.end()) {
    it = readers_.front().reader ? readers_.insert(readers_.end(), ReaderIds{}) : readers_.begin();
    it->reader = &reader;
  }
  if (reader.stacks().generation() != it->trie_generation) {  // a StacksReset: its trie ids mean other stacks
    it->trie_generation = reader.stacks().generation();
    it->by_trie_id.clear();
  }
  last_reader_ = static_cast<size_t>(it - readers_.begin());
  return *it;
}

uint32_t StackTable::module_index(const trace::ModuleInfo& module) {
  auto [it, added] = module_ids_.try_emplace({module.path, module.build_id, module.base},
                                             static_cast<uint32_t>(modules_.size()));
  if (added) {
    modules_.push_back(ModuleRef{module.path, module.build_id, module.base});
    tracer_modules_.push_back(is_tracer_module(module.path));
  }
  return it->second;
}

namespace {

// The index in `table` of the trace's entry `trace_index`, made by `ref_of` when first seen. The reader has
// checked that the entry is defined; its tables only grow.
template <typename Ref, typename RefOf>
uint32_t table_index(uint32_t trace_index, std::vector<uint32_t>& by_trace_index, std::vector<Ref>& table,
                     std::map<Ref, uint32_t>& ids, RefOf ref_of) {
  constexpr uint32_t kUnknown = UINT32_MAX;
  if (trace_index >= by_trace_index.size()) by_trace_index.resize(trace_index + 1, kUnknown);
  uint32_t& index = by_trace_index[trace_index];
  if (index != kUnknown) return index;
  Ref ref = ref_of();
  auto [it, added] = ids.try_emplace(ref, static_cast<uint32_t>(table.size()));
  if (added) table.push_back(std::move(ref));
  return index = it->second;
}

}  // namespace

uint32_t StackTable::python_code_index(const trace::Reader& reader, ReaderIds& ids, uint32_t trace_code) {
  return table_index(trace_code, ids.by_trace_code, python_codes_, python_code_ids_, [&] {
    const trace::PythonCodeInfo& code = reader.python_codes()[trace_code];
    return PythonCodeRef{code.filename, code.qualname, code.first_line};
  });
}

uint32_t StackTable::native_function_index(const trace::Reader& reader, ReaderIds& ids, uint32_t trace_function) {
  return table_index(trace_function, ids.by_trace_function, native_functions_, native_function_ids_, [&] {
    const trace::NativeFunctionInfo& function = reader.native_functions()[trace_function];
    return NativeFunctionRef{function.name, function.file};
  });
}

std::optional<FrameRef> StackTable::frame_of(const trace::Reader& reader, ReaderIds& ids, uint64_t ip) {
  if (format::is_python_frame(ip))
    return FrameRef::python(python_code_index(reader, ids, format::python_code_of(ip)), format::python_line_of(ip));
  if (format::is_named_frame(ip))
    return FrameRef::named(native_function_index(reader, ids, format::native_function_of(ip)),
                           format::named_line_of(ip));
  if (ip == format::kTruncatedFrame) return FrameRef::truncation();
  const trace::ModuleInfo* module = reader.modules().find(ip);
  if (!module) return FrameRef{kNoModule, ip};
  uint32_t index = module_index(*module);
  if (tracer_modules_[index]) return std::nullopt;
  return FrameRef{index, ip - module->base};
}

StackId StackTable::resolve(const trace::Reader& reader, ReaderIds& ids, uint32_t trie_id) {
  if (trie_id == 0) return 0;
  const trace::StackTrie& trie = reader.stacks();
  // The trie nodes from trie_id out to the first one resolved before (or the root), innermost first. The
  // reader has validated every id it hands out, so the walk ends.
  std::vector<uint32_t> unresolved;
  for (uint32_t node = trie_id; node != 0; node = trie.node(node).parent) {
    if (node < ids.by_trie_id.size() && ids.by_trie_id[node] != kUnseen) break;
    unresolved.push_back(node);
  }
  uint32_t outer = trie.node(unresolved.back()).parent;  // resolved, or the root
  StackId stack = outer == 0 ? 0 : ids.by_trie_id[outer];
  for (auto node = unresolved.rbegin(); node != unresolved.rend(); ++node) {
    if (std::optional<FrameRef> frame = frame_of(reader, ids, trie.node(*node).ip)) stack = child(stack, *frame);
    if (ids.by_trie_id.size() <= *node) ids.by_trie_id.resize(*node + 1, kUnseen);
    ids.by_trie_id[*node] = stack;
  }
  return stack;
}

}  // namespace gpumemtrace::replay
