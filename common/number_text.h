// A number with a unit as people write it ("1.5 GiB", "200ms", "4096"): split into the two.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpumemtrace {

struct NumberAndUnit {
  std::string number;     // digits with at most one '.'
  bool fractional = false;  // has a '.'
  std::string_view unit;  // what follows, spaces between left out; may be empty
};

// Surrounding spaces are ignored; nullopt when the text does not start with a number.
std::optional<NumberAndUnit> split_number_and_unit(std::string_view text);

}  // namespace gpumemtrace
