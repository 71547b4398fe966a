// Writes nested JSON (objects in arrays in objects) into a buffer, in order, for the reports' --json
// output. Keys are given for members of objects and left empty for elements of arrays; strings are
// escaped as json_writer.h does.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace gpumemtrace::cli {

class JsonTree {
 public:
  explicit JsonTree(fmt::memory_buffer& out) : out_(out) {}

  void begin_object(std::string_view key = {});
  void end_object();
  void begin_array(std::string_view key = {});
  void end_array();

  void number(std::string_view key, uint64_t value);
  void number(std::string_view key, int64_t value);
  void real(std::string_view key, double value);
  void boolean(std::string_view key, bool value);
  void null(std::string_view key);
  void string(std::string_view key, std::string_view value);
  // A string, or null when there is none.
  void optional_string(std::string_view key, std::string_view value);
  void optional_number(std::string_view key, std::optional<uint64_t> value);

 private:
  fmt::appender member(std::string_view key);

  fmt::memory_buffer& out_;
  std::vector<bool> first_{true};  // per open object/array: nothing written in it yet
};

}  // namespace gpumemtrace::cli
