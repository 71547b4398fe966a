#include "interpose/stacks/native/eh_frame.h"

#include <algorithm>

namespace gpumemtrace::interpose::eh_frame {

namespace {

constexpr uint64_t kReturnAddressRegister = 16;  // DWARF's number for rip on x86-64

// One length-prefixed record of .eh_frame (a CIE or an FDE): the bytes after its id/pointer field.
struct Record {
  const uint8_t* id_field = nullptr;
  uint64_t id = 0;
  Bytes body{nullptr, nullptr};
};

bool read_record(const uint8_t* at, Record& out) {
  Bytes in(at, at + 12);
  uint64_t length = in.fixed<uint32_t>();
  bool wide = length == 0xffffffffu;
  if (wide) {
    in = Bytes(at + 4, at + 12);
    length = in.fixed<uint64_t>();
  }
  if (!in.ok() || length == 0) return false;
  const uint8_t* id_field = in.pos();
  const uint8_t* end = id_field + length;
  Bytes body(id_field, end);
  out.id_field = id_field;
  out.id = wide ? body.fixed<uint64_t>() : body.fixed<uint32_t>();
  out.body = body;
  return body.ok();
}

// The search table's entry for the last function starting at or below pc.
const uint8_t* fde_address(const uint8_t* header, uintptr_t pc) {
  Bytes in(header, header + 4);
  uint8_t version = in.u8();
  uint8_t frame_pointer_encoding = in.u8();
  uint8_t count_encoding = in.u8();
  uint8_t table_encoding = in.u8();
  if (version != 1 || table_encoding != 0x3b /* datarel | sdata4 */ || frame_pointer_encoding == 0xff ||
      count_encoding == 0xff) {
    return nullptr;
  }
  in = Bytes(header + 4, header + 4 + 32);
  uintptr_t ignored = 0;
  uint64_t count = 0;
  if (!read_address(in, frame_pointer_encoding, reinterpret_cast<uintptr_t>(header), ignored) ||
      !read_format(in, count_encoding, count) || count == 0) {
    return nullptr;
  }
  const uint8_t* table = in.pos();
  auto entry = [&](uint64_t i, size_t field) {
    int32_t value;
    std::memcpy(&value, table + i * 8 + field * 4, 4);
    return reinterpret_cast<uintptr_t>(header) + static_cast<intptr_t>(value);
  };
  // The last entry whose initial location is at or below pc.
  uint64_t low = 0, high = count;
  while (high - low > 1) {
    uint64_t mid = low + (high - low) / 2;
    if (entry(mid, 0) <= pc) {
      low = mid;
    } else {
      high = mid;
    }
  }
  if (entry(low, 0) > pc) return nullptr;
  return reinterpret_cast<const uint8_t*>(entry(low, 1));
}

}  // namespace

bool read_format(Bytes& in, uint8_t encoding, uint64_t& out) {
  switch (encoding & 0x0f) {
    case 0x00: out = in.fixed<uint64_t>(); break;  // absptr: a pointer, 8 bytes here
    case 0x01: out = in.uleb(); break;
    case 0x02: out = in.fixed<uint16_t>(); break;
    case 0x03: out = in.fixed<uint32_t>(); break;
    case 0x04: out = in.fixed<uint64_t>(); break;
    case 0x09: out = static_cast<uint64_t>(in.sleb()); break;
    case 0x0a: out = static_cast<uint64_t>(int64_t{in.fixed<int16_t>()}); break;
    case 0x0b: out = static_cast<uint64_t>(int64_t{in.fixed<int32_t>()}); break;
    case 0x0c: out = in.fixed<uint64_t>(); break;
    default: return false;
  }
  return in.ok();
}

bool read_address(Bytes& in, uint8_t encoding, uintptr_t data_base, uintptr_t& out) {
  auto field = reinterpret_cast<uintptr_t>(in.pos());
  uint64_t value = 0;
  if (encoding & 0x80 || !read_format(in, encoding, value)) return false;
  switch (encoding & 0x70) {
    case 0x00: break;
    case 0x10: value += field; break;
    case 0x30: value += data_base; break;
    default: return false;
  }
  out = value;
  return true;
}

bool read_cie(const uint8_t* at, Cie& cie) {
  Record record;
  if (!read_record(at, record) || record.id != 0) return false;
  Bytes& in = record.body;
  uint8_t version = in.u8();
  if (version != 1 && version != 3 && version != 4) return false;
  const char* augmentation = reinterpret_cast<const char*>(in.pos());
  // Never read past the record: a string that does not end inside it is not an augmentation.
  size_t room = std::min<size_t>(16, in.left());
  size_t augmentation_length = strnlen(augmentation, room);
  if (augmentation_length == room || !in.skip(augmentation_length + 1)) return false;
  if (version == 4 && (in.u8() != 8 || in.u8() != 0)) return false;  // address and segment size
  cie.code_align = in.uleb();
  cie.data_align = in.sleb();
  uint64_t return_register = version == 1 ? in.u8() : in.uleb();
  if (!in.ok() || return_register != kReturnAddressRegister) return false;
  if (augmentation_length > 0) {
    if (augmentation[0] != 'z') return false;
    cie.augmented = true;
    Bytes data = in.sub(in.uleb());
    if (!data.ok()) return false;
    for (size_t i = 1; i < augmentation_length; ++i) {
      uint64_t ignored = 0;
      switch (augmentation[i]) {
        case 'R': cie.fde_encoding = data.u8(); break;
        case 'L': data.u8(); break;
        case 'P': if (!read_format(data, data.u8(), ignored)) return false; break;
        default: return false;  // 'S' (a signal frame) and anything unknown
      }
    }
    if (!data.ok()) return false;
  }
  cie.instructions = in;
  return true;
}


bool find_fde(const uint8_t* header, uintptr_t pc, Fde& fde) {
  const uint8_t* at = fde_address(header, pc);
  Record record;
  if (!at || !read_record(at, record) || record.id == 0) return false;
  if (!read_cie(record.id_field - record.id, fde.cie)) return false;
  Bytes& in = record.body;
  if (!read_address(in, fde.cie.fde_encoding, 0, fde.begin) || !read_format(in, fde.cie.fde_encoding, fde.range)) {
    return false;
  }
  if (pc < fde.begin || pc - fde.begin >= fde.range) return false;
  if (fde.cie.augmented && !in.skip(in.uleb())) return false;
  fde.instructions = in;
  return true;
}

}  // namespace gpumemtrace::interpose::eh_frame
