#include "common/output_pattern.h"

#include <unistd.h>

#include <cstdlib>

namespace gpumemtrace {

namespace {

// The host name as one path component.
std::string host_name_in_path() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::string name = host;
  for (char& c : name)
    if (c == '/') c = '_';
  if (name.find_first_not_of('.') == std::string::npos) name = "_";
  return name;
}

}  // namespace

int current_rank() {
  for (const char* name : {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    const char* value = std::getenv(name);
    if (value && *value) return static_cast<int>(std::strtol(value, nullptr, 10));
  }
  return -1;
}

int current_local_rank() {
  for (const char* name : {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    const char* value = std::getenv(name);
    if (value && *value) return static_cast<int>(std::strtol(value, nullptr, 10));
  }
  return -1;
}

std::string expand_output_pattern(const std::string& pattern, long pid) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    char code = pattern[++i];
    if (code == 'p') {
      out += std::to_string(pid);
    } else if (code == 'h') {
      out += host_name_in_path();
    } else if (code == 'r') {
      int rank = current_rank();
      out += rank < 0 ? std::string("0") : std::to_string(rank);
    } else if (code == '%') {
      out += '%';
    } else {
      out += '%';
      out += code;
    }
  }
  return out;
}

std::vector<std::string> trace_path_choices(const std::string& path, long pid) {
  std::vector<std::string> choices{path, path + "." + std::to_string(pid)};
  for (int n = 2; n <= kTraceNameChoices; ++n) choices.push_back(choices[1] + "." + std::to_string(n));
  return choices;
}

}  // namespace gpumemtrace
