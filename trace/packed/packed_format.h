// The packed trace container (docs/trace-format.md, "Packed traces"): a finished version-1 trace re-coded
// into separate streams of predicted fields, each compressed with zstd. Version 2 in the header says so; the
// reader unpacks it back into the exact version-1 bytes it was made from and reads those.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <span>
#include <string_view>

#include "gpumemtrace/trace_format.h"

namespace gpumemtrace::packed {

inline constexpr uint32_t kPackedVersion = 2;

// The streams, in the order their frames follow the header. "Low/High" pairs hold one value each: its low
// byte in Low, the rest (value >> 8) as a varint in High, so the entropy coder sees the noisy low bits apart.
enum class Stream : uint8_t {
  Tokens,           // the version-1 token of every record, Time and Device included
  TimeLow,          // Time: delta / kTimeGranularityNs (the writer's steps are whole granules)
  TimeHigh,
  TimeRest,         // and delta % kTimeGranularityNs (0 but in traces of older writers)
  Devices,          // Device: device+1
  StackLow,         // Alloc: the stack's code in the stack table (0: not in it; its id follows in StackNew)
  StackHigh,
  StackNew,
  SizeLow,          // Alloc: 0 the stack's last size, 1 a new size (in SizeNew), k >= 2 the size table's k-2
  SizeHigh,
  SizeNew,
  AllocAddress,     // Alloc: k >= 1 the k-th last freed block of the size's class; 0 an address in AllocAddressNew
  AllocAddressNew,  // zigzag(address - the end of the last allocation coded here)
  FreeLow,          // Free: k >= 1 the live allocation k-1 from the top of the live table; 0 not live
  FreeHigh,
  FreeAddressNew,   // zigzag(address - the last Alloc or Free address)
  Extras,           // streams and pools of the async and pool APIs
  OtherLengths,     // every other record: the length of its body
  Others,           // and its body, as version 1 stores it
  Count,
};
inline constexpr size_t kStreams = static_cast<size_t>(Stream::Count);

inline constexpr std::string_view kStreamNames[] = {
    "tokens", "time-low", "time-high", "time-rest", "devices", "stack-low", "stack-high", "stack-new", "size-low", "size-high",
    "size-new", "alloc-address", "alloc-address-new", "free-low", "free-high", "free-address-new", "extras",
    "other-lengths", "others"};
static_assert(std::size(kStreamNames) == kStreams);

// The file starts like every trace (magic, then the version) with version 2.
inline bool is_packed(std::span<const uint8_t> bytes) {
  if (bytes.size() < format::kHeaderSize || std::memcmp(bytes.data(), format::kMagic, sizeof format::kMagic) != 0)
    return false;
  const uint8_t* v = bytes.data() + sizeof format::kMagic;
  return (uint32_t{v[0]} | uint32_t{v[1]} << 8 | uint32_t{v[2]} << 16 | uint32_t{v[3]} << 24) == kPackedVersion;
}

}  // namespace gpumemtrace::packed
