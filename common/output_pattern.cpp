#include "common/output_pattern.h"

#include <unistd.h>

#include <cstdlib>

namespace gpumemtrace {

int current_rank() {
  for (const char* name : {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"}) {
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
      char host[256] = {};
      gethostname(host, sizeof host - 1);
      out += host;
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

}  // namespace gpumemtrace
