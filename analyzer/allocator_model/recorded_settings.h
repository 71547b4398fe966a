// The settings a PyTorch snapshot recorded (its allocator_settings), as the model takes them.
#pragma once

#include "analyzer/allocator_model/settings.h"
#include "analyzer/pytorch/snapshot.h"

namespace gpumemtrace::allocator_model {

// PYTORCH_CUDA_ALLOC_CONF's string parsed over `base` for the options the dict does not repeat
// (large_segment_size_mb, max_non_split_rounding_mb), then the dict's own values over it: they are what the
// allocator ran with. The per-process memory fraction is not in a snapshot and stays `base`'s. Throws
// SettingsError for a string the model does not take (backend:cudaMallocAsync).
Settings recorded_settings(const pytorch::AllocatorSettings& recorded, Settings base = {});

}  // namespace gpumemtrace::allocator_model
