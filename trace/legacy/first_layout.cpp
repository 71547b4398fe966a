#include "trace/legacy/first_layout.h"

#include <cstring>

#include "common/memory_file.h"
#include "gpumemtrace/trace_records.h"
#include "trace/reader/field_cursor.h"
#include "trace/writer/record_encoder.h"
#include "trace/writer/vector_output.h"

namespace gpumemtrace::legacy {

namespace {

// The first layout's APIs are today's first 29 (cuMemAlloc 0 to cudaFreeArray 28), with the same meaning.
constexpr uint8_t kFirstLayoutApis = 29;
constexpr uint64_t kOutOfMemory = 2;  // AllocFailed's error code that carries the device's free and total bytes

// One record of the first layout, decoded as far as the rewriting needs.
struct Record {
  enum class Kind { Kept, Timed, StacksReset, Alloc, Free, End } kind = Kind::Kept;
  const uint8_t* start = nullptr;  // the token
  const uint8_t* end = nullptr;
  const uint8_t* time_at = nullptr;  // Timed and End: where the time delta's bytes are, which today's layout drops
  const uint8_t* time_end = nullptr;
  uint64_t time_delta = 0;
  uint8_t api = 0;
  uint64_t device_plus_one = 0, address_delta = 0, size = 0, stack = 0, stream = 0, pool = 0;
};

enum class Step { Record, End, Damage };  // End: the written data stops (a zero byte, the end, a record cut short)

class FirstLayoutReader {
 public:
  explicit FirstLayoutReader(std::span<const uint8_t> trace)
      : position_(trace.data() + format::kHeaderSize), end_(trace.data() + trace.size()) {}

  Step next(Record& r) {
    r = Record{};
    r.start = position_;
    if (r.start == end_ || *r.start == 0) return Step::End;
    uint8_t token = *r.start;
    cursor_ = trace::FieldCursor(r.start + 1, end_);
    if (token >= 0xC0) return Step::Damage;  // unused in both layouts
    if (token >= 0x80) {
      if (!is_api(token & format::kApiMask, true)) return Step::Damage;
      r.kind = Record::Kind::Free;
      r.api = token & format::kApiMask;
      r.address_delta = cursor_.u();
      time(r);
      if (format::api_info(static_cast<format::Api>(r.api)).takes_stream) r.stream = cursor_.u();
    } else if (token >= 0x40) {
      if (!is_api(token & format::kApiMask, false)) return Step::Damage;
      r.kind = Record::Kind::Alloc;
      r.api = token & format::kApiMask;
      r.device_plus_one = cursor_.u();
      r.address_delta = cursor_.u();
      r.size = cursor_.u();
      r.stack = cursor_.u();
      time(r);
      const format::ApiInfo& info = format::api_info(static_cast<format::Api>(r.api));
      if (info.takes_stream) r.stream = cursor_.u();
      if (info.takes_pool) r.pool = cursor_.u();
      // A stack not defined yet is damage here, as it is to today's reader: the rewriting's encoder keeps a
      // size per stack id, so an id out of the input's range would size that table by the input.
      if (r.device_plus_one > static_cast<uint64_t>(trace::kMaxDevice) + 1 || r.stack > stack_nodes_) return Step::Damage;
    } else {
      switch (token) {
        case 0x01:  // Process: pid, ppid, start, maximum stack depth, rank, hostname, executable, argv
          skip(4);
          cursor_.u();
          cursor_.str();
          cursor_.str();
          for (uint64_t argc = cursor_.u(); argc > 0 && cursor_.failure() == trace::FieldCursor::Failure::None; --argc)
            cursor_.str();
          break;
        case 0x02: skip(1); break;              // ModulesBegin: generation
        case 0x03: skip(3); cursor_.str(); cursor_.str(); break;  // Module: base, low, high, path, build id
        case 0x04:
          r.kind = Record::Kind::StacksReset;
          stack_nodes_ = 0;
          break;
        case 0x05:  // StackNode: parent, address
          skip(2);
          ++stack_nodes_;
          break;
        case 0x06: skip(2); cursor_.str(); break;  // ThreadNew: index, tid, name
        case 0x07: skip(1); break;              // ThreadSwitch: index
        case 0x11: skip(1); break;              // Fork: child pid
        case 0x08: {                            // AllocFailed: api, device+1, size, stack, error, time; free, total
          skip(4);
          uint64_t error = cursor_.u();
          timed(r);
          if (error == kOutOfMemory) skip(2);
          break;
        }
        case 0x09: case 0x0F: skip(4); timed(r); break;  // MemMap, PoolTrim
        case 0x10: case 0x13: skip(3); timed(r); break;  // MemInfo, FreeFailed
        case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x0E: skip(2); timed(r); break;  // two fields, time
        case 0x12: skip(1); time(r); r.kind = Record::Kind::End; break;  // End: events written, time
        default: return Step::Damage;
      }
    }
    switch (cursor_.failure()) {
      case trace::FieldCursor::Failure::None: break;
      case trace::FieldCursor::Failure::EndOfData: return Step::End;
      default: return Step::Damage;
    }
    r.end = position_ = cursor_.position();
    return Step::Record;
  }

