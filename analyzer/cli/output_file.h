// An export's output file (-o) and the files beside it, where a failed open, write or close is a system
// error (OutputError: exit status 3).
//
// A regular file (or a new one) is written under a temporary name in its directory and moved over the path
// by close(): until then what was at the path stays as it was, so an export that fails (an unreadable
// input) leaves it untouched, and a symbolic link planted at the path is replaced, never followed. The new
// file's mode is 0666 less the umask. A path that is not a regular file (/dev/null, a pipe, /dev/stdout) is
// written directly and gets no files beside it.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/export/export_sink.h"

namespace gpumemtrace::cli {

class OutputFile : public render::ExportSink {
 public:
  // Throws OutputError when the file cannot be created.
  explicit OutputFile(std::string path);
  ~OutputFile() override;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(std::string_view bytes) override;
  // A file beside this one; for an output that is not a regular file, a sink that keeps nothing.
  std::unique_ptr<render::ExportSink> beside(std::string_view suffix) override;
  // Writes the file out and puts it at its path.
  void close() override;
  // Drops this file and every file created beside it: what was at their paths stays.
  void discard();

 private:
  // What an export created: files put at their paths, and temporary files not yet moved.
  struct Created {
    std::vector<std::string> placed;
    std::vector<std::string> temporary;
  };
  OutputFile(std::string path, std::shared_ptr<Created> created);

  std::string path_;
  std::string temporary_;  // empty: written at path_ directly (not a regular file)
  std::FILE* file_ = nullptr;
  std::shared_ptr<Created> created_;
};

// "t.csv" with ".stacks.csv" -> "t.stacks.csv"; "dir.x/t" -> "dir.x/t.stacks.csv".
std::string path_beside(const std::string& path, std::string_view suffix);

}  // namespace gpumemtrace::cli
