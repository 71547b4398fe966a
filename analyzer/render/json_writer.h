// Writes JSON into a buffer as it goes, with no tree in memory: `dump --json` writes one object per
// record (hundreds of millions), the reports write nested objects and arrays. Strings are escaped; bytes
// that are not UTF-8 (a path can hold any) become U+FFFD so the output always parses (common/utf8.h).
//
//   JsonWriter json(out);
//   json.begin_object();
//   json.number("pid", 42);
//   json.begin_array("frames");
//   json.string({}, "main");  // elements of an array have no key
//   json.end_array();
//   json.end_object();
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace gpumemtrace::render {

void append_json_string(fmt::memory_buffer& out, std::string_view text);

class JsonWriter {
 public:
  explicit JsonWriter(fmt::memory_buffer& out) : out_(out) {}
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  // Objects and arrays nest at most 64 deep. `key` names a member of an object; it is ignored in arrays.
  void begin_object(std::string_view key = {}) { open(key, '{', false); }
  void end_object() { close('}'); }
  void begin_array(std::string_view key = {}) { open(key, '[', true); }
  void end_array() { close(']'); }

  void number(std::string_view key, uint64_t value) { fmt::format_to(member(key), "{}", value); }
  void number(std::string_view key, int64_t value) { fmt::format_to(member(key), "{}", value); }
  void boolean(std::string_view key, bool value) { fmt::format_to(member(key), "{}", value); }
  // thousandths / 1000 with 3 decimals: 12345 -> 12.345 (ns as µs, exactly).
  void thousandths(std::string_view key, uint64_t thousandths) {
    fmt::format_to(member(key), "{}.{:03}", thousandths / 1000, thousandths % 1000);
  }
  // A ratio, to 4 decimals.
  void real(std::string_view key, double value) { fmt::format_to(member(key), "{:.4f}", value); }
  void null(std::string_view key) { fmt::format_to(member(key), "null"); }
  void string(std::string_view key, std::string_view value) {
    member(key);
    append_json_string(out_, value);
  }
  void strings(std::string_view key, std::span<const std::string_view> values);
  // null for an empty string or no number: "not known".
  void optional_string(std::string_view key, std::string_view value);
  void optional_number(std::string_view key, std::optional<uint64_t> value);
  // A value written as JSON already (another renderer's output), as it is.
  void raw(std::string_view key, std::string_view json) { fmt::format_to(member(key), "{}", json); }

 private:
  // Writes the separator and the key a value needs where it goes.
  fmt::appender member(std::string_view key) {
    if (depth_ > 0) {
      uint64_t bit = uint64_t{1} << (depth_ - 1);
      if (nonempty_ & bit) out_.push_back(',');
      nonempty_ |= bit;
      if (!(arrays_ & bit)) {
        append_json_string(out_, key);
        out_.push_back(':');
      }
    }
    return fmt::appender(out_);
  }
  void open(std::string_view key, char bracket, bool array);
  void close(char bracket) {
    --depth_;
    out_.push_back(bracket);
  }

  fmt::memory_buffer& out_;
  uint32_t depth_ = 0;     // open objects and arrays
  uint64_t nonempty_ = 0;  // bit d: the container at depth d + 1 has a member already
  uint64_t arrays_ = 0;    // bit d: the container at depth d + 1 is an array
};

// One JSON object for the lifetime of the variable: {"key":value,...}.
class JsonObject : public JsonWriter {
 public:
  explicit JsonObject(fmt::memory_buffer& out) : JsonWriter(out) { begin_object(); }
  ~JsonObject() { end_object(); }
};

}  // namespace gpumemtrace::render
