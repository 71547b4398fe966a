// glibc's dlsym, for the tracer's own lookups (our exported dlsym would route them back to us).
#pragma once

namespace gpumemtrace::interpose {

void* real_dlsym(void* handle, const char* name);

}  // namespace gpumemtrace::interpose
