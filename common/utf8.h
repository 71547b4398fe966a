// UTF-8 as the outputs need it: names and paths in a trace are bytes (a file name can hold any), but JSON,
// XML, pickles, pprof's protobuf strings and CSV for spreadsheets must be UTF-8. Every writer of those
// replaces what is not valid UTF-8 the same way: each byte that starts no valid sequence becomes U+FFFD.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gpumemtrace {

// The length of the valid UTF-8 sequence at text[i] (1 for ASCII), or 0 when none starts there (a stray
// continuation byte, an overlong form, a surrogate, beyond U+10FFFF, cut short).
size_t utf8_sequence_length(std::string_view text, size_t i);

bool is_valid_utf8(std::string_view text);

// The text with each byte that starts no valid sequence replaced by U+FFFD ("\xEF\xBF\xBD").
std::string valid_utf8(std::string_view text);

}  // namespace gpumemtrace
