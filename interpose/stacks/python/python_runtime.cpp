#include "interpose/stacks/python/python_runtime.h"

#include <cstdio>
#include <cstring>

namespace gpumemtrace::interpose::python {

namespace {

unsigned version_major(uint32_t hex) { return hex >> 24; }
unsigned version_minor(uint32_t hex) { return (hex >> 16) & 0xFF; }
unsigned version_micro(uint32_t hex) { return (hex >> 8) & 0xFF; }

RuntimeProbe unsupported(RuntimeProbe probe, const char* why) {
  probe.status = RuntimeStatus::kUnsupported;
  std::snprintf(probe.reason, sizeof probe.reason, "CPython %u.%u.%u: %s", version_major(probe.runtime.version_hex),
                version_minor(probe.runtime.version_hex), version_micro(probe.runtime.version_hex), why);
  return probe;
}

}  // namespace

uint32_t parse_version_text(const char* text) {
  if (!text) return 0;
  unsigned parts[3] = {0, 0, 0};
  size_t part = 0;
  bool digits = false;
  for (const char* p = text; part < 3; ++p) {
    if (*p >= '0' && *p <= '9') {
      parts[part] = parts[part] * 10 + static_cast<unsigned>(*p - '0');
      if (parts[part] > 255) return 0;
      digits = true;
    } else if (*p == '.' && digits && part < 2) {
      ++part;
      digits = false;
    } else {
      if (!digits || part < 1) return 0;  // at least "major.minor"
      break;
    }
  }
  return parts[0] << 24 | parts[1] << 16 | parts[2] << 8 | 0xF0;
}

RuntimeProbe probe_runtime(SymbolLookup lookup) {
  RuntimeProbe probe;
  PythonRuntime& rt = probe.runtime;
  rt.this_thread_state = reinterpret_cast<void* (*)()>(lookup("PyGILState_GetThisThreadState"));
  rt.addr2line = reinterpret_cast<int (*)(void*, int)>(lookup("PyCode_Addr2Line"));
  rt.code_type = lookup("PyCode_Type");
  rt.unicode_type = lookup("PyUnicode_Type");
  rt.runtime = lookup("_PyRuntime");
  if (!rt.this_thread_state || !rt.addr2line || !rt.code_type || !rt.unicode_type) return probe;  // kAbsent

  if (const void* version = lookup("Py_Version")) {  // 3.11+: a const unsigned long
    unsigned long hex;
    std::memcpy(&hex, version, sizeof hex);
    rt.version_hex = static_cast<uint32_t>(hex);
  } else if (auto get_version = reinterpret_cast<const char* (*)()>(lookup("Py_GetVersion"))) {
    // 3.10 and older: formats PY_VERSION into a static buffer, no allocation, no GIL needed.
    rt.version_hex = parse_version_text(get_version());
  }
  if (version_major(rt.version_hex) != 3) {
    probe.status = RuntimeStatus::kUnsupported;
    std::snprintf(probe.reason, sizeof probe.reason, "CPython of unknown version (0x%08x)", rt.version_hex);
    return probe;
  }
  unsigned minor = version_minor(rt.version_hex);
  rt.layout = layout_for_minor(minor);
  if (!rt.layout) return unsupported(probe, minor < 10 ? "older than 3.10" : "newer than 3.14, no layout known");
  // Where the thread finalizing the interpreter is noted: the table's offset, or _Py_DebugOffsets'.
  bool finalizing_known = rt.layout->runtime_finalizing != kNoField;
  size_t finalizing = finalizing_known ? static_cast<size_t>(rt.layout->runtime_finalizing) : 0;
  if (debug_offsets_layout_for_minor(minor)) {
    if (const char* why = check_debug_offsets(*rt.layout, rt.runtime, rt.version_hex, &finalizing)) {
      rt.layout = nullptr;
      return unsupported(probe, why);
    }
    finalizing_known = true;
  }
  if (rt.runtime && finalizing_known) rt.finalizing = static_cast<const char*>(rt.runtime) + finalizing;
  probe.status = RuntimeStatus::kSupported;
  return probe;
}

}  // namespace gpumemtrace::interpose::python
