// The driver API callbacks the CUPTI backend subscribes to: the memory APIs, each with the trace API it
// stands for. Only these calls are remembered for the correlation join.
#pragma once

#include <cupti_driver_cbid.h>

#include <cstdint>
#include <optional>
#include <span>

#include "gpumemtrace/trace_format.h"

namespace gpumemtrace::interpose::cupti {

struct MemoryCallback {
  CUpti_driver_api_trace_cbid id;
  std::optional<format::Api> api;  // none for the pool calls (create, trim, destroy)
};

// Every driver callback id that allocates or frees memory, or creates, trims or destroys a pool.
std::span<const MemoryCallback> memory_callbacks();
// The entry of a driver callback id, or null if it is not a memory call.
const MemoryCallback* find_memory_callback(uint32_t cbid);

}  // namespace gpumemtrace::interpose::cupti
