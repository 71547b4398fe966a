#include "common/shortened_text.h"

namespace gpumemtrace {

namespace {

bool continues_character(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

std::string shortened_text(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  constexpr std::string_view kEllipsis = "…";
  if (max_bytes <= kEllipsis.size()) return std::string(kEllipsis);
  size_t keep = max_bytes - kEllipsis.size();
  size_t head = keep / 3;  // the end says more: the innermost phase, the file name
  while (head > 0 && continues_character(text[head])) --head;
  size_t tail = text.size() - (keep - head);
  while (tail < text.size() && continues_character(text[tail])) ++tail;
  std::string out(text.substr(0, head));
  out += kEllipsis;
  out += text.substr(tail);
  return out;
}

}  // namespace gpumemtrace
