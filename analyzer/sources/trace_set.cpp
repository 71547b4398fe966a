#include "analyzer/sources/trace_set.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "analyzer/pytorch/pickle_reader.h"
#include "gpumemtrace/trace_format.h"

namespace gpumemtrace::sources {

namespace fs = std::filesystem;

bool looks_like_trace(const std::string& path) {
  char start[sizeof format::kMagic] = {};
  std::ifstream in(path, std::ios::binary);
  in.read(start, sizeof start);
  if (in.gcount() >= 2 && pytorch::looks_like_pickle(std::span(reinterpret_cast<const uint8_t*>(start), 2))) return true;
  return in && std::memcmp(start, format::kMagic, sizeof start) == 0;
}

std::vector<std::string> trace_paths(const std::string& path) {
  std::error_code error;
  fs::file_status status = fs::status(path, error);
  if (error || !fs::exists(status))
    throw TraceSetError(error && error != std::errc::no_such_file_or_directory ? error.message()
                                                                                : "no such file or directory");
  if (!fs::is_directory(status)) return {path};
  std::vector<std::string> paths;
  fs::directory_iterator entries(path, error);
  if (error) throw TraceSetError(error.message());
  for (const fs::directory_entry& entry : entries) {
    std::error_code ignored;
    if (entry.is_regular_file(ignored) && looks_like_trace(entry.path().string())) paths.push_back(entry.path().string());
  }
  if (paths.empty()) throw TraceSetError("no gpumemtrace trace in this directory");
  std::sort(paths.begin(), paths.end());
  // The PyTorch snapshots a trace's hook wrote beside it (TRACE.torch-*.pickle) are read with that trace.
  const std::vector<std::string> all = paths;
  std::erase_if(paths, [&](const std::string& candidate) {
    size_t mark = candidate.rfind(".torch-");
    return candidate.ends_with(".pickle") && mark != std::string::npos &&
           std::binary_search(all.begin(), all.end(), candidate.substr(0, mark));
  });
  return paths;
}

}  // namespace gpumemtrace::sources
