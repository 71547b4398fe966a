// A whole trace decoded into plain lists, for tests that assert exactly what a program did.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/reader/reader.h"

namespace gpumemtrace::test {

struct TraceFacts {
  trace::Status status = trace::Status::Reading;
  std::string error;
  uint64_t pid = 0;
  std::vector<trace::Alloc> allocs;
  std::vector<trace::Free> frees;
  std::vector<trace::AllocFailed> failures;
  std::vector<trace::FreeFailed> free_failures;
  std::vector<trace::MemMap> maps;
  std::vector<trace::MemUnmap> unmaps;
  std::vector<trace::AddressReserve> reserves;
  std::vector<trace::AddressFree> address_frees;
  std::vector<trace::MemInfo> mem_infos;
  std::vector<trace::PoolTrim> trims;
  std::vector<trace::PoolUsage> pool_usages;
  std::vector<std::vector<uint64_t>> alloc_stacks;    // per alloc: instruction addresses, innermost first
  std::vector<std::vector<uint64_t>> failure_stacks;  // per failure
  struct Module {  // owns its strings: the reader's views die with it
    uint64_t low = 0, high = 0;
    std::string path, build_id;
  };
  std::vector<Module> modules;  // the last module set
  uint64_t threads = 0;

  bool complete() const { return status == trace::Status::Complete; }
};

TraceFacts read_trace(const std::string& path);

}  // namespace gpumemtrace::test
