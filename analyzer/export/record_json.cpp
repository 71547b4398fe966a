#include "analyzer/render/json_writer.h"
#include "analyzer/export/record_fields.h"
#include "analyzer/export/record_output.h"
#include "trace/reader/cuda_error_name.h"

namespace gpumemtrace::render {

namespace {

// Addresses are hex strings: JSON readers that parse numbers as doubles would round them.
class JsonFields {
 public:
  explicit JsonFields(JsonObject& json) : json_(json) {}

  void number(std::string_view key, uint64_t value) { json_.number(key, value); }
  void signed_number(std::string_view key, int64_t value) { json_.number(key, value); }
  void address(std::string_view key, uint64_t value) { json_.string(key, fmt::format("{:#x}", value)); }
  void size(std::string_view key, uint64_t bytes) { json_.number(key, bytes); }
  void device(std::string_view key, int32_t device) {
    if (device == trace::kNoDevice)
      json_.null(key);
    else
      json_.number(key, int64_t{device});
  }
  void api(format::Api api) {
    const format::ApiInfo& info = format::api_info(api);
    json_.string("api", info.name);
    json_.string("kind", format::memory_kind_name(info.kind));
  }
  void error(std::string_view key, uint64_t code) {
    json_.number(key, code);
    std::string_view name = trace::cuda_error_name(code);
    std::string name_key = std::string(key) + "_name";
    if (name.empty())
      json_.null(name_key);
    else
      json_.string(name_key, name);
  }
  void text(std::string_view key, std::string_view value) { json_.string(key, value); }
  void texts(std::string_view key, std::span<const std::string_view> values) { json_.strings(key, values); }
  void hex_bytes(std::string_view key, std::string_view bytes) {
    std::string hex;
    for (char byte : bytes) hex += fmt::format("{:02x}", static_cast<uint8_t>(byte));
    json_.string(key, hex);
  }
  void wall_time(std::string_view key, uint64_t ns_since_epoch) {
    json_.number(std::string(key) + "_ns", ns_since_epoch);
  }

 private:
  JsonObject& json_;
};

}  // namespace

void append_record_json(fmt::memory_buffer& out, const trace::Record& record, const RecordContext& context) {
  {
    JsonObject json(out);
    json.number("file_offset", context.offset);
    json.number("time_ns", context.time_ns);
    json.number("thread", uint64_t{context.thread});
    json.string("record", trace::record_name(record));
    JsonFields fields(json);
    record_fields(record, fields);
  }
  out.push_back('\n');
}

}  // namespace gpumemtrace::render
