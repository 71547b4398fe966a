// Stand-ins for CPython's type objects in the frame walker's tests: the walker only compares an object's
// type pointer with the ones it looked up, so any distinct addresses serve.
#pragma once

namespace gpumemtrace::interpose::python {

inline char g_code_type, g_str_type, g_other_type;

}  // namespace gpumemtrace::interpose::python
