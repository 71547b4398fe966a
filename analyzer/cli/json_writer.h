// Writes JSON objects into a buffer, one field at a time: {"key":value,...}. Strings are escaped; bytes that
// are not UTF-8 (a path can hold any) become U+FFFD so the output always parses.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <span>
#include <string_view>

namespace gpumemtrace::cli {

void append_json_string(fmt::memory_buffer& out, std::string_view text);

class JsonObject {
 public:
  explicit JsonObject(fmt::memory_buffer& out) : out_(out) { out_.push_back('{'); }
  JsonObject(const JsonObject&) = delete;
  JsonObject& operator=(const JsonObject&) = delete;
  ~JsonObject() { out_.push_back('}'); }

  void number(std::string_view key, uint64_t value) { fmt::format_to(begin_field(key), "{}", value); }
  void number(std::string_view key, int64_t value) { fmt::format_to(begin_field(key), "{}", value); }
  void boolean(std::string_view key, bool value) { fmt::format_to(begin_field(key), "{}", value); }
  void null(std::string_view key) { fmt::format_to(begin_field(key), "null"); }
  void string(std::string_view key, std::string_view value) {
    begin_field(key);
    append_json_string(out_, value);
  }
  void strings(std::string_view key, std::span<const std::string_view> values);

 private:
  fmt::appender begin_field(std::string_view key);

  fmt::memory_buffer& out_;
  bool first_ = true;
};

}  // namespace gpumemtrace::cli
