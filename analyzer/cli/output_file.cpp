#include "analyzer/cli/output_file.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "analyzer/cli/standard_output.h"

namespace gpumemtrace::cli {

namespace {

[[noreturn]] void fail(const std::string& path, int error = errno) {
  throw OutputError("cannot write " + path + ": " + std::strerror(error));
}

// Keeps nothing: the files beside an output that is not a regular file.
class NoFile : public render::ExportSink {
 public:
  void write(std::string_view) override {}
  std::unique_ptr<render::ExportSink> beside(std::string_view) override { return std::make_unique<NoFile>(); }
  void close() override {}
};

mode_t umask_now() {
  mode_t mask = umask(0);
  umask(mask);
  return mask;
}

}  // namespace

std::string path_beside(const std::string& path, std::string_view suffix) {
  size_t slash = path.rfind('/');
  size_t dot = path.rfind('.');
  bool has_extension = dot != std::string::npos && dot > (slash == std::string::npos ? 0 : slash + 1);
  return (has_extension ? path.substr(0, dot) : path) + std::string(suffix);
}

OutputFile::OutputFile(std::string path) : OutputFile(std::move(path), std::make_shared<Created>()) {}

OutputFile::OutputFile(std::string path, std::shared_ptr<Created> created)
    : path_(std::move(path)), created_(std::move(created)) {
  struct stat at {};
  bool exists = ::stat(path_.c_str(), &at) == 0;
  if (exists && S_ISDIR(at.st_mode)) fail(path_, EISDIR);
  if (exists && !S_ISREG(at.st_mode)) {
    file_ = std::fopen(path_.c_str(), "wb");
    if (!file_) fail(path_);
    return;
  }
  size_t slash = path_.rfind('/');
  std::string directory = slash == std::string::npos ? "" : path_.substr(0, slash + 1);
  temporary_ = directory + "." + path_.substr(directory.size()) + ".XXXXXX";
  int fd = mkostemp(temporary_.data(), O_CLOEXEC);  // O_EXCL, 0600: nothing at that name is followed
  if (fd < 0) fail(path_);
  created_->temporary.push_back(temporary_);
  fchmod(fd, 0666 & ~umask_now());
  file_ = fdopen(fd, "wb");
  if (!file_) {
    int error = errno;
    ::close(fd);
    fail(path_, error);
  }
}

OutputFile::~OutputFile() {
  if (!file_) return;
  std::fclose(file_);  // never closed: an export that failed
  if (!temporary_.empty()) std::remove(temporary_.c_str());
}

void OutputFile::write(std::string_view bytes) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) fail(path_);
}

std::unique_ptr<render::ExportSink> OutputFile::beside(std::string_view suffix) {
  if (temporary_.empty()) return std::make_unique<NoFile>();
  return std::unique_ptr<OutputFile>(new OutputFile(path_beside(path_, suffix), created_));
}

void OutputFile::close() {
  std::FILE* file = std::exchange(file_, nullptr);
  if (!file) return;
  bool closed = std::fclose(file) == 0;
  if (temporary_.empty() && closed) return;
  if (!closed || std::rename(temporary_.c_str(), path_.c_str()) != 0) {
    int error = errno;
    if (!temporary_.empty()) std::remove(temporary_.c_str());
    fail(path_, error);
  }
  std::erase(created_->temporary, temporary_);
  created_->placed.push_back(path_);
}

void OutputFile::discard() {
  if (file_) std::fclose(file_);
  file_ = nullptr;
  for (const std::string& path : created_->temporary) std::remove(path.c_str());
  for (const std::string& path : created_->placed) std::remove(path.c_str());
  created_->temporary.clear();
  created_->placed.clear();
}

}  // namespace gpumemtrace::cli
