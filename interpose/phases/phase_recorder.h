// Phase records (docs/trace-format.md, "Phases") from any source: NVTX ranges (nvtx_tool.cpp) and, later,
// annotate.h. Names and domains are interned per trace: each is written once, before its first use.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpumemtrace::interpose::phases {

// A phase domain (an NVTX domain). The default domain has id 0 and is never written.
struct Domain {
  uint64_t id = 0;
  std::string name;
};
// A new domain, never freed (handles given to the program stay valid).
const Domain* create_domain(std::string_view name);

// The calling thread enters / leaves a nested phase. `domain` may be null: the default domain.
// Makes the phase recorder's state at load time, for the reason of cupti::prepare().
void prepare();
void push(const Domain* domain, std::string_view name);
void pop(const Domain* domain);
// A process-wide phase; returns its id (never 0), which end() takes on any thread.
uint64_t start(const Domain* domain, std::string_view name);
void end(uint64_t id);

}  // namespace gpumemtrace::interpose::phases
