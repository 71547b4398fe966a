// Where an export writes: its output file, and files beside it (the stack table of a CSV export).
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace gpumemtrace::render {

class ExportSink {
 public:
  virtual ~ExportSink() = default;
  // Throws when the bytes cannot be written.
  virtual void write(std::string_view bytes) = 0;
  // A file beside the output: its name with `suffix` in place of its extension ("t.csv" -> "t.stacks.csv").
  virtual std::unique_ptr<ExportSink> beside(std::string_view suffix) = 0;
  // Writes out what is buffered and closes the file; throws when it cannot.
  virtual void close() = 0;
};

}  // namespace gpumemtrace::render
