#include "analyzer/symbolize/symbolizer.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fmt/format.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include "analyzer/symbolize/demangle.h"
#include "analyzer/symbolize/symbol_index.h"

namespace gpumemtrace::symbolize {

namespace {

char* g_debuginfo_path = nullptr;  // the default search path (beside the file, /usr/lib/debug)

// Whether a file named by the debug link (or, without one, "<name>.debug") is where libdwfl's default path
// looks: beside the module, in .debug beside it, or under /usr/lib/debug at the module's directory.
bool debug_link_target_exists(const char* file_name, const char* debug_link) {
  if (!file_name || file_name[0] != '/') return false;
  namespace fs = std::filesystem;
  fs::path module(file_name);
  fs::path name = debug_link ? fs::path(debug_link) : fs::path(module.filename().string() + ".debug");
  std::error_code error;
  auto is_file = [&](const fs::path& path) { return fs::is_regular_file(path, error); };
  if (name.has_parent_path()) return is_file(name);
  fs::path directory = module.parent_path();
  return is_file(directory / name) || is_file(directory / ".debug" / name) ||
         is_file(fs::path("/usr/lib/debug") / directory.relative_path() / name);
}

// dwfl_standard_find_debuginfo without its last resort, a debuginfod server: before it asks, libdwfl loads
// libdebuginfod, which loads libcurl with some 80 libraries and initializes them (about 25 ms of every report
// that symbolizes a module without debug information), and symbolization is offline. So the standard search
// runs only when the build id found nothing and a file the debug link names exists: it finds that file, and
// asks a server only when the file does not match the module.
int find_debuginfo_offline(Dwfl_Module* module, void** user_data, const char* module_name, Dwarf_Addr base,
                           const char* file_name, const char* debug_link, GElf_Word debug_link_crc,
                           char** debuginfo_file_name) {
  int fd = dwfl_build_id_find_debuginfo(module, user_data, module_name, base, file_name, debug_link,
                                        debug_link_crc, debuginfo_file_name);
  if (fd >= 0 || !debug_link_target_exists(file_name, debug_link)) return fd;
  return dwfl_standard_find_debuginfo(module, user_data, module_name, base, file_name, debug_link, debug_link_crc,
                                      debuginfo_file_name);
}

const Dwfl_Callbacks kOfflineCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = find_debuginfo_offline,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &g_debuginfo_path,
};

std::string hex(std::string_view bytes) {
  std::string out;
  for (char byte : bytes) out += fmt::format("{:02x}", static_cast<uint8_t>(byte));
  return out;
}

const char* string_attribute(Dwarf_Die* die, unsigned name) {
  Dwarf_Attribute attribute;
  return dwarf_formstring(dwarf_attr_integrate(die, name, &attribute));
}

// A function DIE's name: its linkage name demangled (it tells overloads and namespaces apart), else its
// plain name; both looked up through DW_AT_abstract_origin and DW_AT_specification.
std::string function_name(Dwarf_Die* die) {
  for (unsigned name : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name})
    if (const char* linkage = string_attribute(die, name)) return demangle(linkage);
  const char* plain = string_attribute(die, DW_AT_name);
  return plain ? plain : "";
}

bool is_function_scope(Dwarf_Die* die) {
  int tag = dwarf_tag(die);
  return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine || tag == DW_TAG_entry_point;
}

uint64_t unsigned_attribute(Dwarf_Die* die, unsigned name) {
  Dwarf_Attribute attribute;
  Dwarf_Word value = 0;
  if (dwarf_formudata(dwarf_attr(die, name, &attribute), &value) != 0) return 0;
  return value;
}

}  // namespace

struct Symbolizer::ModuleDebug {
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;  // nullptr: not usable (missing, changed, not ELF)
  Dwarf_Addr bias = 0;
  // Made at the module's second symbol lookup: a module asked once costs one scan of its table either way.
  std::unique_ptr<SymbolIndex> symbols;
  unsigned symbol_lookups = 0;

