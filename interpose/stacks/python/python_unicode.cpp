#include "interpose/stacks/python/python_unicode.h"

#include <cstdint>
#include <cstring>

namespace gpumemtrace::interpose::python {

namespace {

template <typename T>
T read(const void* base, int16_t offset) {
  T value;
  std::memcpy(&value, static_cast<const char*>(base) + offset, sizeof value);
  return value;
}

void put_code_point(uint32_t cp, std::string* out) {
  if (cp >= 0xDC80 && cp <= 0xDCFF) {  // surrogateescape: the undecodable byte itself
    out->push_back(static_cast<char>(cp - 0xDC00));
    return;
  }
  if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) cp = 0xFFFD;
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

template <typename Unit>
void put_units(const char* data, size_t length, std::string* out) {
  for (size_t i = 0; i < length; ++i) {
    Unit unit;
    std::memcpy(&unit, data + i * sizeof(Unit), sizeof unit);
    put_code_point(static_cast<uint32_t>(unit), out);
  }
}

}  // namespace

bool append_utf8(const PythonLayout& layout, const void* str, const void* unicode_type, std::string* out) {
  if (!str || layout.unicode_state < 0) return false;
  if (unicode_type && read<const void*>(str, layout.ob_type) != unicode_type) return false;
  uint32_t state = read<uint32_t>(str, layout.unicode_state);
  auto bit = [state](int8_t shift) { return shift >= 0 && ((state >> shift) & 1) != 0; };
  if (!bit(layout.state_compact_shift)) return false;
  if (layout.state_ready_shift >= 0 && !bit(layout.state_ready_shift)) return false;
  unsigned kind = (state >> layout.state_kind_shift) & 7;
  bool ascii = bit(layout.state_ascii_shift);
  int64_t signed_length = read<int64_t>(str, layout.unicode_length);
  if (signed_length < 0) return false;
  size_t length = static_cast<size_t>(signed_length);
  if (length > kMaxCodePoints) length = kMaxCodePoints;
  const char* data = static_cast<const char*>(str) + (ascii ? layout.unicode_ascii_size : layout.unicode_compact_size);
  if (ascii) {
    if (kind != 1) return false;
    out->append(data, length);
    return true;
  }
  switch (kind) {
    case 1: put_units<uint8_t>(data, length, out); return true;
    case 2: put_units<uint16_t>(data, length, out); return true;
    case 4: put_units<uint32_t>(data, length, out); return true;
    default: return false;
  }
}

}  // namespace gpumemtrace::interpose::python
