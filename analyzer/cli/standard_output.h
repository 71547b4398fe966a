// Writing to stdout, where a failed write is an error: `gpumemtrace summary t > /dev/full` must not look
// like a success. main turns OutputError into exit status 3.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace gpumemtrace::cli {

class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Writes the bytes to stdout; throws OutputError when they cannot be written.
void write_stdout(std::string_view bytes);
// Flushes stdout; throws OutputError when it cannot.
void flush_stdout();
// Writes the bytes to the file (as OutputFile does), or to stdout for "-"; throws OutputError when they cannot
// be written.
void write_output_file(const std::string& path, std::string_view bytes);

// Collects output and writes it to stdout in large blocks: a dump can have hundreds of millions of lines.
class BufferedStdout {
 public:
  fmt::memory_buffer& buffer() { return buffer_; }
  void flush_if_full() {
    if (buffer_.size() >= (size_t{1} << 20)) write();
  }
  // Writes what is buffered and flushes stdout.
  void flush();

 private:
  void write();

  fmt::memory_buffer buffer_;
};

}  // namespace gpumemtrace::cli