  // The ELF symbol's name at the address, as dwfl_module_addrinfo gives it; nullptr for none.
  const char* symbol_name(Dwarf_Addr address) {
    if (++symbol_lookups == 2) symbols = std::make_unique<SymbolIndex>(module);
    if (symbols)
      if (std::optional<const char*> name = symbols->name(address)) return *name;
    GElf_Off offset = 0;
    GElf_Sym symbol;
    return dwfl_module_addrinfo(module, address, &offset, &symbol, nullptr, nullptr, nullptr);
  }

  ~ModuleDebug() {
    if (dwfl) dwfl_end(dwfl);
  }
};

Symbolizer::Symbolizer(const std::vector<replay::ModuleRef>& modules, Warn warn)
    : modules_(modules), warn_(std::move(warn)) {
  // Symbolization is offline: a DEBUGINFOD_URLS in the environment would send every module to a server.
  unsetenv("DEBUGINFOD_URLS");
}

Symbolizer::Symbolizer(const replay::StackTable& stacks, Warn warn) : Symbolizer(stacks.modules(), std::move(warn)) {
  stacks_ = &stacks;
  python_codes_ = &stacks.python_codes();
  native_functions_ = &stacks.native_functions();
}

Symbolizer::~Symbolizer() = default;

Symbolizer::ModuleDebug& Symbolizer::debug(uint32_t index) {
  if (debug_.size() <= index) debug_.resize(index + 1);
  if (debug_[index]) return *debug_[index];
  debug_[index] = std::make_unique<ModuleDebug>();
  ModuleDebug& debug = *debug_[index];
  const replay::ModuleRef& ref = modules_[index];
  if (ref.path.empty() || ref.path.front() != '/') return debug;  // linux-vdso.so.1 and the like: no file

  // The path comes from the trace: opened only if it is a regular file, never blocking (a FIFO would hang
  // open(2) until a writer came). libdwfl keeps the descriptor of a module it made and closes it.
  int fd = open(ref.path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    std::string why = fd < 0 ? std::strerror(errno) : "not a regular file";
    if (fd >= 0) close(fd);
    warn_(fmt::format("cannot read {} ({}): its frames are shown as module+offset", ref.path, why));
    return debug;
  }
  debug.dwfl = dwfl_begin(&kOfflineCallbacks);
  Dwfl_Module* module = debug.dwfl ? dwfl_report_elf(debug.dwfl, ref.path.c_str(), ref.path.c_str(), fd, 0, true)
                                   : nullptr;
  if (debug.dwfl) dwfl_report_end(debug.dwfl, nullptr, nullptr);
  if (!module) {
    close(fd);
    warn_(fmt::format("cannot read {} ({}): its frames are shown as module+offset", ref.path, dwfl_errmsg(-1)));
    return debug;
  }
  if (!ref.build_id.empty()) {
    const unsigned char* bits = nullptr;
    GElf_Addr where = 0;
    int length = dwfl_module_build_id(module, &bits, &where);
    std::string_view on_disk = length > 0 ? std::string_view(reinterpret_cast<const char*>(bits), length) : "";
    if (on_disk != ref.build_id) {
      warn_(fmt::format("{} has changed since the trace was recorded (build id {}, recorded {}): its frames are "
                        "shown as module+offset",
                        ref.path, on_disk.empty() ? "none" : hex(on_disk), hex(ref.build_id)));
      return debug;
    }
  }
  if (!dwfl_module_getelf(module, &debug.bias)) return debug;
  debug.module = module;
  return debug;
}

const std::vector<Frame>& Symbolizer::frames(replay::FrameRef frame) {
  auto it = cache_.find(frame);
  if (it == cache_.end()) it = cache_.emplace(frame, lookup(frame)).first;
  return it->second;
}

std::vector<Frame> Symbolizer::stack(std::span<const replay::FrameRef> refs) {
  std::vector<Frame> out;
  for (replay::FrameRef ref : refs) {
    const std::vector<Frame>& frames = this->frames(ref);
    out.insert(out.end(), frames.begin(), frames.end());
  }
  return out;
}

