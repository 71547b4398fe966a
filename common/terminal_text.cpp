#include "common/terminal_text.h"

#include <cstdint>

#include "common/utf8.h"

namespace gpumemtrace {

namespace {

void append_hex(std::string& out, std::string_view prefix, uint32_t value, int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += prefix;
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) out += kHex[(value >> shift) & 0xF];
}

}  // namespace

void append_terminal_text(std::string& out, std::string_view text, bool quoted) {
  if (quoted) out += '"';
  for (size_t i = 0; i < text.size();) {
    auto c = static_cast<uint8_t>(text[i]);
    size_t length = utf8_sequence_length(text, i);
    if (length == 0) {
      append_hex(out, "\\x", c, 2);
    } else if (length == 2 && c == 0xC2 && static_cast<uint8_t>(text[i + 1]) < 0xA0) {
      append_hex(out, "\\u", static_cast<uint8_t>(text[i + 1]), 4);  // C1: U+0080 to U+009F
    } else if (length > 1) {
      out.append(text.substr(i, length));
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7F) {
      append_hex(out, "\\x", c, 2);
    } else {
      if (quoted && (c == '"' || c == '\\')) out += '\\';
      out += static_cast<char>(c);
    }
    i += length ? length : 1;
  }
  if (quoted) out += '"';
}

}  // namespace gpumemtrace
