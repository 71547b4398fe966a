#include "analyzer/cli/output_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "analyzer/cli/standard_output.h"

namespace gpumemtrace::cli {

namespace {

[[noreturn]] void fail(const std::string& path) {
  throw OutputError("cannot write " + path + ": " + std::strerror(errno));
}

}  // namespace

std::string path_beside(const std::string& path, std::string_view suffix) {
  size_t slash = path.rfind('/');
  size_t dot = path.rfind('.');
  bool has_extension = dot != std::string::npos && dot > (slash == std::string::npos ? 0 : slash + 1);
  return (has_extension ? path.substr(0, dot) : path) + std::string(suffix);
}

OutputFile::OutputFile(std::string path) : OutputFile(std::move(path), std::make_shared<std::vector<std::string>>()) {}

OutputFile::OutputFile(std::string path, Created created) : path_(std::move(path)), created_(std::move(created)) {
  file_ = std::fopen(path_.c_str(), "wb");
  if (!file_) fail(path_);
  created_->push_back(path_);
}

OutputFile::~OutputFile() {
  if (file_) std::fclose(file_);
}

void OutputFile::write(std::string_view bytes) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) fail(path_);
}

std::unique_ptr<render::ExportSink> OutputFile::beside(std::string_view suffix) {
  return std::unique_ptr<OutputFile>(new OutputFile(path_beside(path_, suffix), created_));
}

void OutputFile::close() {
  std::FILE* file = file_;
  file_ = nullptr;
  if (file && std::fclose(file) != 0) fail(path_);
}

void OutputFile::discard() {
  if (file_) std::fclose(file_);
  file_ = nullptr;
  for (const std::string& path : *created_) {
    struct stat status{};
    // Never /dev/null or a pipe: only what the export wrote into.
    if (::stat(path.c_str(), &status) == 0 && S_ISREG(status.st_mode)) std::remove(path.c_str());
  }
}

}  // namespace gpumemtrace::cli