std::vector<Frame> Symbolizer::stack(replay::StackId id) {
  if (!stacks_) return {};
  return stack(stacks_->frames(id, replay::kMaxShownFrames));
}

std::vector<Frame> Symbolizer::lookup(replay::FrameRef ref) {
  if (ref.is_truncation()) {
    Frame marker;
    marker.function = "(truncated)";
    marker.kind = FrameKind::Truncated;
    return {marker};
  }
  if (ref.is_python()) {
    Frame frame;
    frame.line = ref.python_line();
    frame.kind = FrameKind::Python;
    if (python_codes_ && ref.python_code() < python_codes_->size()) {
      const replay::PythonCodeRef& code = (*python_codes_)[ref.python_code()];
      frame.function = code.qualname;
      frame.file = code.filename;
    }
    return {frame};
  }
  if (ref.is_named()) {
    Frame frame;
    frame.line = ref.python_line();
    if (native_functions_ && ref.table_index() < native_functions_->size()) {
      const replay::NativeFunctionRef& function = (*native_functions_)[ref.table_index()];
      frame.function = function.name;
      frame.file = function.file;
    }
    return {frame};
  }
  Frame bare;
  bare.offset = ref.offset;
  if (ref.module == replay::kNoModule) return {bare};
  bare.module = modules_[ref.module].path;
  ModuleDebug& debug = this->debug(ref.module);
  if (!debug.module) return {bare};

  Dwarf_Addr address = ref.offset + debug.bias;
  if (const char* name = debug.symbol_name(address)) bare.function = demangle(name);

  Dwarf_Addr cu_bias = 0;
  Dwarf_Die* cu = dwfl_module_addrdie(debug.module, address, &cu_bias);
  if (!cu) return {bare};

  // Where the address is: the line table gives the innermost source position.
  std::string file;
  int line = 0;
  if (Dwfl_Line* source = dwfl_module_getsrc(debug.module, address)) {
    if (const char* name = dwfl_lineinfo(source, nullptr, &line, nullptr, nullptr, nullptr)) file = name;
  }
  Dwarf_Files* files = nullptr;
  size_t file_count = 0;
  dwarf_getsrcfiles(cu, &files, &file_count);

  // Each inlined scope is a frame at the current position; its call site is the position in the next one.
  // dwarf_getscopes lists, after an inlined instance, the scopes of its abstract definition: the scopes
  // that really contain the instance come from dwarf_getscopes_die on the instance.
  std::vector<Frame> out;
  Dwarf_Die* scopes = nullptr;
  int scope_count = dwarf_getscopes(cu, address - cu_bias, &scopes);
  for (int i = 0; i < scope_count; ++i) {
    Dwarf_Die* scope = &scopes[i];
    if (!is_function_scope(scope)) continue;
    Frame frame = bare;
    frame.function = function_name(scope);
    if (frame.function.empty()) frame.function = bare.function;
    frame.file = file;
    frame.line = static_cast<uint32_t>(std::max(line, 0));
    bool inlined = dwarf_tag(scope) == DW_TAG_inlined_subroutine;
    frame.inlined = inlined;
    out.push_back(std::move(frame));
    if (!inlined) break;
    uint64_t call_file = unsigned_attribute(scope, DW_AT_call_file);
    const char* name = files && call_file < file_count ? dwarf_filesrc(files, call_file, nullptr, nullptr) : nullptr;
    file = name ? name : "";
    line = static_cast<int>(unsigned_attribute(scope, DW_AT_call_line));
    Dwarf_Die instance = *scope;
    free(scopes);
    scopes = nullptr;
    scope_count = dwarf_getscopes_die(&instance, &scopes);
    i = 0;  // scopes[0] is the instance itself
  }
  free(scopes);
  if (out.empty()) out.push_back(std::move(bare));  // no function DIE here (startup code): the ELF symbol
  return out;
}

}  // namespace gpumemtrace::symbolize
