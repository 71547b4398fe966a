#include "interpose/torch/torch_hook.h"

#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "gpumemtrace/trace_records.h"
#include "interpose/base/real_dlsym.h"
#include "interpose/base/config.h"
#include "interpose/base/debug_log.h"
#include "interpose/recording/recorder.h"

namespace gpumemtrace::interpose::torch {

namespace {

// The few CPython functions the hook calls, found by name. Only Py_AddPendingCall, Py_IsInitialized and
// Py_IsFinalizing are called without the GIL (documented so, or a plain read of the runtime state); the others
// only in the pending call, which runs with it.
struct PythonApi {
  int (*add_pending_call)(int (*)(void*), void*);
  int (*is_initialized)();
  int (*is_finalizing)();  // Py_IsFinalizing (3.13+), _Py_IsFinalizing before
  void* (*dict_new)();
  int (*dict_set_item_string)(void* dict, const char* key, void* value);
  void* (*dict_get_item_string)(void* dict, const char* key);  // a borrowed reference
  void* (*decode_fs_default)(const char* text);
  void* (*long_from_unsigned_long_long)(unsigned long long value);
  void* (*run_string_flags)(const char* code, int start, void* globals, void* locals, void* flags);
  void (*dec_ref)(void* object);
  const char* (*as_utf8)(void* text);
  int (*is_true)(void* object);
  void (*err_clear)();
};
constexpr int kPyFileInput = 257;  // Py_file_input: a sequence of statements

template <typename F>
bool find(F& function, const char* name) {
  function = reinterpret_cast<F>(real_dlsym(RTLD_DEFAULT, name));
  return function != nullptr;
}

const PythonApi* look_up_python() {
  static PythonApi api;
  bool found = find(api.add_pending_call, "Py_AddPendingCall") && find(api.is_initialized, "Py_IsInitialized") &&
               (find(api.is_finalizing, "Py_IsFinalizing") || find(api.is_finalizing, "_Py_IsFinalizing")) &&
               find(api.dict_new, "PyDict_New") && find(api.dict_set_item_string, "PyDict_SetItemString") &&
               find(api.dict_get_item_string, "PyDict_GetItemString") &&
               find(api.decode_fs_default, "PyUnicode_DecodeFSDefault") &&
               find(api.long_from_unsigned_long_long, "PyLong_FromUnsignedLongLong") &&
               find(api.run_string_flags, "PyRun_StringFlags") && find(api.dec_ref, "Py_DecRef") &&
               find(api.as_utf8, "PyUnicode_AsUTF8") && find(api.is_true, "PyObject_IsTrue") &&
               find(api.err_clear, "PyErr_Clear");
  return found ? &api : nullptr;
}

const PythonApi* python_api() {
  static const PythonApi* api = look_up_python();
  return api;
}

// Run by the pending call with `directory` (where the package gpumemtrace is), `trace` and `entries` set. It
// leaves sys.path as it found it; `message` is what to log (`warning`: on stderr). An exception that is not an
// Exception (KeyboardInterrupt) goes on to the program, which would have had it at that moment anyway.
constexpr const char kStartHook[] = R"(import sys
message, warning = '', False
if 'torch' not in sys.modules:
    message = 'torch is not imported at the first GPU allocation: no PyTorch snapshots'
else:
    try:
        sys.path.insert(0, directory)
        try:
            from gpumemtrace import torch_hook
        finally:
            sys.path.remove(directory)
        torch_hook.enable(trace, entries)
    except Exception as error:
        message, warning = 'the PyTorch hook is off: %s: %s' % (type(error).__name__, error), True
)";

enum State : int {
  kOff,        // GPUMEMTRACE_TORCH=0, no module, no Python, or scheduled already
  kWaiting,    // for an allocation in a process whose interpreter is initialized
  kScheduling  // one allocation is at it
};
std::atomic<int> g_state{kOff};
char g_module_dir[PATH_MAX];  // holds gpumemtrace/torch_hook.py

bool is_file(const std::string& path) { return access(path.c_str(), R_OK) == 0; }

// The layouts `gpumemtrace run` knows (analyzer/cli/tracer_layout.h): build/lib → build/python,
// PREFIX/lib → PREFIX/share/gpumemtrace/python.
bool find_module_dir(const char* library) {
  char resolved[PATH_MAX];
  if (!realpath(library, resolved)) return false;
  std::string lib_dir(resolved);
  lib_dir.erase(lib_dir.rfind('/'));
  for (const char* relative : {"/../python", "/../share/gpumemtrace/python"}) {
    std::string candidate = lib_dir + relative;
    if (is_file(candidate + "/gpumemtrace/torch_hook.py") && realpath(candidate.c_str(), resolved)) {
      std::strcpy(g_module_dir, resolved);
      return true;
    }
  }
  return false;
}

bool set_item(const PythonApi& py, void* dict, const char* key, void* value) {
  if (!value) return false;
  bool set = py.dict_set_item_string(dict, key, value) == 0;
  py.dec_ref(value);
  return set;
}

void report(const PythonApi& py, void* globals) {
  void* message = py.dict_get_item_string(globals, "message");
  void* warning = py.dict_get_item_string(globals, "warning");
  const char* text = message ? py.as_utf8(message) : nullptr;
  if (!text) {
    py.err_clear();
  } else if (*text) {
    if (warning && py.is_true(warning) == 1)
      warn("%s", text);
    else
      debug_log("%s", text);
  }
}

// On the main thread, with the GIL: runs kStartHook. Returns 0, or -1 with the exception set (kStartHook).
int start_hook(void*) {
  const PythonApi& py = *python_api();
  std::string trace = trace_path();
  if (trace.empty()) {
    debug_log("no trace is open: no PyTorch hook");
    return 0;
  }
  void* globals = py.dict_new();
  if (!globals) {
    py.err_clear();
    return 0;
  }
  int rc = 0;
  if (set_item(py, globals, "directory", py.decode_fs_default(g_module_dir)) &&
      set_item(py, globals, "trace", py.decode_fs_default(trace.c_str())) &&
      set_item(py, globals, "entries", py.long_from_unsigned_long_long(tracer_config().torch_entries))) {
    if (void* result = py.run_string_flags(kStartHook, kPyFileInput, globals, globals, nullptr)) {
      py.dec_ref(result);
      report(py, globals);
    } else {
      rc = -1;
    }
  } else {
    py.err_clear();
  }
  py.dec_ref(globals);
  return rc;
}

// What the allocation that got to schedule the hook leaves the state at.
State schedule() {
  BusyGuard busy;
  const PythonApi* py = python_api();
  if (!py) {
    debug_log("no Python interpreter: no PyTorch hook");
    return kOff;
  }
  if (!py->is_initialized()) return kWaiting;  // a program that embeds Python and has not started it yet
  if (py->is_finalizing()) return kOff;
  // Fails only when CPython's queue of pending calls is full: a later allocation tries again.
  if (py->add_pending_call(&start_hook, nullptr) != 0) return kWaiting;
  debug_log("the PyTorch hook is scheduled on the main thread");
  return kOff;
}

}  // namespace

