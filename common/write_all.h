// A whole buffer written to a file descriptor: write() again after a signal interrupts it or after it
// writes only part.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace gpumemtrace {

// Throws std::system_error with `what` ("writing the unpacked trace", "cannot write out.trace").
void write_all(int fd, std::span<const uint8_t> bytes, const std::string& what);

}  // namespace gpumemtrace
