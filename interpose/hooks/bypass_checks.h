// Ways a program's CUDA calls can bind around the tracer, found out and said once on stderr
// (docs/capture.md, "Neighbours").
#pragma once

#include "interpose/base/real_dlsym.h"

namespace gpumemtrace::interpose {

// Looks at the libraries loaded with RTLD_DEEPBIND since the last call (dlopen_hook.cpp). One atomic load
// when there are none.
GMT_NOT_INSTRUMENTED void check_deepbind_loads();

// A runtime allocation that no driver wrapper saw: says why, if the process's dlsym is not ours
// (dlsym_hook.cpp).
void on_runtime_allocation_unseen_by_driver();

}  // namespace gpumemtrace::interpose