void prepare() {
  if (!recording_enabled()) return;
  if (!tracer_config().torch) {
    debug_log("GPUMEMTRACE_TORCH=0: no PyTorch hook");
    return;
  }
  Dl_info self{};
  if (!dladdr(reinterpret_cast<void*>(&prepare), &self) || !self.dli_fname || !find_module_dir(self.dli_fname)) {
    debug_log("no gpumemtrace/torch_hook.py beside %s (../python, ../share/gpumemtrace/python): no PyTorch hook",
              self.dli_fname ? self.dli_fname : "the tracer");
    return;
  }
  g_state.store(kWaiting, std::memory_order_release);
}

void on_allocation() {
  if (g_state.load(std::memory_order_relaxed) != kWaiting) return;
  int expected = kWaiting;
  if (!g_state.compare_exchange_strong(expected, kScheduling, std::memory_order_acquire)) return;
  g_state.store(schedule(), std::memory_order_release);
}

void record_hook_on(const char* torch_version, uint64_t history_entries, int usr1) {
  record(trace::TorchHook{{}, torch_version ? torch_version : "", history_entries, static_cast<uint64_t>(usr1)});
}

void record_snapshot_written(const SnapshotWritten& s) {
  trace::TorchSnapshot record{{},
                              static_cast<uint64_t>(s.reason),
                              s.sequence,
                              0,
                              s.taken_wall_ns,
                              s.file ? s.file : "",
                              s.device,
                              s.size,
                              s.device_total,
                              s.device_free};
  record_event(
      [&](writer::TraceWriter& writer, uint64_t) {
        record.taken_ns = writer.trace_time(s.taken_monotonic_ns);
        writer.write(record);
      },
      false);
  if (s.reason == static_cast<int>(format::TorchSnapshotReason::OutOfMemory))
    sync_trace();  // the process may be about to die of it
}

}  // namespace gpumemtrace::interpose::torch
