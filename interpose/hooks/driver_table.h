// The driver entry points the tracer wraps or calls (driver_functions.def), and the real functions behind
// them. A wrapper is exported under the driver's own name (for programs linked with -lcuda) and handed out
// in place of the real pointer wherever the program obtains one (dlsym, cuGetProcAddress).
#pragma once

#include <cuda.h>

namespace gpumemtrace::interpose {

enum class DriverFn : int {
#define GMT_DRIVER_WRAPPED(id, function) id,
#define GMT_DRIVER_MEMORY(id, function, api) id,
#define GMT_DRIVER_CALLED(id, function) id,
#include "interpose/hooks/driver_functions.def"
#undef GMT_DRIVER_WRAPPED
#undef GMT_DRIVER_MEMORY
#undef GMT_DRIVER_CALLED
  Count,
};

// The real driver function, resolving the driver on first use. nullptr if there is no driver.
void* real_driver_function(DriverFn fn);

// Learns where the real driver is from a function that belongs to it (first dlsym/cuGetProcAddress).
void adopt_driver(void* real_function);

// The wrapper for a real driver function pointer, or nullptr if it is not one we wrap.
void* wrapper_for_real(void* real_function);

// The device of the calling thread's current context, or -1.
int current_device();

// The wrapper exported under `name`, or nullptr if we do not wrap that name.
void* wrapper_for_name(const char* name);

}  // namespace gpumemtrace::interpose
