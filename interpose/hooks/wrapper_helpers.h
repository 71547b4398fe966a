// What the wrappers of CUDA functions share: how a wrapper is exported, and the values it hands the recorder.
#pragma once

#include <cstdint>

// A wrapper exported under the name of the function it stands for.
#define GMT_EXPORT extern "C" __attribute__((visibility("default")))

namespace gpumemtrace::interpose {

inline uint64_t as_u64(const void* p) { return reinterpret_cast<uintptr_t>(p); }

// Where an allocation lives when the call does not name a device: the calling thread's current device
// (looked up only when the call is traced), or the host (pinned host memory).
inline constexpr int kCurrentDevice = -2;
inline constexpr int kHost = -1;

}  // namespace gpumemtrace::interpose
