#include "interpose/cupti/cupti_library.h"

#include <dlfcn.h>

#include "interpose/base/real_dlsym.h"

namespace gpumemtrace::interpose::cupti {

namespace {

constexpr const char* kSoname = "libcupti.so.13";

template <typename Fn>
bool bind(void* handle, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(real_dlsym(handle, name));
  return fn != nullptr;
}

}  // namespace

std::vector<std::string> cupti_candidates(const std::string& explicit_path, const char* cuda_home) {
  if (!explicit_path.empty()) return {explicit_path};
  std::vector<std::string> out;
  if (cuda_home && *cuda_home) {
    out.push_back(std::string(cuda_home) + "/lib64/" + kSoname);
    out.push_back(std::string(cuda_home) + "/extras/CUPTI/lib64/" + kSoname);
  }
  out.push_back(kSoname);
  for (std::string root : {std::string(GPUMEMTRACE_CUDA_ROOT), std::string("/usr/local/cuda")}) {
    out.push_back(root + "/lib64/" + kSoname);
    out.push_back(root + "/extras/CUPTI/lib64/" + kSoname);
  }
  return out;
}

bool load_cupti(const std::vector<std::string>& candidates, CuptiLibrary& library, std::string& error) {
  error.clear();
  for (const std::string& path : candidates) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      if (!error.empty()) error += "; ";
      const char* why = dlerror();
      error += why ? why : path;
      continue;
    }
    CuptiLibrary found;
    found.handle = handle;
    found.path = path;
    bool complete = bind(handle, "cuptiGetResultString", found.GetResultString) &&
                    bind(handle, "cuptiSubscribe", found.Subscribe) && bind(handle, "cuptiUnsubscribe", found.Unsubscribe) &&
                    bind(handle, "cuptiEnableCallback", found.EnableCallback) &&
                    bind(handle, "cuptiActivityRegisterCallbacks", found.ActivityRegisterCallbacks) &&
                    bind(handle, "cuptiActivityEnable", found.ActivityEnable) &&
                    bind(handle, "cuptiActivityDisable", found.ActivityDisable) &&
                    bind(handle, "cuptiActivityFlushAll", found.ActivityFlushAll) &&
                    bind(handle, "cuptiActivityGetNextRecord", found.ActivityGetNextRecord);
    if (!complete) {
      if (!error.empty()) error += "; ";
      error += path + " lacks the CUPTI functions needed";
      dlclose(handle);
      continue;
    }
    bind(handle, "cuptiActivityRegisterTimestampCallback", found.ActivityRegisterTimestampCallback);
    library = found;
    return true;
  }
  return false;
}

std::string CuptiLibrary::describe(CUptiResult result) const {
  const char* name = nullptr;
  if (!GetResultString || GetResultString(result, &name) != CUPTI_SUCCESS || !name) name = "CUPTI error";
  return std::string(name) + " (" + std::to_string(static_cast<int>(result)) + ")";
}

}  // namespace gpumemtrace::interpose::cupti
