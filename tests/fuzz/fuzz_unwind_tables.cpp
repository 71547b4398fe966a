// libFuzzer target: the fast unwinder's readers of .eh_frame_hdr, CIEs, FDEs and call frame instructions
// (interpose/stacks/native/eh_frame.cpp, cfa_program.cpp), on tables made of the fuzzer's bytes.
//
// The input: 4 bytes of pc, an offset into each FDE's function (from the begin its pc-relative field
// names, as compilers encode it), then an .eh_frame section. In a process these tables come from loaded objects and are trusted to be where
// their lengths say; so the harness hands the readers only records that lie inside the input, and builds
// the .eh_frame_hdr search table the way the linker would, one FDE at a time. Everything inside a record
// (augmentations, encodings, instructions, expressions) is the fuzzer's.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "interpose/stacks/native/cfa_program.h"
#include "interpose/stacks/native/eh_frame.h"

namespace {

using namespace gpumemtrace::interpose;

// .eh_frame_hdr: version 1, eh_frame_ptr udata4, fde_count udata4, table datarel|sdata4; one entry.
constexpr size_t kHeaderSize = 4 + 4 + 4 + 8;

struct RecordSpan {
  size_t offset = 0;  // of the length field
  size_t end = 0;     // one past the record
  size_t id_field = 0;
  uint64_t id = 0;
};

// The records of the section that lie wholly inside it, as read_record would see them.
std::vector<RecordSpan> records(const uint8_t* section, size_t size) {
  std::vector<RecordSpan> out;
  size_t at = 0;
  while (size - at >= 8) {
    uint32_t length32;
    std::memcpy(&length32, section + at, 4);
    size_t header = 4;
    uint64_t length = length32;
    if (length32 == 0xffffffffu) {
      if (size - at < 12 + 8) break;
      std::memcpy(&length, section + at + 4, 8);
      header = 12;
    }
    if (length == 0 || length > size - at - header) break;
    RecordSpan r{at, at + header + static_cast<size_t>(length), at + header, 0};
    if (header == 4) {
      if (length < 4) break;
      uint32_t id;
      std::memcpy(&id, section + r.id_field, 4);
      r.id = id;
    } else {
      if (length < 8) break;
      std::memcpy(&r.id, section + r.id_field, 8);
    }
    out.push_back(r);
    at = r.end;
  }
  return out;
}

void put32(uint8_t* at, uint32_t value) { std::memcpy(at, &value, 4); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  uint32_t pc_offset;
  std::memcpy(&pc_offset, data, 4);
  size_t section_size = size - 4;
  // The header and the section in one exactly sized allocation, so any read past the section is caught.
  std::vector<uint8_t> image(kHeaderSize + section_size);
  uint8_t* header = image.data();
  uint8_t* section = header + kHeaderSize;
  std::memcpy(section, data + 4, section_size);
  header[0] = 1;
  header[1] = 0x03;  // eh_frame_ptr: udata4 (not used by the walker)
  header[2] = 0x03;  // fde_count: udata4
  header[3] = 0x3b;  // table: datarel | sdata4
  put32(header + 4, 0);
  put32(header + 8, 1);
  std::vector<RecordSpan> spans = records(section, section_size);
  for (const RecordSpan& r : spans) {
    if (r.id == 0) {
      eh_frame::Cie cie;
      eh_frame::read_cie(section + r.offset, cie);
      continue;
    }
    // An FDE: its CIE pointer must name a whole record of the section, as the linker guarantees.
    if (r.id > r.id_field) continue;
    size_t cie_offset = r.id_field - static_cast<size_t>(r.id);
    auto cie = std::lower_bound(spans.begin(), spans.end(), cie_offset,
                                [](const RecordSpan& c, size_t offset) { return c.offset < offset; });
    if (cie == spans.end() || cie->offset != cie_offset) continue;
    if (r.end - r.id_field < 8) continue;
    int32_t begin;
    std::memcpy(&begin, section + r.id_field + 4, 4);
    uintptr_t pc = reinterpret_cast<uintptr_t>(section + r.id_field + 4) + static_cast<intptr_t>(begin) + pc_offset;
    auto from_header = static_cast<intptr_t>(pc - reinterpret_cast<uintptr_t>(header));
    if (from_header != static_cast<int32_t>(from_header)) continue;
    put32(header + 12, static_cast<uint32_t>(from_header));
    put32(header + 16, static_cast<uint32_t>(kHeaderSize + r.offset));
    eh_frame::Fde fde;
    if (!eh_frame::find_fde(header, pc, fde)) continue;
    cfa::Row row;
    cfa::row_at(fde, pc, row);
  }
  return 0;
}
