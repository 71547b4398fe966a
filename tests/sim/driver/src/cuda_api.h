// The CUDA 13 driver API exactly as NVIDIA's headers declare it. __CUDA_API_VERSION_INTERNAL makes cuda.h declare
// every exported name (legacy `cuMemAlloc`, versioned `cuMemAlloc_v2`, `_ptsz`/`_ptds`) without its renaming macros,
// so each definition here is checked against the real prototype. The declarations get default visibility; the
// rest of the library is compiled with -fvisibility=hidden.
#pragma once

#define __CUDA_API_VERSION_INTERNAL 1
#pragma GCC visibility push(default)
#include <cuda.h>
#include <cudaProfiler.h>
#pragma GCC visibility pop

#define CUAPI extern "C" CUresult CUDAAPI

// An entry point and its per-thread-default-stream twin (suffix _ptsz or _ptds): both evaluate `call`, because a
// simulated stream completes its work at once and the default streams need no distinction.
#define SIM_WITH_PER_THREAD(name, suffix, params, call) \
  CUAPI name params { return call; }                   \
  CUAPI name##suffix params { return call; }
