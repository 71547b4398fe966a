// Writes a synthetic trace of exactly N events through the tracer's own TraceWriter, for the analyzer
// benchmark: the mixed shape of bench/workload/workload_shape.h (16 call sites × 16 stack depths, random
// sizes, 4096 slots freed at random), so the live set stays about 4096 allocations whatever N is.
// Usage: bench_trace_generator OUTPUT EVENTS
#include <link.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "bench/count_arg.h"
#include "bench/workload/workload_shape.h"
#include "trace/writer/trace_writer.h"

namespace trace = gpumemtrace::trace;
using gpumemtrace::format::Api;
using gpumemtrace::bench::parse_count;
using gpumemtrace::trace::ModuleInfo;
using gpumemtrace::writer::ProcessInfo;
using gpumemtrace::writer::TraceWriter;

namespace {

using gpumemtrace::bench::MixedStep;

constexpr unsigned kLowestDepth = 12;
constexpr uint64_t kSlotSpan = 64 * 1024;  // the largest size: slots never overlap

// This program's own image: the stacks point into it, so a symbolizer has a real file to read.
ModuleInfo own_module() {
  ModuleInfo module;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        auto* out = static_cast<ModuleInfo*>(data);
        out->base = info->dlpi_addr;
        out->low = UINT64_MAX;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          if (info->dlpi_phdr[i].p_type != PT_LOAD) continue;
          uint64_t low = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
          if (low < out->low) out->low = low;
          if (low + info->dlpi_phdr[i].p_memsz > out->high) out->high = low + info->dlpi_phdr[i].p_memsz;
        }
        return 1;  // the executable comes first
      },
      &module);
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) module.path.assign(exe, static_cast<size_t>(n));
  return module;
}

// Writes the trie of 16 sites × 16 depths: a shared chain of `descend` frames, a leaf per site and depth.
// Returns the stack id of each (depth, site), at depth_offset * kSites + site.
std::vector<uint64_t> write_stacks(TraceWriter& writer, const ModuleInfo& module) {
  uint64_t text = module.low + 0x1000;
  uint64_t next_id = 0;
  uint64_t parent = 0;
  std::vector<uint64_t> chain;  // chain[d] = node id after d + 1 frames
  for (unsigned d = 0; d < kLowestDepth + MixedStep::kDepths; ++d) {
    writer.write(trace::StackNode{0, static_cast<uint32_t>(parent), text + (d == 0 ? 0 : 0x40)});
    parent = ++next_id;
    chain.push_back(parent);
  }
  std::vector<uint64_t> stacks;
  for (unsigned d = 0; d < MixedStep::kDepths; ++d) {
    for (unsigned s = 0; s < MixedStep::kSites; ++s) {
      writer.write(trace::StackNode{0, static_cast<uint32_t>(chain[kLowestDepth + d - 1]), text + 0x100 + 0x20 * s});
      stacks.push_back(++next_id);
    }
  }
  return stacks;
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<uint64_t> events_arg = argc == 3 ? parse_count(argv[2]) : std::nullopt;
  if (!events_arg) {
    std::fprintf(stderr, "usage: %s OUTPUT EVENTS (a count; K and M suffixes: 10M = 10,000,000)\n", argv[0]);
    return 2;
  }
  uint64_t events = *events_arg;
  TraceWriter writer;
  ProcessInfo process;
  process.pid = static_cast<uint64_t>(getpid());
  process.max_stack_depth = 64;
  process.executable = "bench_trace_generator";
  process.argv = {argv[0], argv[1], argv[2]};
  if (!writer.open(argv[1], process)) {
    std::fprintf(stderr, "bench_trace_generator: %s\n", writer.error().c_str());
    return 1;
  }
  ModuleInfo module = own_module();
  writer.write(trace::ModulesBegin{1});
  writer.write(module.record());
  writer.write(trace::ThreadNew{1, static_cast<uint64_t>(getpid()), "main"});
  std::vector<uint64_t> stacks = write_stacks(writer, module);

  const uint64_t base = 0x7f0000000000ull;
  std::vector<bool> live(MixedStep::kSlots, false);
  gpumemtrace::bench::Random random(1);
  uint64_t written = 0;
  trace::Alloc allocation;
  allocation.api = Api::cudaMalloc;
  allocation.device = 0;
  trace::Free release;
  release.api = Api::cudaFree;
  while (written < events) {
    MixedStep step(random.next());
    uint64_t address = base + step.slot * kSlotSpan;
    if (live[step.slot]) {
      release.address = address;
      writer.write(release);
      live[step.slot] = false;
      if (++written == events) break;
    }
    uint64_t stack = stacks[step.depth_offset * MixedStep::kSites + step.site];
    allocation.address = address;
    allocation.size = step.size;
    allocation.stack = static_cast<uint32_t>(stack);
    writer.write(allocation);
    live[step.slot] = true;
    ++written;
  }
  if (writer.failed()) {
    std::fprintf(stderr, "bench_trace_generator: %s\n", writer.error().c_str());
    return 1;
  }
  writer.end();
  return 0;
}
