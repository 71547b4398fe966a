#include "analyzer/render/json_writer.h"

#include "common/utf8.h"

namespace gpumemtrace::render {

namespace {

std::string_view short_escape(uint8_t c) {
  switch (c) {
    case '"':
      return "\\\"";
    case '\\':
      return "\\\\";
    case '\n':
      return "\\n";
    case '\t':
      return "\\t";
    case '\r':
      return "\\r";
    default:
      return {};
  }
}

}  // namespace

void append_json_string(fmt::memory_buffer& out, std::string_view text) {
  // Printable ASCII other than " and \ goes out in runs: `dump --json` spends its time here.
  auto plain = [](uint8_t c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; };
  out.push_back('"');
  for (size_t i = 0; i < text.size();) {
    size_t run = i;
    while (run < text.size() && plain(static_cast<uint8_t>(text[run]))) ++run;
    out.append(text.substr(i, run - i));
    if ((i = run) == text.size()) break;
    uint8_t c = static_cast<uint8_t>(text[i]);
    if (c >= 0x80) {
      size_t length = utf8_sequence_length(text, i);
      if (length == 0) {
        out.append(std::string_view("\\ufffd"));
        ++i;
      } else {
        out.append(text.substr(i, length));
        i += length;
      }
      continue;
    }
    if (std::string_view escape = short_escape(c); !escape.empty())
      out.append(escape);
    else
      fmt::format_to(fmt::appender(out), "\\u{:04x}", c);
    ++i;
  }
  out.push_back('"');
}

void JsonWriter::open(std::string_view key, char bracket, bool array) {
  member(key);
  out_.push_back(bracket);
  uint64_t bit = uint64_t{1} << depth_++;
  nonempty_ &= ~bit;
  arrays_ = array ? arrays_ | bit : arrays_ & ~bit;
}

void JsonWriter::strings(std::string_view key, std::span<const std::string_view> values) {
  member(key);
  out_.push_back('[');
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out_.push_back(',');
    append_json_string(out_, values[i]);
  }
  out_.push_back(']');
}

void JsonWriter::optional_string(std::string_view key, std::string_view value) {
  if (value.empty())
    null(key);
  else
    string(key, value);
}

void JsonWriter::optional_number(std::string_view key, std::optional<uint64_t> value) {
  if (value)
    number(key, *value);
  else
    null(key);
}

}  // namespace gpumemtrace::render