 private:
  static bool is_api(uint8_t api, bool is_free) {
    return api < kFirstLayoutApis && format::api_info(static_cast<format::Api>(api)).is_free == is_free;
  }
  void skip(int fields) {
    for (int i = 0; i < fields; ++i) cursor_.u();
  }
  void time(Record& r) {
    r.time_at = cursor_.position();
    r.time_delta = cursor_.u();
    r.time_end = cursor_.position();
  }
  void timed(Record& r) {
    r.kind = Record::Kind::Timed;
    time(r);
  }

  const uint8_t* position_;
  const uint8_t* end_;
  trace::FieldCursor cursor_{nullptr, nullptr};  // the fields of the record being read
  uint64_t stack_nodes_ = 0;                      // since the last StacksReset: the stack ids defined
};

bool is_version_1(std::span<const uint8_t> trace) {
  uint8_t header[format::kHeaderSize];
  format::put_header(header);
  return trace.size() >= format::kHeaderSize && std::memcmp(trace.data(), header, sizeof header) == 0;
}

}  // namespace

size_t first_layout_reach(std::span<const uint8_t> trace) {
  if (!is_version_1(trace)) return 0;
  FirstLayoutReader reader(trace);
  Record r;
  size_t reach = 0;
  bool event_seen = false;
  for (int events = 0; events < 256;) {
    if (reader.next(r) != Step::Record) break;
    if (r.kind != Record::Kind::Kept && r.kind != Record::Kind::StacksReset) {
      event_seen = true;
      ++events;
    }
    reach = static_cast<size_t>(r.end - trace.data());
  }
  return event_seen ? reach : 0;
}

std::vector<uint8_t> to_current_layout(std::span<const uint8_t> trace) {
  std::vector<uint8_t> out(format::kHeaderSize);
  format::put_header(out.data());
  writer::VectorOutput output{out};
  writer::RecordEncoder encoder;
  encoder.restart();
  auto append = [&](const uint8_t* from, const uint8_t* to) { out.insert(out.end(), from, to); };
  auto put_time = [&](uint64_t delta) {
    if (delta > 0) encoder.put(output, trace::Time{delta});
  };

  FirstLayoutReader reader(trace);
  uint64_t address = 0;  // the address chain of Alloc and Free, the same in both layouts
  Record r;
  for (;;) {
    Step step = reader.next(r);
    if (step == Step::End) break;
    if (step == Step::Damage) {
      append(r.start, trace.data() + trace.size());
      break;
    }
    switch (r.kind) {
      case Record::Kind::Kept: append(r.start, r.end); break;
      case Record::Kind::StacksReset: encoder.put(output, trace::StacksReset{}); break;
      case Record::Kind::Timed:
      case Record::Kind::End:
        put_time(r.time_delta);
        append(r.start, r.time_at);
        append(r.time_end, r.end);
        break;
      case Record::Kind::Alloc: {
        put_time(r.time_delta);
        address += static_cast<uint64_t>(format::unzigzag(r.address_delta));
        trace::Alloc alloc;
        alloc.api = static_cast<format::Api>(r.api);
        alloc.device = r.device_plus_one == 0 ? trace::kNoDevice : static_cast<int32_t>(r.device_plus_one - 1);
        alloc.address = address;
        alloc.size = r.size;
        alloc.stack = static_cast<uint32_t>(r.stack);
        alloc.stream = r.stream;
        alloc.pool = r.pool;
        encoder.put(output, alloc);
        break;
      }
      case Record::Kind::Free: {
        put_time(r.time_delta);
        address += static_cast<uint64_t>(format::unzigzag(r.address_delta));
        trace::Free free;
        free.api = static_cast<format::Api>(r.api);
        free.address = address;
        free.stream = r.stream;
        encoder.put(output, free);
        break;
      }
    }
    if (r.kind == Record::Kind::End) break;  // nothing after End is read
  }
  return out;
}

int to_current_layout_in_memory_file(std::span<const uint8_t> trace) {
  std::vector<uint8_t> bytes = to_current_layout(trace);
  return memory_file_of("gpumemtrace-first-layout", "writing the trace in today's layout",
                        [&](const auto& write) { write(bytes); });
}

}  // namespace gpumemtrace::legacy
