#include "analyzer/export/record_fields.h"
#include "analyzer/export/record_output.h"
#include "trace/reader/cuda_error_name.h"
#include "common/size_units.h"
#include "common/terminal_text.h"
#include "common/time_units.h"

namespace gpumemtrace::render {

namespace {

class TextFields {
 public:
  explicit TextFields(fmt::memory_buffer& out) : out_(out) {}

  void number(std::string_view key, uint64_t value) { fmt::format_to(field(key), "{}", value); }
  void signed_number(std::string_view key, int64_t value) { fmt::format_to(field(key), "{}", value); }
  void address(std::string_view key, uint64_t value) { fmt::format_to(field(key), "{:#x}", value); }
  void size(std::string_view key, uint64_t bytes) { fmt::format_to(field(key), "{}", format_exact_size(bytes)); }
  void device(std::string_view key, int32_t device) {
    if (device == trace::kNoDevice)
      fmt::format_to(field(key), "none");
    else
      fmt::format_to(field(key), "{}", device);
  }
  void api(format::Api api) {
    const format::ApiInfo& info = format::api_info(api);
    fmt::format_to(field("api"), "{}", info.name);
    fmt::format_to(field("kind"), "{}", format::memory_kind_name(info.kind));
  }
  void error(std::string_view key, uint64_t code) {
    std::string_view name = trace::cuda_error_name(code);
    if (name.empty())
      fmt::format_to(field(key), "{}", code);
    else
      fmt::format_to(field(key), "{} ({})", name, code);
  }
  void text(std::string_view key, std::string_view value) {
    field(key);
    append(quoted_terminal_text(value));
  }
  void texts(std::string_view key, std::span<const std::string_view> values) {
    field(key);
    std::string list = "[";
    for (size_t i = 0; i < values.size(); ++i) append_terminal_text(list.append(i ? ", " : ""), values[i], true);
    append(list + "]");
  }
  void hex_bytes(std::string_view key, std::string_view bytes) {
    auto out = field(key);
    if (bytes.empty()) fmt::format_to(out, "none");
    for (char byte : bytes) fmt::format_to(out, "{:02x}", static_cast<uint8_t>(byte));
  }
  void wall_time(std::string_view key, uint64_t ns_since_epoch) {
    fmt::format_to(field(key), "{}", format_wall_time(ns_since_epoch));
  }

 private:
  fmt::appender field(std::string_view key) { return fmt::format_to(fmt::appender(out_), " {}=", key); }
  void append(std::string_view text) { out_.append(text); }

  fmt::memory_buffer& out_;
};

}  // namespace

std::string format_seconds(uint64_t ns) { return fmt::format("{}.{:09}", ns / 1'000'000'000, ns % 1'000'000'000); }

void append_record_text(fmt::memory_buffer& out, const trace::Record& record, const RecordContext& context) {
  fmt::format_to(fmt::appender(out), "{:>14} ", format_seconds(context.time_ns));
  if (context.thread)
    fmt::format_to(fmt::appender(out), "T{:<3}", context.thread);
  else
    fmt::format_to(fmt::appender(out), "{:<4}", "-");
  fmt::format_to(fmt::appender(out), " {}", trace::record_name(record));
  TextFields fields(out);
  record_fields(record, fields);
  out.push_back('\n');
}

}  // namespace gpumemtrace::render
