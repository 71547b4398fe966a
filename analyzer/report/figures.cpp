#include "analyzer/report/figures.h"

namespace gpumemtrace::report {

std::string_view memory_name(Memory memory) {
  switch (memory) {
    case Memory::Managed:
      return "managed";
    case Memory::HostPinned:
      return "host-pinned";
    default:
      return "device";
  }
}

std::string_view view_name(View view) { return view == View::Used ? "used" : "reserved"; }

std::optional<View> view_named(std::string_view name) {
  for (View view : {View::Reserved, View::Used})
    if (view_name(view) == name) return view;
  return std::nullopt;
}

Memory memory_of(replay::Category category) {
  switch (category) {
    case replay::Category::Managed:
      return Memory::Managed;
    case replay::Category::HostPinned:
      return Memory::HostPinned;
    default:
      return Memory::Device;
  }
}

std::optional<int32_t> device_of(int32_t device) {
  return device == trace::kNoDevice ? std::nullopt : std::optional<int32_t>(device);
}

}  // namespace gpumemtrace::report
