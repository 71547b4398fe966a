#include "analyzer/cli/json_writer.h"

namespace gpumemtrace::cli {

namespace {

// The length of the valid UTF-8 sequence at text[i], or 0.
size_t utf8_sequence_length(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  uint8_t lead = byte(i);
  size_t length = lead >= 0xF0 && lead <= 0xF4 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC2 && lead <= 0xDF ? 2 : 0;
  if (length == 0 || i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  uint8_t second = byte(i + 1);
  if (lead == 0xE0 && second < 0xA0) return 0;  // overlong
  if (lead == 0xED && second > 0x9F) return 0;  // surrogate
  if (lead == 0xF0 && second < 0x90) return 0;  // overlong
  if (lead == 0xF4 && second > 0x8F) return 0;  // beyond U+10FFFF
  return length;
}

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
  out.push_back('"');
  for (size_t i = 0; i < text.size();) {
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
    else if (c < 0x20)
      fmt::format_to(fmt::appender(out), "\\u{:04x}", c);
    else
      out.push_back(static_cast<char>(c));
    ++i;
  }
  out.push_back('"');
}

fmt::appender JsonObject::begin_field(std::string_view key) {
  if (!first_) out_.push_back(',');
  first_ = false;
  append_json_string(out_, key);
  out_.push_back(':');
  return fmt::appender(out_);
}

void JsonObject::strings(std::string_view key, std::span<const std::string_view> values) {
  begin_field(key);
  out_.push_back('[');
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out_.push_back(',');
    append_json_string(out_, values[i]);
  }
  out_.push_back(']');
}

}  // namespace gpumemtrace::cli
