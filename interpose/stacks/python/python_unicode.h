// Reading a str object's text without the GIL and without CPython's help: PyUnicode_AsUTF8 may allocate
// and cache, so the walker reads the object's own storage and encodes UTF-8 itself.
#pragma once

#include <string>

#include "interpose/stacks/python/python_layout.h"

namespace gpumemtrace::interpose::python {

// Appends the UTF-8 form of `str` to `out`. Only compact strings are read (code objects' names and file
// names always are: they are made by PyUnicode_New or interned): compact ASCII data follows the
// PyASCIIObject, other compact data (1, 2 or 4 bytes per code point) the PyCompactUnicodeObject.
// Returns false, appending nothing, when `str` is null, not of type `unicode_type` (when that is given),
// not compact, not ready (3.10/3.11) or of an unknown kind. Surrogates U+DC80..U+DCFF (the
// surrogateescape form of undecodable file name bytes) become those bytes again, other lone surrogates
// U+FFFD. At most kMaxCodePoints are read.
bool append_utf8(const PythonLayout& layout, const void* str, const void* unicode_type, std::string* out);

inline constexpr size_t kMaxCodePoints = 1 << 16;

}  // namespace gpumemtrace::interpose::python
