// libgpumemtrace.so's start and end: the recorder opens the root process's trace at load time and writes
// the End record after the program (and every library initialized after us) has finished, or when it
// leaves through _exit.
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interpose/cupti/cupti_backend.h"
#include "interpose/hooks/bypass_checks.h"
#include "interpose/base/real_dlsym.h"
#include "interpose/nvml/device_states.h"
#include "interpose/nvtx/nvtx_tool.h"
#include "interpose/phases/phase_recorder.h"
#include "interpose/base/config.h"
#include "interpose/recording/recorder.h"
#include "interpose/torch/torch_hook.h"

__attribute__((constructor)) static void gpumemtrace_start() {
  gpumemtrace::interpose::start_recorder();
  gpumemtrace::interpose::cupti::prepare();
  gpumemtrace::interpose::phases::prepare();
  gpumemtrace::interpose::nvtx::claim_injection();
  gpumemtrace::interpose::torch::prepare();
  if (gpumemtrace::interpose::tracer_config().cupti)
    gpumemtrace::interpose::cupti::start(gpumemtrace::interpose::cupti::StartedBy::Environment);
}

// A library loaded with RTLD_DEEPBIND that nobody looked into since is looked at last.
__attribute__((destructor)) static void gpumemtrace_finish() {
  gpumemtrace::interpose::check_deepbind_loads();
  gpumemtrace::interpose::nvml_states::at_end();
  gpumemtrace::interpose::finish_recorder();
}

namespace {

[[noreturn]] void exit_now(const char* name, int status) {
  gpumemtrace::interpose::cupti::flush();
  gpumemtrace::interpose::check_deepbind_loads();
  gpumemtrace::interpose::nvml_states::at_end();
  gpumemtrace::interpose::finish_recorder();
  using ExitFn = void (*)(int);
  if (auto real = reinterpret_cast<ExitFn>(gpumemtrace::interpose::real_dlsym(RTLD_NEXT, name))) real(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

}  // namespace

// Programs that leave through _exit (shells, os._exit, forked workers) skip destructors; their trace is
// complete all the same.
extern "C" __attribute__((visibility("default"), noreturn)) void _exit(int status) { exit_now("_exit", status); }
extern "C" __attribute__((visibility("default"), noreturn)) void _Exit(int status) { exit_now("_Exit", status); }
