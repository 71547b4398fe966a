#include "interpose/base/config.h"

#include <cstdlib>
#include <cstring>
#include <strings.h>

namespace gpumemtrace::interpose {

namespace {

const char* env(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

bool env_flag(const char* name, bool fallback) {
  const char* value = env(name);
  if (!value) return fallback;
  return !(std::strcmp(value, "0") == 0 || strcasecmp(value, "false") == 0 || strcasecmp(value, "no") == 0 ||
           strcasecmp(value, "off") == 0);
}

}  // namespace

Config Config::from_environment() {
  Config config;
  if (const char* value = env("GPUMEMTRACE_OUTPUT")) config.output_pattern = value;
  if (const char* value = env("GPUMEMTRACE_OUTPUT_ROOT")) config.output_root = value;
  if (const char* value = env("GPUMEMTRACE_ROOT_PID")) config.root_pid = std::strtol(value, nullptr, 10);
  if (const char* value = env("GPUMEMTRACE_STACK_DEPTH")) {
    long depth = std::strtol(value, nullptr, 10);
    if (depth >= 1 && depth <= 256) config.stack_depth = static_cast<unsigned>(depth);
  }
  config.stacks = env_flag("GPUMEMTRACE_STACKS", true);
  config.python_stacks = env_flag("GPUMEMTRACE_PYTHON_STACKS", true);
  config.follow_children = env_flag("GPUMEMTRACE_FOLLOW_CHILDREN", true);
  if (const char* value = env("GPUMEMTRACE_DEBUG")) config.debug_log = value;
  config.cupti = env_flag("GPUMEMTRACE_CUPTI", false);
  if (const char* value = env("GPUMEMTRACE_CUPTI_PATH")) config.cupti_path = value;
  config.torch = env_flag("GPUMEMTRACE_TORCH", true);
  if (const char* value = env("GPUMEMTRACE_TORCH_ENTRIES")) {
    long long entries = std::strtoll(value, nullptr, 10);
    if (entries >= 1 && entries <= (1ll << 31)) config.torch_entries = static_cast<uint64_t>(entries);
  }
  return config;
}

}  // namespace gpumemtrace::interpose
