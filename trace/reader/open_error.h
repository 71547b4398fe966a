// Why a trace cannot be read at all: unreadable, not a trace, or a format version this build cannot read.
#pragma once

#include <stdexcept>
#include <string>

namespace gpumemtrace::trace {

class OpenError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace gpumemtrace::trace
