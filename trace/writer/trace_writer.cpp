#include "trace/writer/trace_writer.h"

#include <time.h>

#include <cstring>
#include <utility>

namespace gpumemtrace::writer {

using format::Token;

uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// One record being encoded in place: fields go after the token's byte, the token is stored last.
class TraceWriter::Record {
 public:
  Record(MappedFileSink& sink, size_t max_bytes) : sink_(sink), start_(sink.reserve(max_bytes)) {
    cursor_ = start_ ? start_ + 1 : nullptr;
  }
  explicit operator bool() const { return start_ != nullptr; }
  Record& u(uint64_t value) {
    cursor_ = format::put_varint(cursor_, value);
    return *this;
  }
  Record& s(int64_t value) { return u(format::zigzag(value)); }
  Record& str(std::string_view text) {
    u(text.size());
    std::memcpy(cursor_, text.data(), text.size());
    cursor_ += text.size();
    return *this;
  }
  void finish(uint8_t token) {
    __atomic_store_n(start_, token, __ATOMIC_RELEASE);
    sink_.commit(static_cast<size_t>(cursor_ - start_));
  }

 private:
  MappedFileSink& sink_;
  uint8_t* start_;
  uint8_t* cursor_;
};

namespace {
constexpr size_t kV = format::kMaxVarintBytes;
uint8_t token(Token t) { return static_cast<uint8_t>(t); }
uint64_t device_field(int device) { return device < 0 ? 0 : static_cast<uint64_t>(device) + 1; }
}  // namespace

bool TraceWriter::open(const std::string& path, const ProcessInfo& process) {
  if (!sink_.open(path)) return false;
  uint8_t* header = sink_.reserve(format::kHeaderSize);
  std::memcpy(header, format::kMagic, sizeof format::kMagic);
  uint32_t version = format::kVersion;  // little endian on every platform we build for
  std::memcpy(header + 8, &version, sizeof version);
  std::memset(header + 12, 0, 4);
  sink_.commit(format::kHeaderSize);
  last_time_ns_ = monotonic_ns();
  last_address_ = 0;
  device_ = -1;
  last_size_by_stack_.assign(1, 0);
  events_ = 0;

  size_t bytes = 1 + 7 * kV + process.hostname.size() + process.executable.size();
  for (const auto& arg : process.argv) bytes += kV + arg.size();
  if (Record r{sink_, bytes}) {
    r.u(process.pid).u(process.ppid).u(process.start_wall_ns).u(process.max_stack_depth).s(process.rank);
    r.str(process.hostname).str(process.executable).u(process.argv.size());
    for (const auto& arg : process.argv) r.str(arg);
    r.finish(token(Token::Process));
  }
  return true;
}

void TraceWriter::advance_time() {
  uint64_t now = event_time_ns_ ? std::exchange(event_time_ns_, 0) : monotonic_ns();
  if (now < last_time_ns_ + format::kTimeGranularityNs) return;
  if (Record r{sink_, 1 + kV}) {
    r.u(now - last_time_ns_).finish(token(Token::Time));
    last_time_ns_ = now;
  }
}

void TraceWriter::modules(uint64_t generation, const std::vector<ModuleInfo>& modules) {
  if (Record r{sink_, 1 + kV}) r.u(generation).finish(token(Token::ModulesBegin));
  for (const auto& m : modules) {
    if (Record r{sink_, 1 + 5 * kV + m.path.size() + m.build_id.size()}) {
      r.u(m.base).u(m.low).u(m.high).str(m.path).str(m.build_id).finish(token(Token::Module));
    }
  }
}

void TraceWriter::stacks_reset() {
  if (Record r{sink_, 1}) r.finish(token(Token::StacksReset));
  last_size_by_stack_.assign(1, 0);
}

void TraceWriter::stack_node(uint64_t parent, uint64_t ip) {
  if (Record r{sink_, 1 + 2 * kV}) r.u(parent).u(ip).finish(token(Token::StackNode));
  last_size_by_stack_.push_back(0);
}

void TraceWriter::thread_new(uint64_t index, uint64_t tid, std::string_view name) {
  if (Record r{sink_, 1 + 3 * kV + name.size()}) r.u(index).u(tid).str(name).finish(token(Token::ThreadNew));
}

void TraceWriter::thread_switch(uint64_t index) {
  if (Record r{sink_, 1 + kV}) r.u(index).finish(token(Token::ThreadSwitch));
}

void TraceWriter::alloc(format::Api api, int device, uint64_t address, uint64_t size, uint64_t stack,
                        uint64_t stream, uint64_t pool) {
  const auto& info = format::api_info(api);
  advance_time();
  if (device != device_) {
    if (Record r{sink_, 1 + kV}) r.u(device_field(device)).finish(token(Token::Device));
    device_ = device;
  }
  if (stack >= last_size_by_stack_.size()) last_size_by_stack_.resize(stack + 1, 0);
  Record r{sink_, 1 + 5 * kV};
  if (!r) return;
  uint64_t& last_size = last_size_by_stack_[stack];
  r.s(static_cast<int64_t>(address - last_address_)).u(stack).s(static_cast<int64_t>(size - last_size));
  if (info.takes_stream) r.u(stream);
  if (info.takes_pool) r.u(pool);
  r.finish(static_cast<uint8_t>(token(Token::AllocBase) | static_cast<uint8_t>(api)));
  last_address_ = address;
  last_size = size;
  ++events_;
}

void TraceWriter::free(format::Api api, uint64_t address, uint64_t stream) {
  advance_time();
  Record r{sink_, 1 + 2 * kV};
  if (!r) return;
  r.s(static_cast<int64_t>(address - last_address_));
  if (format::api_info(api).takes_stream) r.u(stream);
  r.finish(static_cast<uint8_t>(token(Token::FreeBase) | static_cast<uint8_t>(api)));
  last_address_ = address;
  ++events_;
}

void TraceWriter::free_failed(format::Api api, uint64_t address, uint64_t error) {
  advance_time();
  if (Record r{sink_, 1 + 4 * kV}) {
    r.u(static_cast<uint64_t>(api)).u(address).u(error).finish(token(Token::FreeFailed));
    ++events_;
  }
}

void TraceWriter::alloc_failed(format::Api api, int device, uint64_t size, uint64_t stack, uint64_t error,
                               uint64_t free_bytes, uint64_t total_bytes) {
  advance_time();
  Record r{sink_, 1 + 7 * kV};
  if (!r) return;
  r.u(static_cast<uint64_t>(api)).u(device_field(device)).u(size).u(stack).u(error);
  if (error == 2 /* CUDA_ERROR_OUT_OF_MEMORY */) r.u(free_bytes).u(total_bytes);
  r.finish(token(Token::AllocFailed));
  ++events_;
}

void TraceWriter::mem_map(uint64_t address, uint64_t size, uint64_t handle, uint64_t offset) {
  advance_time();
  if (Record r{sink_, 1 + 5 * kV}) {
    r.u(address).u(size).u(handle).u(offset).finish(token(Token::MemMap));
    ++events_;
  }
}

void TraceWriter::mem_unmap(uint64_t address, uint64_t size) {
  advance_time();
  if (Record r{sink_, 1 + 3 * kV}) {
    r.u(address).u(size).finish(token(Token::MemUnmap));
    ++events_;
  }
}

void TraceWriter::address_reserve(uint64_t address, uint64_t size) {
  advance_time();
  if (Record r{sink_, 1 + 3 * kV}) {
    r.u(address).u(size).finish(token(Token::AddressReserve));
    ++events_;
  }
}

void TraceWriter::address_free(uint64_t address, uint64_t size) {
  advance_time();
  if (Record r{sink_, 1 + 3 * kV}) {
    r.u(address).u(size).finish(token(Token::AddressFree));
    ++events_;
  }
}

void TraceWriter::pool_create(uint64_t pool, int device) {
  advance_time();
  if (Record r{sink_, 1 + 3 * kV}) {
    r.u(pool).u(device_field(device)).finish(token(Token::PoolCreate));
    ++events_;
  }
}

void TraceWriter::pool_destroy(uint64_t pool) {
  advance_time();
  if (Record r{sink_, 1 + 3 * kV}) {
    r.u(pool).u(0).finish(token(Token::PoolDestroy));
    ++events_;
  }
}

void TraceWriter::pool_trim(uint64_t pool, uint64_t min_keep, uint64_t reserved, uint64_t used) {
  advance_time();
  if (Record r{sink_, 1 + 5 * kV}) {
    r.u(pool).u(min_keep).u(reserved).u(used).finish(token(Token::PoolTrim));
    ++events_;
  }
}

void TraceWriter::pool_usage(uint64_t pool, int device, uint64_t reserved, uint64_t used) {
  advance_time();
  if (Record r{sink_, 1 + 4 * kV}) {
    r.u(pool).u(device_field(device)).u(reserved).u(used).finish(token(Token::PoolUsage));
    ++events_;
  }
}

void TraceWriter::mem_info(int device, uint64_t free_bytes, uint64_t total_bytes) {
  advance_time();
  if (Record r{sink_, 1 + 4 * kV}) {
    r.u(device_field(device)).u(free_bytes).u(total_bytes).finish(token(Token::MemInfo));
    ++events_;
  }
}

void TraceWriter::fork_child(uint64_t child_pid) {
  if (Record r{sink_, 1 + kV}) r.u(child_pid).finish(token(Token::Fork));
}

void TraceWriter::end() {
  if (!sink_.is_open()) return;
  advance_time();
  if (Record r{sink_, 1 + kV}) r.u(events_).finish(token(Token::End));
  sink_.close();
}

}  // namespace gpumemtrace::writer
