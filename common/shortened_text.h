// Text from a trace cut to a length a report can show: names a program chose can be any length.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gpumemtrace {

// `text` when it has at most max_bytes bytes; else its start and its end with "…" between them, max_bytes
// in all, cut at UTF-8 character boundaries.
std::string shortened_text(std::string_view text, size_t max_bytes);

}  // namespace gpumemtrace
