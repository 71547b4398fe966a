// NVTX3 (header-only, compiled into the program) loads the library named by NVTX_INJECTION64_PATH at its
// first call and calls InitializeInjectionNvtx2(getExportTable). Through the export table's
// GetModuleFunctionTable the tool replaces the entries of the modules' function tables it handles; NVTX sets
// the others to no-ops. docs/capture.md, "Phases", says what is recorded.
#define NVTX_NO_IMPL
#include "interpose/nvtx/nvtx_tool.h"

#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "interpose/base/kept_forever.h"
#include "interpose/nvtx/nvtx_message.h"
#include "interpose/phases/phase_recorder.h"
#include "interpose/base/debug_log.h"

namespace gpumemtrace::interpose::nvtx {

namespace {

constexpr const char* kInjectionVariable = sizeof(void*) == 8 ? "NVTX_INJECTION64_PATH" : "NVTX_INJECTION32_PATH";

// Per thread, the nesting level of the default domain's push/pop ranges: what nvtxRangePush/Pop return.
thread_local int t_push_level __attribute__((tls_model("initial-exec"))) = 0;

std::string utf8(const wchar_t* text) {
  std::string out;
  if (!text) return out;
  for (; *text; ++text) {
    auto c = static_cast<uint32_t>(*text);
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | c >> 6);
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | c >> 12);
      out += static_cast<char>(0x80 | (c >> 6 & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (c >> 18 & 0x07));
      out += static_cast<char>(0x80 | (c >> 12 & 0x3F));
      out += static_cast<char>(0x80 | (c >> 6 & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

// A registered string handle is a pointer to one of these, never freed.
const std::string& registered(nvtxStringHandle_t handle) { return *reinterpret_cast<const std::string*>(handle); }

}  // namespace

std::string message_text(int32_t type, const nvtxMessageValue_t& message) {
  switch (type) {
    case NVTX_MESSAGE_TYPE_ASCII:
      return message.ascii ? message.ascii : "";
    case NVTX_MESSAGE_TYPE_UNICODE:
      return utf8(message.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED:
      return message.registered ? registered(message.registered) : std::string();
    default:
      return {};
  }
}

namespace {

const phases::Domain* domain_of(nvtxDomainHandle_t domain) {
  return reinterpret_cast<const phases::Domain*>(domain);
}

// The name an event's attributes give: its ASCII, wide or registered message; empty without one.
std::string message_of(const nvtxEventAttributes_t* attributes) {
  if (!attributes || attributes->size < offsetof(nvtxEventAttributes_t, message) + sizeof(attributes->message))
    return {};
  return message_text(attributes->messageType, attributes->message);
}

// The core module: the default domain.
int range_push(std::string_view name) {
  phases::push(nullptr, name);
  return t_push_level++;
}
int NVTX_API range_push_a(const char* message) { return range_push(message ? message : ""); }
int NVTX_API range_push_w(const wchar_t* message) { return range_push(utf8(message)); }
int NVTX_API range_push_ex(const nvtxEventAttributes_t* attributes) { return range_push(message_of(attributes)); }
int NVTX_API range_pop() {
  if (t_push_level == 0) return -1;  // NVTX's answer for a pop without a push; nothing is recorded
  phases::pop(nullptr);
  return --t_push_level;
}
nvtxRangeId_t NVTX_API range_start_a(const char* message) { return phases::start(nullptr, message ? message : ""); }
nvtxRangeId_t NVTX_API range_start_w(const wchar_t* message) { return phases::start(nullptr, utf8(message)); }
nvtxRangeId_t NVTX_API range_start_ex(const nvtxEventAttributes_t* attributes) {
  return phases::start(nullptr, message_of(attributes));
}
void NVTX_API range_end(nvtxRangeId_t id) { phases::end(id); }

// The core2 module: domains and registered strings.
int NVTX_API domain_range_push_ex(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) {
  if (!domain) return range_push_ex(attributes);
  phases::push(domain_of(domain), message_of(attributes));
  return 0;
}
int NVTX_API domain_range_pop(nvtxDomainHandle_t domain) {
  if (!domain) return range_pop();
  phases::pop(domain_of(domain));
  return 0;
}
nvtxRangeId_t NVTX_API domain_range_start_ex(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) {
  return phases::start(domain_of(domain), message_of(attributes));
}
void NVTX_API domain_range_end(nvtxDomainHandle_t, nvtxRangeId_t id) { phases::end(id); }
KeptForever<std::string> g_registered_strings;
nvtxStringHandle_t NVTX_API register_string_a(nvtxDomainHandle_t, const char* text) {
  return reinterpret_cast<nvtxStringHandle_t>(g_registered_strings.keep(text ? text : ""));
}
nvtxStringHandle_t NVTX_API register_string_w(nvtxDomainHandle_t, const wchar_t* text) {
  return reinterpret_cast<nvtxStringHandle_t>(g_registered_strings.keep(utf8(text)));
}
nvtxDomainHandle_t NVTX_API domain_create_a(const char* name) {
  return reinterpret_cast<nvtxDomainHandle_t>(const_cast<phases::Domain*>(phases::create_domain(name ? name : "")));
}
nvtxDomainHandle_t NVTX_API domain_create_w(const wchar_t* name) {
  return reinterpret_cast<nvtxDomainHandle_t>(const_cast<phases::Domain*>(phases::create_domain(utf8(name))));
}
void NVTX_API domain_destroy(nvtxDomainHandle_t) {}  // the handle's memory is kept: records may name it

struct Handler {
  unsigned id;
  NvtxFunctionPointer function;
};
template <typename F>
Handler handler(unsigned id, F function) {
  return {id, reinterpret_cast<NvtxFunctionPointer>(function)};
}

bool install(NvtxGetExportTableFunc_t get_export_table, NvtxCallbackModule module,
             std::initializer_list<Handler> handlers) {
  auto callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (!callbacks || !callbacks->GetModuleFunctionTable) return false;
  NvtxFunctionTable table = nullptr;
  unsigned size = 0;
  if (!callbacks->GetModuleFunctionTable(module, &table, &size) || !table) return false;
  for (const Handler& h : handlers)
    if (h.id < size && table[h.id]) *table[h.id] = h.function;
  return true;
}

}  // namespace

void claim_injection() {
  Dl_info self{};
  if (!dladdr(reinterpret_cast<void*>(&claim_injection), &self) || !self.dli_fname) return;
  const char* current = getenv(kInjectionVariable);
  if (!current || !*current) {
    setenv(kInjectionVariable, self.dli_fname, 1);
  } else if (std::strcmp(current, self.dli_fname) != 0) {
    warn("%s names another NVTX tool (%s): NVTX ranges are not recorded", kInjectionVariable, current);
  }
}

}  // namespace gpumemtrace::interpose::nvtx

using namespace gpumemtrace::interpose::nvtx;

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  if (!get_export_table) return 0;
  bool core = install(get_export_table, NVTX_CB_MODULE_CORE,
                      {handler(NVTX_CBID_CORE_RangePushA, range_push_a), handler(NVTX_CBID_CORE_RangePushW, range_push_w),
                       handler(NVTX_CBID_CORE_RangePushEx, range_push_ex), handler(NVTX_CBID_CORE_RangePop, range_pop),
                       handler(NVTX_CBID_CORE_RangeStartA, range_start_a),
                       handler(NVTX_CBID_CORE_RangeStartW, range_start_w),
                       handler(NVTX_CBID_CORE_RangeStartEx, range_start_ex),
                       handler(NVTX_CBID_CORE_RangeEnd, range_end)});
  install(get_export_table, NVTX_CB_MODULE_CORE2,
          {handler(NVTX_CBID_CORE2_DomainRangePushEx, domain_range_push_ex),
           handler(NVTX_CBID_CORE2_DomainRangePop, domain_range_pop),
           handler(NVTX_CBID_CORE2_DomainRangeStartEx, domain_range_start_ex),
           handler(NVTX_CBID_CORE2_DomainRangeEnd, domain_range_end),
           handler(NVTX_CBID_CORE2_DomainRegisterStringA, register_string_a),
           handler(NVTX_CBID_CORE2_DomainRegisterStringW, register_string_w),
           handler(NVTX_CBID_CORE2_DomainCreateA, domain_create_a), handler(NVTX_CBID_CORE2_DomainCreateW, domain_create_w),
           handler(NVTX_CBID_CORE2_DomainDestroy, domain_destroy)});
  if (auto version = static_cast<const NvtxExportTableVersionInfo*>(get_export_table(NVTX_ETID_VERSIONINFO));
      version && version->SetInjectionNvtxVersion)
    version->SetInjectionNvtxVersion(NVTX_VERSION);
  return core ? 1 : 0;
}
