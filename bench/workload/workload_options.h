// Command line of the benchmark workloads:
//   --shape loop|loop-sizes|mixed, --pairs N, --depth D, --threads T, --seed S (counts as in count_arg.h).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>

#include "bench/count_arg.h"

namespace gpumemtrace::bench {

struct WorkloadOptions {
  std::string_view shape = "loop";  // "loop", "loop-sizes" or "mixed" (workload_shape.h)
  uint64_t pairs = 1'000'000;
  unsigned depth = 20;
  unsigned threads = 1;
  uint64_t seed = 1;
};

// Exits with a usage message on anything it does not understand.
inline WorkloadOptions parse_workload_options(int argc, char** argv) {
  WorkloadOptions options;
  auto usage = [&] {
    std::fprintf(stderr, "usage: %s [--shape loop|loop-sizes|mixed] [--pairs N] [--depth D] [--threads T] [--seed S]\n",
                 argv[0]);
    std::exit(2);
  };
  for (int i = 1; i < argc; ++i) {
    std::string_view flag = argv[i];
    if (i + 1 >= argc) usage();
    const char* value = argv[++i];
    uint64_t number = 0;
    if (flag != "--shape") {
      std::optional<uint64_t> count = parse_count(value);
      if (!count) usage();
      number = *count;
    }
    if (flag == "--shape") {
      options.shape = value;
      if (options.shape != "loop" && options.shape != "loop-sizes" && options.shape != "mixed") usage();
    } else if (flag == "--pairs") {
      options.pairs = number;
    } else if (flag == "--depth" && number >= 1 && number <= 1000) {
      options.depth = static_cast<unsigned>(number);
    } else if (flag == "--threads" && number >= 1 && number <= 256) {
      options.threads = static_cast<unsigned>(number);
    } else if (flag == "--seed") {
      options.seed = number;
    } else {
      usage();
    }
  }
  return options;
}

}  // namespace gpumemtrace::bench
