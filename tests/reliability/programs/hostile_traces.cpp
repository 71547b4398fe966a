// Writes crafted traces of about 100 KB, each a shape that once made the analyzer's work grow with the
// square of the trace (docs/reliability.md, "Hostile inputs and files"): hostile_traces OUTDIR [DIVISOR]
// writes OUTDIR/SHAPE.trace for every shape and prints the shapes' names and sizes; with DIVISOR, every
// count divided by it (the fuzz corpus's seeds: tests/fuzz/corpus/fuzz_trace_reader/hand-hostile-*). The
// reliability test runs every command on them; bench/hostile_inputs.sh times them.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "tests/support/trace_builder.h"

namespace gpumemtrace::test {
namespace {

using Api = format::Api;

uint64_t g_divisor = 1;
uint64_t n(uint64_t count) { return count / g_divisor; }

TraceBuilder started(uint64_t max_stack_depth) {
  TraceBuilder b;
  b.process(4242, 1, 0, max_stack_depth, -1, "host", "/crafted", {"crafted"});
  b.thread_new(1, 4242, "main");
  return b;
}

// One chain of calls 7,000 deep, an allocation at every depth: 7,000 distinct stacks that share their
// callers. The trace records no stack depth limit (as a PyTorch snapshot's does not).
TraceBuilder deep_stack() {
  TraceBuilder b = started(0);
  for (uint64_t depth = 1; depth <= n(7000); ++depth) {
    b.stack_node(depth - 1, 0x400000 + depth * 16);
    b.alloc(Api::cudaMalloc, 0, 0x7f0000000000 + depth * 0x1000, 512, depth, 1);
  }
  return b.end(n(7000), 1);
}

// One phase pushed 20,000 times, nested, with an allocation in each: a loop whose pop never comes.
TraceBuilder deep_phases() {
  TraceBuilder b = started(64);
  b.stack_node(0, 0x401000).record(trace::PhaseName{0, 0, "layer"});
  for (uint64_t i = 0; i < n(20000); ++i) {
    b.event(trace::PhasePush{{}, 0}, 1);
    b.alloc(Api::cudaMalloc, 0, 0x7f0000000000 + i * 0x1000, 256, 1, 1);
  }
  return b.end(2 * n(20000), 1);
}

// A training loop whose pop a `continue` skips every other iteration: 12,000 pushes, 6,000 pops.
TraceBuilder skipped_pops() {
  TraceBuilder b = started(64);
  b.stack_node(0, 0x401000).record(trace::PhaseName{0, 0, "train_step"});
  for (uint64_t i = 0; i < n(12000); ++i) {
    b.event(trace::PhasePush{{}, 0}, 1);
    b.alloc(Api::cudaMalloc, 0, 0x7f0000000000 + i * 0x1000, 1024, 1, 1);
    if (i % 2) b.event(trace::PhasePop{{}, 0}, 1);
  }
  return b.end(n(30000), 1);
}

// 10,000 phases of one domain under 10,000 of another, then the outer domain's pops: each pop leaves a
// phase below every open phase of the other domain.
TraceBuilder crossed_domains() {
  TraceBuilder b = started(64);
  b.record(trace::PhaseDomain{1, "outer"}).record(trace::PhaseName{0, 1, "a"}).record(trace::PhaseName{1, 0, "b"});
  for (uint64_t i = 0; i < n(10000); ++i) b.event(trace::PhasePush{{}, 0}, 1);
  for (uint64_t i = 0; i < n(10000); ++i) b.event(trace::PhasePush{{}, 1}, 1);
  for (uint64_t i = 0; i < n(10000); ++i) b.event(trace::PhasePop{{}, 1}, 1);
  return b.end(n(30000), 1);
}

// 8,000 open phases, then 40,000 pops of a domain that has none open.
TraceBuilder unmatched_pops() {
  TraceBuilder b = started(64);
  b.record(trace::PhaseName{0, 0, "open"});
  for (uint64_t i = 0; i < n(8000); ++i) b.event(trace::PhasePush{{}, 0}, 1);
  for (uint64_t i = 0; i < n(40000); ++i) b.event(trace::PhasePop{{}, 7}, 0);
  return b.end(n(48000), 1);
}

// 12,000 memory pools, each created and reporting its usage.
TraceBuilder many_pools() {
  TraceBuilder b = started(64);
  for (uint64_t i = 1; i <= n(12000); ++i) {
    b.pool(format::Token::PoolCreate, 0x5000 + i, 0, 1);
    b.pool_usage(0x5000 + i, 0, 2 << 20, 0, 1);
  }
  return b.end(n(24000), 1);
}

struct Shape {
  const char* name;
  TraceBuilder (*build)();
};
constexpr Shape kShapes[] = {{"deep-stack", deep_stack},         {"deep-phases", deep_phases},
                             {"skipped-pops", skipped_pops},     {"crossed-domains", crossed_domains},
                             {"unmatched-pops", unmatched_pops}, {"many-pools", many_pools}};

}  // namespace
}  // namespace gpumemtrace::test

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3 || (argc == 3 && std::atoi(argv[2]) < 1)) {
    std::fprintf(stderr, "usage: hostile_traces OUTDIR [DIVISOR]\n");
    return 2;
  }
  if (argc == 3) gpumemtrace::test::g_divisor = static_cast<uint64_t>(std::atoi(argv[2]));
  for (const auto& shape : gpumemtrace::test::kShapes) {
    std::string path = std::string(argv[1]) + "/" + shape.name + ".trace";
    gpumemtrace::test::TraceBuilder built = shape.build();
    const std::vector<uint8_t>& bytes = built.bytes();
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::fprintf(stderr, "hostile_traces: cannot write %s\n", path.c_str());
      return 3;
    }
    std::printf("%s %zu\n", shape.name, bytes.size());
  }
  return 0;
}
