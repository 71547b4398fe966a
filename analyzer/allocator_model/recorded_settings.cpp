#include "analyzer/allocator_model/recorded_settings.h"

namespace gpumemtrace::allocator_model {

Settings recorded_settings(const pytorch::AllocatorSettings& recorded, Settings base) {
  Settings settings = parse_alloc_conf(recorded.alloc_conf, base);
  if (recorded.expandable_segments) settings.expandable_segments = *recorded.expandable_segments;
  if (recorded.max_split_size) settings.max_split_size = *recorded.max_split_size;
  if (recorded.garbage_collection_threshold)
    settings.garbage_collection_threshold = *recorded.garbage_collection_threshold;
  if (recorded.roundup_power2_divisions) settings.roundup_power2_divisions = *recorded.roundup_power2_divisions;
  return settings;
}

}  // namespace gpumemtrace::allocator_model
