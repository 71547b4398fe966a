// Builds trace bytes record by record for the reader's tests, with the writer's own record encoder. Records
// are given absolute, each event after a time delta; the builder writes the Time and Device state records
// and the deltas the way the writer does. token(), u(), s(), str() and raw() add bytes as they are, for
// damaged traces.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "gpumemtrace/trace_format.h"
#include "trace/writer/record_encoder.h"

namespace gpumemtrace::test {

class TraceBuilder {
 public:
  using Token = format::Token;
  using Api = format::Api;

  explicit TraceBuilder(uint32_t version = format::kVersion) : bytes_(format::kHeaderSize) {
    format::put_header(bytes_.data(), version);
  }

  const std::vector<uint8_t>& bytes() const { return bytes_; }
  size_t size() const { return bytes_.size(); }
  // Where the last event's own token is, after the state records written for it.
  size_t event_offset() const { return event_offset_; }

  // A record as the writer writes it (an Alloc on another device than the last writes a Device record first).
  template <typename R>
  TraceBuilder& record(const R& r) {
    Out out{bytes_, event_offset_};
    encoder_.put(out, r);
    return *this;
  }
  // An event, dt ns after the previous one.
  template <typename R>
  TraceBuilder& event(const R& r, uint64_t dt) {
    return time(dt).record(r);
  }
  // The clock advances by dt ns (no record when dt is 0, as the writer does within its granularity).
  TraceBuilder& time(uint64_t dt) {
    if (dt) record(trace::Time{dt});
    event_offset_ = bytes_.size();
    return *this;
  }

  TraceBuilder& token(uint8_t value) {
    bytes_.push_back(value);
    return *this;
  }
  TraceBuilder& token(Token value) { return token(static_cast<uint8_t>(value)); }
  TraceBuilder& u(uint64_t value) {
    uint8_t buffer[format::kMaxVarintBytes];
    bytes_.insert(bytes_.end(), buffer, format::put_varint(buffer, value));
    return *this;
  }
  TraceBuilder& s(int64_t value) { return u(format::zigzag(value)); }
  TraceBuilder& str(std::string_view text) {
    u(text.size());
    bytes_.insert(bytes_.end(), text.begin(), text.end());
    return *this;
  }
  TraceBuilder& raw(std::initializer_list<uint8_t> values) {
    bytes_.insert(bytes_.end(), values);
    return *this;
  }

