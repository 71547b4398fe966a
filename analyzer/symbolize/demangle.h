#pragma once

#include <string>

namespace gpumemtrace::symbolize {

// The readable form of a C++ mangled name ("_Z3fooi" -> "foo(int)"); any other name as it is.
std::string demangle(const char* name);

}  // namespace gpumemtrace::symbolize
