#include "analyzer/cli/json_tree.h"

#include "analyzer/cli/json_writer.h"

namespace gpumemtrace::cli {

fmt::appender JsonTree::member(std::string_view key) {
  if (!first_.back()) out_.push_back(',');
  first_.back() = false;
  if (!key.empty()) {
    append_json_string(out_, key);
    out_.push_back(':');
  }
  return fmt::appender(out_);
}

void JsonTree::begin_object(std::string_view key) {
  member(key);
  out_.push_back('{');
  first_.push_back(true);
}

void JsonTree::end_object() {
  first_.pop_back();
  out_.push_back('}');
}

void JsonTree::begin_array(std::string_view key) {
  member(key);
  out_.push_back('[');
  first_.push_back(true);
}

void JsonTree::end_array() {
  first_.pop_back();
  out_.push_back(']');
}

void JsonTree::number(std::string_view key, uint64_t value) { fmt::format_to(member(key), "{}", value); }
void JsonTree::number(std::string_view key, int64_t value) { fmt::format_to(member(key), "{}", value); }
void JsonTree::real(std::string_view key, double value) { fmt::format_to(member(key), "{:.6g}", value); }
void JsonTree::boolean(std::string_view key, bool value) { fmt::format_to(member(key), "{}", value); }
void JsonTree::null(std::string_view key) { fmt::format_to(member(key), "null"); }

void JsonTree::string(std::string_view key, std::string_view value) {
  member(key);
  append_json_string(out_, value);
}

void JsonTree::optional_string(std::string_view key, std::string_view value) {
  if (value.empty())
    null(key);
  else
    string(key, value);
}

void JsonTree::optional_number(std::string_view key, std::optional<uint64_t> value) {
  if (value)
    number(key, *value);
  else
    null(key);
}

}  // namespace gpumemtrace::cli