  // Shorthands for record() and event(). A device is -1 for none.
  TraceBuilder& process(uint64_t pid, uint64_t ppid, uint64_t start_ns, uint64_t depth, int64_t rank,
                        std::string_view host, std::string_view exe, std::initializer_list<std::string_view> argv) {
    return record(trace::Process{pid, ppid, start_ns, depth, rank, host, exe, argv});
  }
  TraceBuilder& modules_begin(uint64_t generation) { return record(trace::ModulesBegin{generation}); }
  TraceBuilder& module(uint64_t base, uint64_t low, uint64_t high, std::string_view path, std::string_view build_id) {
    return record(trace::Module{base, low, high, path, build_id});
  }
  TraceBuilder& stacks_reset() { return record(trace::StacksReset{}); }
  TraceBuilder& stack_node(uint64_t parent, uint64_t ip) {
    return record(trace::StackNode{0, static_cast<uint32_t>(parent), ip});
  }
  TraceBuilder& python_code(std::string_view filename, std::string_view qualname, uint64_t first_line) {
    return record(trace::PythonCode{0, filename, qualname, first_line});
  }
  TraceBuilder& thread_new(uint64_t index, uint64_t tid, std::string_view name) {
    return record(trace::ThreadNew{static_cast<uint32_t>(index), tid, name});
  }
  TraceBuilder& thread_switch(uint64_t index) { return record(trace::ThreadSwitch{static_cast<uint32_t>(index)}); }
  TraceBuilder& alloc(Api api, int64_t device, uint64_t address, uint64_t size, uint64_t stack, uint64_t dt,
                      uint64_t stream = 0, uint64_t pool = 0) {
    return event(trace::Alloc{{}, api, static_cast<int32_t>(device), address, size, static_cast<uint32_t>(stack),
                              stream, pool},
                 dt);
  }
  TraceBuilder& free(Api api, uint64_t address, uint64_t dt, uint64_t stream = 0) {
    return event(trace::Free{{}, api, address, stream}, dt);
  }
  TraceBuilder& alloc_failed(Api api, int64_t device, uint64_t size, uint64_t stack, uint64_t error, uint64_t dt,
                             uint64_t device_free = 0, uint64_t device_total = 0) {
    return event(trace::AllocFailed{{}, api, static_cast<int32_t>(device), size, static_cast<uint32_t>(stack), error,
                                    device_free, device_total},
                 dt);
  }
  TraceBuilder& free_failed(Api api, uint64_t address, uint64_t error, uint64_t dt) {
    return event(trace::FreeFailed{{}, api, address, error}, dt);
  }
  TraceBuilder& mem_map(uint64_t address, uint64_t size, uint64_t handle, uint64_t offset, uint64_t dt) {
    return event(trace::MemMap{{}, address, size, handle, offset}, dt);
  }
  // MemUnmap, AddressReserve or AddressFree.
  TraceBuilder& range(Token kind, uint64_t address, uint64_t size, uint64_t dt) {
    trace::AddressRange fields{{}, address, size};
    return one_of<trace::MemUnmap, trace::AddressReserve, trace::AddressFree>(kind, fields, dt);
  }
  // PoolCreate or PoolDestroy.
  TraceBuilder& pool(Token kind, uint64_t handle, int64_t device, uint64_t dt) {
    trace::PoolEvent fields{{}, handle, static_cast<int32_t>(device)};
    return one_of<trace::PoolCreate, trace::PoolDestroy>(kind, fields, dt);
  }
  TraceBuilder& pool_trim(uint64_t handle, uint64_t keep, uint64_t reserved, uint64_t used, uint64_t dt) {
    return event(trace::PoolTrim{{}, handle, keep, reserved, used}, dt);
  }
  TraceBuilder& pool_usage(uint64_t handle, int64_t device, uint64_t reserved, uint64_t used, uint64_t dt) {
    return event(trace::PoolUsage{{}, handle, static_cast<int32_t>(device), reserved, used}, dt);
  }
  TraceBuilder& mem_info(int64_t device, uint64_t free_bytes, uint64_t total_bytes, uint64_t dt) {
    return event(trace::MemInfo{{}, static_cast<int32_t>(device), free_bytes, total_bytes}, dt);
  }
  TraceBuilder& fork(uint64_t child_pid) { return record(trace::Fork{child_pid}); }
  TraceBuilder& end(uint64_t events, uint64_t dt) {
    trace::End end;
    end.events_written = events;
    return event(end, dt);
  }

 private:
  // Appends to bytes_; the record's start is the last event's offset.
  struct Out {
    std::vector<uint8_t>& bytes;
    size_t& start_offset;
    uint8_t* reserve(size_t max_bytes) {
      start_offset = bytes.size();
      bytes.resize(start_offset + max_bytes);
      return bytes.data() + start_offset;
    }
    void finish(uint8_t* start, uint8_t* end, uint8_t token) {
      *start = token;
      bytes.resize(static_cast<size_t>(end - bytes.data()));
    }
  };

  // The one of the record types Rs, sharing the layout of `fields`, whose token is `kind`.
  template <typename... Rs, typename Fields>
  TraceBuilder& one_of(Token kind, const Fields& fields, uint64_t dt) {
    ((Rs::kToken == kind ? (void)event(Rs{fields}, dt) : void()), ...);
    return *this;
  }

  std::vector<uint8_t> bytes_;
  writer::RecordEncoder encoder_;
  size_t event_offset_ = 0;
};

}  // namespace gpumemtrace::test
