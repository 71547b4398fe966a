#include "analyzer/cli/standard_output.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "analyzer/cli/output_file.h"

namespace gpumemtrace::cli {

namespace {

[[noreturn]] void fail() { throw OutputError(std::string("cannot write the output: ") + std::strerror(errno)); }

}  // namespace

void write_stdout(std::string_view bytes) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size()) fail();
}

void flush_stdout() {
  if (std::fflush(stdout) != 0) fail();
}

void write_output_file(const std::string& path, std::string_view bytes) {
  if (path == "-") {
    write_stdout(bytes);
    flush_stdout();
    return;
  }
  OutputFile file(path);
  file.write(bytes);
  file.close();
}

void BufferedStdout::write() {
  write_stdout(std::string_view(buffer_.data(), buffer_.size()));
  buffer_.clear();
}

void BufferedStdout::flush() {
  write();
  flush_stdout();
}

}  // namespace gpumemtrace::cli
