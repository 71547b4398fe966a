#include "trace/reader/reader.h"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <limits>
#include <system_error>
#include <utility>

#include "trace/packed/packed_format.h"
#include "trace/reader/opened_trace.h"

namespace gpumemtrace::trace {

using format::Token;

namespace {

// "u device+1" with 0 = none.
bool to_device(uint64_t stored, int32_t& device) {
  if (stored > static_cast<uint64_t>(kMaxDevice) + 1) return false;
  device = static_cast<int32_t>(stored) - 1;
  return true;
}

const format::ApiInfo* api_of(uint64_t value, bool is_free) {
  if (value >= static_cast<uint64_t>(Api::Count)) return nullptr;
  const format::ApiInfo& info = format::kApis[value];
  return info.is_free == is_free ? &info : nullptr;
}

}  // namespace

// Reads the fields a record declares (include/gpumemtrace/trace_records.h) and checks each against what the
// trace has defined so far. The first failed check is kept; the record is corrupt if it is whole.
class Reader::FieldReader {
 public:
  FieldReader(Reader& reader, FieldCursor& cursor, std::string_view noun)
      : reader_(reader), c_(cursor), noun_(noun) {}

  const std::string& error() const { return error_; }

  void u(std::string_view, uint64_t& value, As as = As::Number) {
    value = c_.u();
    if (as == As::Size && __builtin_add_overflow(sizes_, value, &sizes_))
      fail("{}: the trace's sizes add up to more than 2^64 bytes", noun_);
  }
  uint64_t sizes() const { return sizes_; }  // the record's sizes, added up
  void u(std::string_view name, uint32_t& value, As = As::Number) {
    uint64_t stored = c_.u();
    if (stored > std::numeric_limits<uint32_t>::max()) fail("impossible {} {}", name, stored);
    value = static_cast<uint32_t>(stored);
  }
  void s(std::string_view, int64_t& value) { value = c_.s(); }
  void str(std::string_view, std::string_view& value, As = As::Text) { value = c_.str(); }
  void strs(std::string_view, std::span<const std::string_view>& values) {
    uint64_t count = c_.u();
    std::vector<std::string_view>& strings = reader_.strings_;
    strings.clear();
    // Every string takes at least one byte, so a damaged count fails at the end of the data, not later.
    for (uint64_t i = 0; i < count && c_.failure() == FieldCursor::Failure::None; ++i) strings.push_back(c_.str());
    values = strings;
  }
  void device(std::string_view, int32_t& value) {
    uint64_t stored = c_.u();
    if (!to_device(stored, value)) fail("impossible device {}", stored);
  }
  void alloc_api(std::string_view, Api& value) { api(value, false); }
  void free_api(std::string_view, Api& value) { api(value, true); }
  void stack(std::string_view name, uint32_t& value) {
    uint64_t id = c_.u();
    if (!reader_.stacks_.contains(id)) fail("{} refers to undefined {} {}", noun_, name, id);
    value = static_cast<uint32_t>(id);
  }
  template <typename T>
  void implicit(std::string_view, T&) {}

 private:
  void api(Api& value, bool is_free) {
    uint64_t stored = c_.u();
    if (!api_of(stored, is_free)) fail("{} with unknown API {}", noun_, stored);
    value = static_cast<Api>(stored);
  }
  // A value read from a cut record is 0 and means nothing: the record is truncated, not corrupt.
  template <typename... Args>
  void fail(fmt::format_string<Args...> what, Args&&... args) {
    if (error_.empty() && c_.failure() == FieldCursor::Failure::None)
      error_ = fmt::format(what, std::forward<Args>(args)...);
  }

