#include "analyzer/symbolize/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace gpumemtrace::symbolize {

std::string demangle(const char* name) {
  if (!name) return {};
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> readable(abi::__cxa_demangle(name, nullptr, nullptr, &status),
                                                        &std::free);
  return status == 0 && readable ? std::string(readable.get()) : std::string(name);
}

}  // namespace gpumemtrace::symbolize
