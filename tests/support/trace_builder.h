// Builds trace bytes record by record for the reader's tests, with the format's own varint and zig-zag
// coding. Addresses, sizes and devices are given absolute and each event's time as a delta; the builder
// writes the Time and Device state records and the deltas the way the writer does.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <map>
#include <vector>

#include "gpumemtrace/trace_format.h"

namespace gpumemtrace::test {

class TraceBuilder {
 public:
  using Token = format::Token;
  using Api = format::Api;

  explicit TraceBuilder(uint32_t version = format::kVersion) {
    bytes_.assign(format::kMagic, format::kMagic + sizeof format::kMagic);
    for (int i = 0; i < 4; ++i) bytes_.push_back(static_cast<uint8_t>(version >> (8 * i)));
    bytes_.resize(format::kHeaderSize, 0);
  }

  const std::vector<uint8_t>& bytes() const { return bytes_; }
  size_t size() const { return bytes_.size(); }
  // Where the last event's own token is, after the state records written for it.
  size_t event_offset() const { return event_offset_; }

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

  TraceBuilder& process(uint64_t pid, uint64_t ppid, uint64_t start_ns, uint64_t depth, int64_t rank,
                        std::string_view host, std::string_view exe, std::initializer_list<std::string_view> argv) {
    token(Token::Process).u(pid).u(ppid).u(start_ns).u(depth).s(rank).str(host).str(exe).u(argv.size());
    for (std::string_view arg : argv) str(arg);
    return *this;
  }
  TraceBuilder& modules_begin(uint64_t generation) { return token(Token::ModulesBegin).u(generation); }
  TraceBuilder& module(uint64_t base, uint64_t low, uint64_t high, std::string_view path, std::string_view build_id) {
    return token(Token::Module).u(base).u(low).u(high).str(path).str(build_id);
  }
  TraceBuilder& stacks_reset() {
    last_size_by_stack_.clear();
    return token(Token::StacksReset);
  }
  TraceBuilder& stack_node(uint64_t parent, uint64_t ip) { return token(Token::StackNode).u(parent).u(ip); }
  TraceBuilder& thread_new(uint64_t index, uint64_t tid, std::string_view name) {
    return token(Token::ThreadNew).u(index).u(tid).str(name);
  }
  TraceBuilder& thread_switch(uint64_t index) { return token(Token::ThreadSwitch).u(index); }

  // device -1 = none
  TraceBuilder& alloc(Api api, int64_t device, uint64_t address, uint64_t size, uint64_t stack, uint64_t dt,
                      uint64_t stream = 0, uint64_t pool = 0) {
    const format::ApiInfo& info = format::api_info(api);
    time(dt);
    if (device != device_) {
      token(Token::Device).u(static_cast<uint64_t>(device + 1));
      device_ = device;
    }
    uint64_t& last_size = last_size_by_stack_[stack];
    event_offset_ = bytes_.size();
    token(static_cast<uint8_t>(Token::AllocBase) | static_cast<uint8_t>(api));
    s(address_delta(address)).u(stack).s(static_cast<int64_t>(size - last_size));
    last_size = size;
    if (info.takes_stream) u(stream);
    if (info.takes_pool) u(pool);
    return *this;
  }
  TraceBuilder& free(Api api, uint64_t address, uint64_t dt, uint64_t stream = 0) {
    time(dt);
    token(static_cast<uint8_t>(Token::FreeBase) | static_cast<uint8_t>(api));
    s(address_delta(address));
    if (format::api_info(api).takes_stream) u(stream);
    return *this;
  }
  TraceBuilder& alloc_failed(Api api, int64_t device, uint64_t size, uint64_t stack, uint64_t error, uint64_t dt,
                             uint64_t device_free = 0, uint64_t device_total = 0) {
    time(dt);
    event_offset_ = bytes_.size();
    token(Token::AllocFailed).u(static_cast<uint64_t>(api)).u(static_cast<uint64_t>(device + 1)).u(size).u(stack);
    u(error);
    if (error == 2) u(device_free).u(device_total);
    return *this;
  }
  TraceBuilder& free_failed(Api api, uint64_t address, uint64_t error, uint64_t dt) {
    return time(dt).token(Token::FreeFailed).u(static_cast<uint64_t>(api)).u(address).u(error);
  }
  TraceBuilder& mem_map(uint64_t address, uint64_t size, uint64_t handle, uint64_t offset, uint64_t dt) {
    return time(dt).token(Token::MemMap).u(address).u(size).u(handle).u(offset);
  }
  TraceBuilder& range(Token kind, uint64_t address, uint64_t size, uint64_t dt) {
    return time(dt).token(kind).u(address).u(size);
  }
  TraceBuilder& pool(Token kind, uint64_t handle, int64_t device, uint64_t dt) {
    return time(dt).token(kind).u(handle).u(static_cast<uint64_t>(device + 1));
  }
  TraceBuilder& pool_trim(uint64_t handle, uint64_t keep, uint64_t reserved, uint64_t used, uint64_t dt) {
    return time(dt).token(Token::PoolTrim).u(handle).u(keep).u(reserved).u(used);
  }
  TraceBuilder& pool_usage(uint64_t handle, int64_t device, uint64_t reserved, uint64_t used, uint64_t dt) {
    return time(dt).token(Token::PoolUsage).u(handle).u(static_cast<uint64_t>(device + 1)).u(reserved).u(used);
  }
  TraceBuilder& mem_info(int64_t device, uint64_t free_bytes, uint64_t total_bytes, uint64_t dt) {
    return time(dt).token(Token::MemInfo).u(static_cast<uint64_t>(device + 1)).u(free_bytes).u(total_bytes);
  }
  TraceBuilder& fork(uint64_t child_pid) { return token(Token::Fork).u(child_pid); }
  TraceBuilder& end(uint64_t events, uint64_t dt) { return time(dt).token(Token::End).u(events); }
  // The clock advances by dt ns (no record when dt is 0, as the writer does within its granularity).
  TraceBuilder& time(uint64_t dt) {
    if (dt) token(Token::Time).u(dt);
    event_offset_ = bytes_.size();
    return *this;
  }

 private:
  int64_t address_delta(uint64_t address) {
    int64_t delta = static_cast<int64_t>(address - last_address_);
    last_address_ = address;
    return delta;
  }

  std::vector<uint8_t> bytes_;
  uint64_t last_address_ = 0;
  int64_t device_ = -1;
  size_t event_offset_ = 0;
  std::map<uint64_t, uint64_t> last_size_by_stack_;
};

}  // namespace gpumemtrace::test
