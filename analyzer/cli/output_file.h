// An export's output file (-o) and the files beside it, where a failed open, write or close is a system
// error (OutputError: exit status 3). discard() removes every file the export created.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/export/export_sink.h"

namespace gpumemtrace::cli {

class OutputFile : public render::ExportSink {
 public:
  // Creates (or truncates) the file; throws OutputError when it cannot.
  explicit OutputFile(std::string path);
  ~OutputFile() override;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(std::string_view bytes) override;
  std::unique_ptr<render::ExportSink> beside(std::string_view suffix) override;
  void close() override;
  // Closes this file and removes it and every file created beside it.
  void discard();

 private:
  using Created = std::shared_ptr<std::vector<std::string>>;
  OutputFile(std::string path, Created created);

  std::string path_;
  std::FILE* file_ = nullptr;
  Created created_;  // the paths of this file and of those beside it
};

// "t.csv" with ".stacks.csv" -> "t.stacks.csv"; "dir.x/t" -> "dir.x/t.stacks.csv".
std::string path_beside(const std::string& path, std::string_view suffix);

}  // namespace gpumemtrace::cli
