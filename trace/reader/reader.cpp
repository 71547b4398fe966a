#include "trace/reader/reader.h"

#include <fmt/format.h>

#include <cstring>
#include <limits>

namespace gpumemtrace::trace {

using format::Token;

namespace {

// "u device+1" with 0 = none.
bool to_device(uint64_t stored, int32_t& device) {
  if (stored > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) return false;
  device = static_cast<int32_t>(stored) - 1;
  return true;
}

const format::ApiInfo* api_of(uint64_t value, bool is_free) {
  if (value >= static_cast<uint64_t>(Api::Count)) return nullptr;
  const format::ApiInfo& info = format::kApis[value];
  return info.is_free == is_free ? &info : nullptr;
}

}  // namespace

Reader::Reader(const std::string& path) : file_(std::make_unique<MappedFile>(path)), data_(file_->bytes()) {
  check_header();
}

Reader::Reader(std::span<const uint8_t> bytes) : data_(bytes) { check_header(); }

void Reader::check_header() {
  if (data_.empty()) throw OpenError("not a gpumemtrace trace (the file is empty)");
  if (data_.size() < sizeof format::kMagic || std::memcmp(data_.data(), format::kMagic, sizeof format::kMagic) != 0)
    throw OpenError("not a gpumemtrace trace");
  if (data_.size() < format::kHeaderSize)
    throw OpenError(fmt::format("the trace header is incomplete ({} of {} bytes)", data_.size(), format::kHeaderSize));
  const uint8_t* v = data_.data() + sizeof format::kMagic;
  uint32_t version = uint32_t{v[0]} | uint32_t{v[1]} << 8 | uint32_t{v[2]} << 16 | uint32_t{v[3]} << 24;
  if (version != format::kVersion)
    throw OpenError(fmt::format("trace format version {} is not supported (this build reads version {})", version,
                                format::kVersion));
  pos_ = data_.data() + format::kHeaderSize;
  record_offset_ = stop_offset_ = format::kHeaderSize;
}

const Record* Reader::next() {
  if (status_ != Status::Reading) return nullptr;
  if (stacks_reset_pending_ || modules_begin_pending_) apply_pending_resets();
  for (;;) {
    const uint8_t* start = pos_;
    // A byte 0 is where the writer has not stored a token yet; the end of the file, where it stopped.
    if (start == data_.data() + data_.size() || *start == 0) return stop(Status::Truncated, start);
    uint8_t token = *start;
    if ((token & 0xC0) == static_cast<uint8_t>(Token::AllocBase)) return decode_alloc(token, start);
    if ((token & 0xC0) == static_cast<uint8_t>(Token::FreeBase)) return decode_free(token, start);
    if (token != static_cast<uint8_t>(Token::Time) && token != static_cast<uint8_t>(Token::Device)) {
      return decode(token, start);
    }
    if (!apply_state(token, start)) return nullptr;
  }
}

// Time and Device only change what the records after them share; they are not handed out.
bool Reader::apply_state(uint8_t token, const uint8_t* start) {
  FieldCursor c(start + 1, data_.data() + data_.size());
  uint64_t value = c.u();
  if (!whole(c, start)) return false;
  if (token == static_cast<uint8_t>(Token::Time)) {
    time_ns_ += value;
  } else if (!valid_device(value, device_, start)) {
    return false;
  }
  pos_ = c.position();
  stop_offset_ = offset_of(pos_);
  return true;
}

void Reader::apply_pending_resets() {
  if (stacks_reset_pending_) {
    stacks_.reset();
    last_size_by_stack_.assign(1, 0);
  }
  if (modules_begin_pending_) modules_.begin(pending_module_generation_);
  stacks_reset_pending_ = modules_begin_pending_ = false;
}

const Record* Reader::stop(Status status, const uint8_t* at) {
  status_ = status;
  stop_offset_ = offset_of(at);
  return nullptr;
}

const Record* Reader::corrupt(const uint8_t* at, std::string_view what) {
  error_ = fmt::format("corrupt trace at byte offset {}: {}", offset_of(at), what);
  return stop(Status::Corrupt, at);
}

const Record* Reader::cursor_failed(const FieldCursor& cursor, const uint8_t* start) {
  switch (cursor.failure()) {
    case FieldCursor::Failure::VarintOverflow:
      return corrupt(cursor.failure_position(), "a varint is longer than 64 bits");
    case FieldCursor::Failure::StringTooLong:
      return corrupt(cursor.failure_position(), "a string runs past the end of the file");
    default:
      return stop(Status::Truncated, start);  // the file ends inside this record
  }
}

[[gnu::always_inline]] inline const Record* Reader::accept(const FieldCursor& cursor, bool is_event) {
  record_offset_ = offset_of(pos_);
  pos_ = cursor.position();
  stop_offset_ = offset_of(pos_);
  if (file_ && stop_offset_ >= next_release_) {
    // Strings of earlier records stay valid: their pages come back from the file if read again.
    file_->release_before(record_offset_);
    next_release_ = stop_offset_ + kReleaseStep;
  }
  ++records_;
  events_ += is_event;
  return &record_;
}

const Record* Reader::unknown_token(const uint8_t* start) {
  return corrupt(start, fmt::format("unknown token 0x{:02x}", *start));
}

[[gnu::always_inline]] inline bool Reader::whole(const FieldCursor& cursor, const uint8_t* start) {
  if (cursor.failure() == FieldCursor::Failure::None) return true;
  cursor_failed(cursor, start);
  return false;
}

bool Reader::valid_device(uint64_t stored, int32_t& device, const uint8_t* start) {
  if (to_device(stored, device)) return true;
  corrupt(start, fmt::format("impossible device {}", stored));
  return false;
}

// Events happen at the current time, on the current thread.
[[gnu::always_inline]] inline const Record* Reader::accept_event(const FieldCursor& cursor, Event& event) {
  event.time_ns = time_ns_;
  event.thread = thread_;
  return accept(cursor, true);
}

// For events that need no checks beyond being whole.
const Record* Reader::finish_event(FieldCursor& cursor, const uint8_t* start, Event& event) {
  if (!whole(cursor, start)) return nullptr;
  return accept_event(cursor, event);
}

const Record* Reader::decode_range(FieldCursor& c, const uint8_t* start, AddressRange& out) {
  out.address = c.u();
  out.size = c.u();
  return finish_event(c, start, out);
}

const Record* Reader::decode_pool(FieldCursor& c, const uint8_t* start, PoolEvent& out) {
  out.pool = c.u();
  uint64_t device = c.u();
  if (!whole(c, start) || !valid_device(device, out.device, start)) return nullptr;
  return accept_event(c, out);
}

const Record* Reader::decode_alloc(uint8_t token, const uint8_t* start) {
  const format::ApiInfo* info = api_of(token & format::kApiMask, false);
  if (!info) return unknown_token(start);
  FieldCursor c(start + 1, data_.data() + data_.size());
  Alloc& out = record_.emplace<Alloc>();
  out.api = static_cast<Api>(token & format::kApiMask);
  int64_t address_delta = c.s();
  uint64_t stack = c.u();
  int64_t size_delta = c.s();
  out.stream = info->takes_stream ? c.u() : 0;
  out.pool = info->takes_pool ? c.u() : 0;
  if (!whole(c, start)) return nullptr;
  if (!stacks_.contains(stack)) return corrupt(start, fmt::format("alloc refers to undefined stack {}", stack));
  if (stack >= last_size_by_stack_.size()) last_size_by_stack_.resize(stack + 1, 0);
  uint64_t& last_size = last_size_by_stack_[stack];
  out.size = last_size += static_cast<uint64_t>(size_delta);
  out.device = device_;
  out.stack = static_cast<uint32_t>(stack);
  out.address = address_ += static_cast<uint64_t>(address_delta);
  return accept_event(c, out);
}

const Record* Reader::decode_free(uint8_t token, const uint8_t* start) {
  const format::ApiInfo* info = api_of(token & format::kApiMask, true);
  if (!info) return unknown_token(start);
  FieldCursor c(start + 1, data_.data() + data_.size());
  Free& out = record_.emplace<Free>();
  out.api = static_cast<Api>(token & format::kApiMask);
  int64_t address_delta = c.s();
  out.stream = info->takes_stream ? c.u() : 0;
  if (!whole(c, start)) return nullptr;
  out.address = address_ += static_cast<uint64_t>(address_delta);
  return accept_event(c, out);
}

// Every record but Alloc and Free. Fields go straight into the record; a record the data does not hold
// whole, or that fails a check, is never handed out and changes no state.
const Record* Reader::decode(uint8_t token, const uint8_t* start) {
  FieldCursor c(start + 1, data_.data() + data_.size());

  switch (static_cast<Token>(token)) {
    case Token::Process: {
      Process& out = record_.emplace<Process>();
      out.pid = c.u();
      out.ppid = c.u();
      out.start_wall_ns = c.u();
      out.max_stack_depth = c.u();
      out.rank = c.s();
      out.hostname = c.str();
      out.executable = c.str();
      uint64_t argc = c.u();
      std::vector<std::string_view> argv;
      // Every string takes at least one byte, so a damaged argc fails at the end of the data, not later.
      for (uint64_t i = 0; i < argc && c.failure() == FieldCursor::Failure::None; ++i) argv.push_back(c.str());
      if (!whole(c, start)) return nullptr;
      argv_ = std::move(argv);
      out.argv = argv_;
      process_ = out;
      has_process_ = true;
      return accept(c, false);
    }
    case Token::ModulesBegin: {
      ModulesBegin& out = record_.emplace<ModulesBegin>();
      out.generation = c.u();
      if (!whole(c, start)) return nullptr;
      modules_begin_pending_ = true;
      pending_module_generation_ = out.generation;
      return accept(c, false);
    }
    case Token::Module: {
      Module& out = record_.emplace<Module>();
      out.base = c.u();
      out.low = c.u();
      out.high = c.u();
      out.path = c.str();
      out.build_id = c.str();
      if (!whole(c, start)) return nullptr;
      modules_.add(ModuleInfo{out.base, out.low, out.high, std::string(out.path), std::string(out.build_id)});
      return accept(c, false);
    }
    case Token::StacksReset:
      record_.emplace<StacksReset>();
      stacks_reset_pending_ = true;
      return accept(c, false);
    case Token::StackNode: {
      uint64_t parent = c.u();
      uint64_t ip = c.u();
      if (!whole(c, start)) return nullptr;
      if (!stacks_.contains(parent))
        return corrupt(start, fmt::format("stack node refers to undefined parent {}", parent));
      if (stacks_.size() == std::numeric_limits<uint32_t>::max()) return corrupt(start, "too many stack nodes");
      uint32_t id = stacks_.add(static_cast<uint32_t>(parent), ip);
      record_.emplace<StackNode>(StackNode{id, static_cast<uint32_t>(parent), ip});
      return accept(c, false);
    }
    case Token::ThreadNew: {
      uint64_t index = c.u();
      uint64_t tid = c.u();
      std::string_view name = c.str();
      if (!whole(c, start)) return nullptr;
      if (index != uint64_t{threads_.size()} + 1)
        return corrupt(start, fmt::format("new thread has index {}, expected {}", index, threads_.size() + 1));
      threads_.add(tid, name);
      // The thread's records follow: it is the current thread from here.
      thread_ = static_cast<uint32_t>(index);
      record_.emplace<ThreadNew>(ThreadNew{thread_, tid, name});
      return accept(c, false);
    }
    case Token::ThreadSwitch: {
      uint64_t index = c.u();
      if (!whole(c, start)) return nullptr;
      if (!threads_.contains(index)) return corrupt(start, fmt::format("switch to undefined thread {}", index));
      thread_ = static_cast<uint32_t>(index);
      record_.emplace<ThreadSwitch>(ThreadSwitch{thread_});
      return accept(c, false);
    }
    case Token::AllocFailed: {
      AllocFailed& out = record_.emplace<AllocFailed>();
      uint64_t api = c.u();
      uint64_t device = c.u();
      out.size = c.u();
      uint64_t stack = c.u();
      out.error = c.u();
      if (out.error == kErrorOutOfMemory) {
        out.device_free = c.u();
        out.device_total = c.u();
      }
      if (!whole(c, start) || !valid_device(device, out.device, start)) return nullptr;
      if (!api_of(api, false)) return corrupt(start, fmt::format("failed allocation with unknown API {}", api));
      if (!stacks_.contains(stack))
        return corrupt(start, fmt::format("failed allocation refers to undefined stack {}", stack));
      out.api = static_cast<Api>(api);
      out.stack = static_cast<uint32_t>(stack);
      return accept_event(c, out);
    }
    case Token::FreeFailed: {
      FreeFailed& out = record_.emplace<FreeFailed>();
      uint64_t api = c.u();
      out.address = c.u();
      out.error = c.u();
      if (!whole(c, start)) return nullptr;
      if (!api_of(api, true)) return corrupt(start, fmt::format("failed free with unknown API {}", api));
      out.api = static_cast<Api>(api);
      return accept_event(c, out);
    }
    case Token::MemMap: {
      MemMap& out = record_.emplace<MemMap>();
      out.address = c.u();
      out.size = c.u();
      out.handle = c.u();
      out.offset = c.u();
      return finish_event(c, start, out);
    }
    case Token::MemUnmap:
      return decode_range(c, start, record_.emplace<MemUnmap>());
    case Token::AddressReserve:
      return decode_range(c, start, record_.emplace<AddressReserve>());
    case Token::AddressFree:
      return decode_range(c, start, record_.emplace<AddressFree>());
    case Token::PoolCreate:
      return decode_pool(c, start, record_.emplace<PoolCreate>());
    case Token::PoolDestroy:
      return decode_pool(c, start, record_.emplace<PoolDestroy>());
    case Token::PoolTrim: {
      PoolTrim& out = record_.emplace<PoolTrim>();
      out.pool = c.u();
      out.min_bytes_to_keep = c.u();
      out.reserved_after = c.u();
      out.used_after = c.u();
      return finish_event(c, start, out);
    }
    case Token::MemInfo: {
      MemInfo& out = record_.emplace<MemInfo>();
      uint64_t device = c.u();
      out.free_bytes = c.u();
      out.total_bytes = c.u();
      if (!whole(c, start) || !valid_device(device, out.device, start)) return nullptr;
      return accept_event(c, out);
    }
    case Token::PoolUsage: {
      PoolUsage& out = record_.emplace<PoolUsage>();
      out.pool = c.u();
      uint64_t device = c.u();
      out.reserved_bytes = c.u();
      out.used_bytes = c.u();
      if (!whole(c, start) || !valid_device(device, out.device, start)) return nullptr;
      return accept_event(c, out);
    }
    case Token::Fork: {
      Fork& out = record_.emplace<Fork>();
      out.child_pid = c.u();
      if (!whole(c, start)) return nullptr;
      return accept(c, false);
    }
    case Token::End: {
      End& out = record_.emplace<End>();
      out.events_written = c.u();
      if (!whole(c, start)) return nullptr;
      out.time_ns = time_ns_;
      out.thread = thread_;
      status_ = Status::Complete;
      return accept(c, false);
    }
    default:
      return unknown_token(start);
  }
}

}  // namespace gpumemtrace::trace