  Reader& reader_;
  FieldCursor& c_;
  std::string_view noun_;
  std::string error_;
  uint64_t sizes_ = 0;
};

Reader::Reader(const std::string& path) : Reader(OpenedTrace::map_once(path)) {}

Reader::Reader(std::unique_ptr<MappedFile> file) : file_(std::move(file)), data_(file_->bytes()) { check_header(); }

Reader::Reader(std::span<const uint8_t> bytes) : data_(bytes) { check_header(); }

void Reader::check_header() {
  if (data_.empty()) throw OpenError("not a gpumemtrace trace (the file is empty)");
  if (data_.size() < sizeof format::kMagic || std::memcmp(data_.data(), format::kMagic, sizeof format::kMagic) != 0)
    throw OpenError("not a gpumemtrace trace");
  if (data_.size() < format::kHeaderSize)
    throw OpenError(fmt::format("the trace header is incomplete ({} of {} bytes)", data_.size(), format::kHeaderSize));
  const uint8_t* v = data_.data() + sizeof format::kMagic;
  uint32_t version = uint32_t{v[0]} | uint32_t{v[1]} << 8 | uint32_t{v[2]} << 16 | uint32_t{v[3]} << 24;
  if (version == packed::kPackedVersion && !file_)
    throw OpenError("a packed trace (version 2) is read from a file, not from memory");
  if (version != format::kVersion)
    throw OpenError(fmt::format("trace format version {} is not supported (this build reads versions {} and {})",
                                version, format::kVersion, packed::kPackedVersion));
  pos_ = data_.data() + format::kHeaderSize;
  record_offset_ = stop_offset_ = format::kHeaderSize;
}

[[gnu::always_inline]] inline const Record* Reader::read_next() {
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

const Record* Reader::next() {
  if (const Record* record = read_next()) [[likely]] return record;
  return status_ == Status::Truncated && file_ && file_->may_grow() ? next_after_growth() : nullptr;
}

// The data ended at or inside the record at stop_offset(), which changed no state: once the file has grown,
// it is read again from there.
const Record* Reader::next_after_growth() {
  while (status_ == Status::Truncated && file_->may_grow()) {
    std::span<const uint8_t> longer = file_->wait_longer();
    if (longer.size() == data_.size()) break;
    data_ = longer;
    pos_ = data_.data() + stop_offset_;
    status_ = Status::Reading;
    if (const Record* record = read_next()) return record;
  }
  return nullptr;
}

uint64_t Reader::expected_size() const { return file_ ? file_->expected_size() : data_.size(); }

// Time and Device only change what the records after them share; they are not handed out.
bool Reader::apply_state(uint8_t token, const uint8_t* start) {
  FieldCursor c(start + 1, data_.data() + data_.size());
  if (token == static_cast<uint8_t>(Token::Time)) {
    Time time;
    if (!read(c, time, start)) return false;
    time_ns_ += time.delta_ns;
  } else {
    Device device;
    if (!read(c, device, start)) return false;
    device_ = device.device;
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

bool Reader::reject(const uint8_t* at, std::string_view what) {
  corrupt(at, what);
  return false;
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

// Hands out the record: events happen at the current time, on the current thread.
template <typename R>
[[gnu::always_inline]] inline const Record* Reader::accept(const FieldCursor& cursor, R& out) {
  if constexpr (std::is_base_of_v<Event, R>) {
    out.time_ns = time_ns_;
    out.thread = thread_;
  }
  record_offset_ = offset_of(pos_);
  pos_ = cursor.position();
  stop_offset_ = offset_of(pos_);
  if (file_ && stop_offset_ >= next_release_) {
    // Strings of earlier records stay valid: their pages come back from the file if read again.
    file_->release_before(record_offset_);
    next_release_ = stop_offset_ + kReleaseStep;
  }
  ++records_;
  events_ += kIsEvent<R>;
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

// Alloc and Free are the hot path, decoded by hand (see their declarations for the layout).
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
  if (!add_size(out.size)) return corrupt(start, "alloc: the trace's sizes add up to more than 2^64 bytes");
  out.device = device_;
  out.stack = static_cast<uint32_t>(stack);
  out.address = address_ += static_cast<uint64_t>(address_delta);
  return accept(c, out);
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
  return accept(c, out);
}

// Every record but Alloc and Free, by token.
const Record* Reader::decode(uint8_t token, const uint8_t* start) {
  using Decode = const Record* (Reader::*)(const uint8_t*);
  static constexpr auto kDecoders = []<typename... Rs>(std::variant<Rs...>*) {
    std::array<Decode, format::kApiMask + 1> decoders;
    decoders.fill(&Reader::unknown_token);
    auto add = [&]<typename R>() {
      constexpr auto token = static_cast<uint8_t>(R::kToken);
      if constexpr (token < decoders.size()) decoders[token] = &Reader::decode<R>;  // not Alloc and Free
    };
    (add.template operator()<Rs>(), ...);
    return decoders;
  }(static_cast<Record*>(nullptr));
  return token < kDecoders.size() ? (this->*kDecoders[token])(start) : unknown_token(start);
}

// A record the data does not hold whole, or that fails a check, is never handed out and changes no state.
template <typename R>
const Record* Reader::decode(const uint8_t* start) {
  FieldCursor c(start + 1, data_.data() + data_.size());
  R& out = record_.emplace<R>();
  if (!read(c, out, start) || !apply(out, start)) return nullptr;
  return accept(c, out);
}

template <typename R>
bool Reader::read(FieldCursor& cursor, R& out, const uint8_t* start) {
  FieldReader fields(*this, cursor, noun_of<R>());
  R::fields(out, fields);
  if (!whole(cursor, start)) return false;
  if (!fields.error().empty()) return reject(start, fields.error());
  return add_size(fields.sizes()) ||
         reject(start, fmt::format("{}: the trace's sizes add up to more than 2^64 bytes", noun_of<R>()));
}

bool Reader::apply(Process& out, const uint8_t*) {
  argv_.swap(strings_);
  out.argv = argv_;
  process_ = out;
  has_process_ = true;
  return true;
}

bool Reader::apply(ModulesBegin& out, const uint8_t*) {
  modules_begin_pending_ = true;
  pending_module_generation_ = out.generation;
  return true;
}

bool Reader::apply(Module& out, const uint8_t*) {
  modules_.add(ModuleInfo::of(out));
  return true;
}

bool Reader::apply(StacksReset&, const uint8_t*) {
  stacks_reset_pending_ = true;
  return true;
}

bool Reader::apply(StackNode& out, const uint8_t* start) {
  if (stacks_.size() == std::numeric_limits<uint32_t>::max()) return reject(start, "too many stack nodes");
  if (format::is_python_frame(out.ip)) {
    if (format::python_code_of(out.ip) >= python_codes_.size())
      return reject(start, fmt::format("stack node refers to undefined Python code {}", format::python_code_of(out.ip)));
  } else if (format::is_named_frame(out.ip)) {
    if (format::native_function_of(out.ip) >= native_functions_.size())
      return reject(start,
                    fmt::format("stack node refers to undefined native function {}", format::native_function_of(out.ip)));
  } else if (format::is_tagged_frame(out.ip) && out.ip != format::kTruncatedFrame) {
    return reject(start, fmt::format("stack node with unknown frame marker {:#x}", out.ip));
  }
  // A stack holds at most the Process record's maximum depth, and one node more for a cut stack's marker: a
  // deeper chain is damage (and would cost every reader of the stack time and memory in its depth).
  uint64_t depth = uint64_t{stacks_.depth(out.parent)} + 1;
  if (has_process_ && process_.max_stack_depth > 0 && depth > process_.max_stack_depth + 1)
    return reject(start, fmt::format("stack node at depth {}, deeper than the trace's maximum stack depth {}", depth,
                                     process_.max_stack_depth));
  out.id = stacks_.add(out.parent, out.ip);
  return true;
}

bool Reader::apply(NativeFunction& out, const uint8_t* start) {
  if (native_functions_.size() == format::kNativeFunctions) return reject(start, "too many native functions");
  out.index = static_cast<uint32_t>(native_functions_.size());
  native_functions_.push_back(NativeFunctionInfo::of(out));
  return true;
}

bool Reader::apply(PythonCode& out, const uint8_t* start) {
  if (python_codes_.size() == format::kPythonCodes) return reject(start, "too many Python codes");
  out.index = static_cast<uint32_t>(python_codes_.size());
  python_codes_.push_back(PythonCodeInfo::of(out));
  return true;
}

bool Reader::apply(ThreadNew& out, const uint8_t* start) {
  uint64_t expected = uint64_t{threads_.size()} + 1;
  if (out.index != expected)
    return reject(start, fmt::format("new thread has index {}, expected {}", out.index, expected));
  threads_.add(out.tid, out.name);
  thread_ = out.index;  // the thread's records follow: it is the current thread from here
  return true;
}

bool Reader::apply(ThreadSwitch& out, const uint8_t* start) {
  if (!threads_.contains(out.index)) return reject(start, fmt::format("switch to undefined thread {}", out.index));
  thread_ = out.index;
  return true;
}

bool Reader::apply(DeviceState& out, const uint8_t* start) {
  if (out.moment >= static_cast<uint64_t>(format::DeviceStateMoment::Count))
    return reject(start, fmt::format("device state at unknown moment {}", out.moment));
  if (device_processes_due_ > 0)
    return reject(start, fmt::format("device state before the {} processes of the previous one", device_processes_due_));
  device_processes_due_ = out.processes;
  return true;
}

bool Reader::apply(DeviceProcess&, const uint8_t* start) {
  if (device_processes_due_ == 0) return reject(start, "device process without a device state announcing it");
  --device_processes_due_;
  return true;
}

bool Reader::apply(End&, const uint8_t*) {
  status_ = Status::Complete;
  return true;
}

}  // namespace gpumemtrace::trace
