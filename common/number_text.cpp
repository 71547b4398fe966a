#include "common/number_text.h"

#include <cctype>

namespace gpumemtrace {

std::optional<NumberAndUnit> split_number_and_unit(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  size_t digits = 0;
  bool seen_dot = false;
  while (digits < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[digits])) || (text[digits] == '.' && !seen_dot))) {
    seen_dot |= text[digits] == '.';
    ++digits;
  }
  if (digits == 0 || (digits == 1 && seen_dot)) return std::nullopt;
  std::string_view unit = text.substr(digits);
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  return NumberAndUnit{std::string(text.substr(0, digits)), seen_dot, unit};
}

}  // namespace gpumemtrace
