// Heaps and sub-allocations recorded from annotate.h (C), the NVTX memory extension and the Python module
// under the tracer on the simulated device: the exact records, each block with its own stack, the analyzer's
// figures and verdict at an out-of-memory failure, and nothing changed without the tracer.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <deque>
#include <string>
#include <variant>
#include <vector>

#include "tests/support/source_lines.h"
#include "tests/support/traced_run.h"
#include "trace/reader/reader.h"

namespace gpumemtrace::test {
namespace {

using HeapRecord =
    std::variant<trace::HeapCreate, trace::HeapDestroy, trace::HeapReset, trace::SubAlloc, trace::SubFree, trace::SubName>;

struct HeapTrace {
  uint64_t segment = 0;  // the address of the first cudaMalloc
  std::vector<HeapRecord> records;  // times, threads and stacks cleared
  std::vector<uint32_t> suballoc_stacks;
  std::deque<std::string> names;  // kept: the names of HeapCreate and SubName point into the reader
};

HeapTrace read_heaps(const std::string& path) {
  HeapTrace out;
  trace::Reader reader(path);
  while (const trace::Record* record = reader.next()) {
    std::visit(
        [&](auto r) {
          using R = decltype(r);
          if constexpr (std::is_same_v<R, trace::Alloc>) {
            if (out.segment == 0) out.segment = r.address;
          } else if constexpr (std::is_constructible_v<HeapRecord, R>) {
            r.time_ns = 0;
            r.thread = 0;
            if constexpr (std::is_same_v<R, trace::SubAlloc>) {
              out.suballoc_stacks.push_back(r.stack);
              r.stack = 0;
            }
            if constexpr (std::is_same_v<R, trace::HeapCreate> || std::is_same_v<R, trace::SubName>)
              r.name = out.names.emplace_back(r.name);
            out.records.push_back(r);
          }
        },
        *record);
  }
  EXPECT_EQ(reader.status(), trace::Status::Complete) << reader.error();
  return out;
}

// The heap records of a traced run that printed `out`.
HeapTrace heaps_of(const TracedRun& run, const std::string& out) {
  EXPECT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(run.result.out, out);
  HeapTrace t = read_heaps(run.trace);
  EXPECT_NE(t.segment, 0u);
  return t;
}

// The program's output and exit are the same without the tracer.
void expect_unchanged(const std::string& program) {
  ProcessResult traced = run_traced(program).result;
  ProcessResult plain = run_process({bin_dir() + "/" + program}, sim_env());
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out, traced.out);
  EXPECT_EQ(plain.err, "");
}

TEST(Heaps, FromC) {
  HeapTrace t = heaps_of(run_traced("capture_prog_annotate_heaps"), "blocks 0 4096 1024 reused 1 0\n");
  uint64_t s = t.segment;
  std::vector<HeapRecord> expected = {
      trace::HeapCreate{{}, 1, 0, s, 2 << 20, "small"},
      trace::SubAlloc{{}, 1, s, 1000, 1024, 0},
      trace::SubName{{}, 1, s, "weights"},
      trace::SubAlloc{{}, 1, s + 1024, 3000, 3072, 0},
      trace::SubAlloc{{}, 1, s + 4096, 512, 512, 0},
      trace::SubFree{{}, 1, s + 1024},
      trace::SubAlloc{{}, 1, s + 1024, 2600, 3072, 0},
      trace::HeapReset{{}, 1},
      trace::SubAlloc{{}, 1, s, 100, 512, 0},
      trace::SubFree{{}, 1, s},
      trace::HeapDestroy{{}, 1},
      trace::SubAlloc{{}, 0, s, 64, 0, 0},
      trace::SubFree{{}, 0, s},
  };
  EXPECT_EQ(t.records, expected);
  ASSERT_EQ(t.suballoc_stacks.size(), 6u);
  for (uint32_t stack : t.suballoc_stacks) EXPECT_NE(stack, 0u);
  // Two call sites of gmt_suballoc in cache_alloc, and one in main: not all the same stack.
  EXPECT_NE(t.suballoc_stacks[0], t.suballoc_stacks[5]);
}

// `gpumemtrace NAME --json` on a trace.
nlohmann::json report_of(const std::string& name, const std::string& trace) {
  ProcessResult r = run_gpumemtrace({name, "--json", trace});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

// The analyzer on a traced program that asked a 4 MiB device for 3 MiB while its 2 MiB heap had free gaps
// `free` in all, `largest` the largest: the verdict, and the fragmentation report's figures.
nlohmann::json expect_fragmentation_oom(const std::string& program, const std::string& out, uint64_t free,
                                        uint64_t largest) {
  TracedRun run = run_traced(program, {"oom"}, {{"GPUMEMTRACE_SIM_MEMORY", "4MiB"}});
  heaps_of(run, out);
  nlohmann::json oom = report_of("oom", run.trace)["ooms"].at(0);
  EXPECT_EQ(oom["requested_bytes"], 3 << 20);
  EXPECT_EQ(oom["verdict"], "fragmentation") << oom["finding"];
  nlohmann::json device = report_of("fragmentation", run.trace)["devices"].at(0);
  EXPECT_EQ(device["device"], 0);
  nlohmann::json fit = device["failures"].at(0);
  EXPECT_EQ(fit["heap_free_bytes"], free);
  EXPECT_EQ(fit["largest_free_block_bytes"], largest);
  EXPECT_EQ(fit["fits_largest_free_block"], false);
  return device;
}

// At the failure the segment [0, 2 MiB) holds blocks [0, 1024) and [4096, 4608): free gaps 3072 + 2092544.
TEST(Heaps, FromCAnOomThatTheCacheWouldHoldButNoBlockIsFragmentation) {
  nlohmann::json device = expect_fragmentation_oom("capture_prog_annotate_heaps",
                                                   "large 2\nblocks 0 4096 1024 reused 1 0\n", 3072 + 2092544, 2092544);
  // At the end the heap is destroyed; its peak was blocks of 1000, 3000 and 512 bytes.
  nlohmann::json heap = device["heaps"].at(0);
  EXPECT_EQ(heap["name"], "small");
  EXPECT_EQ(heap["destroyed"], true);
  EXPECT_EQ(heap["peak_allocated_bytes"], 4512);
}

// NVTX does not say the heap's device: it is that of the segment the heap starts at. At the failure the
// heap holds [0, 1024): one gap of 2 MiB - 1024.
TEST(Heaps, FromNvtxAnOomThatTheCacheWouldHoldButNoBlockIsFragmentation) {
  nlohmann::json device =
      expect_fragmentation_oom("capture_prog_nvtx_mem", "large 2\ndone\n", (2 << 20) - 1024, (2 << 20) - 1024);
  nlohmann::json heap = device["heaps"].at(0);
  EXPECT_EQ(heap["name"], "small blocks");
  EXPECT_EQ(heap["peak_allocated_bytes"], 1024 + 3072);
}

TEST(Heaps, WithoutTheTracerCNothingChanges) { expect_unchanged("capture_prog_annotate_heaps"); }

// The time of the `nth` record of type R in a trace (from 1).
template <typename R>
uint64_t time_of(const std::string& trace, int nth) {
  trace::Reader reader(trace);
  while (const trace::Record* record = reader.next())
    if (const R* r = std::get_if<R>(record); r && --nth == 0) return r->time_ns;
  ADD_FAILURE() << "no such record";
  return 0;
}

// A live 2 MiB heap's figures, as `fragmentation --json` gives them.
struct HeapFigures {
  uint64_t allocated, blocks, internal, external, largest_free, peak;
};

// `gpumemtrace fragmentation --json --to TIME`: the first heap of device 0 then is live and has `expected`.
void expect_heap_at(const std::string& trace, uint64_t time_ns, const HeapFigures& expected) {
  ProcessResult r = run_gpumemtrace({"fragmentation", "--json", "--to", std::to_string(time_ns), trace});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["at_ns"], time_ns);
  const nlohmann::json& heap = json["devices"].at(0)["heaps"].at(0);
  EXPECT_EQ(heap["destroyed"], false);
  EXPECT_EQ(heap["reserved_bytes"], 2 << 20);
  EXPECT_EQ(heap["allocated_bytes"], expected.allocated);
  EXPECT_EQ(heap["blocks"], expected.blocks);
  EXPECT_EQ(heap["internal_bytes"], expected.internal);
  EXPECT_EQ(heap["external_bytes"], expected.external);
  EXPECT_EQ(heap["largest_free_block_bytes"], expected.largest_free);
  EXPECT_NEAR(heap["fragmentation"].get<double>(), 1.0 - double(expected.largest_free) / double(expected.external),
              1e-4);  // 4 digits in JSON
  EXPECT_EQ(heap["peak_allocated_bytes"], expected.peak);
}

// At the pause after the first free the C allocator's heap holds [0, 1024) (1000 asked) and [4096, 4608)
// (512 asked): the free gaps are [1024, 4096) and [4608, 2 MiB).
TEST(Heaps, FromCTheFiguresAtAChosenMoment) {
  TracedRun run = run_traced("capture_prog_annotate_heaps");
  heaps_of(run, "blocks 0 4096 1024 reused 1 0\n");
  expect_heap_at(run.trace, time_of<trace::SubFree>(run.trace, 1),
                 {.allocated = 1512, .blocks = 2, .internal = 24, .external = 3072 + 2092544, .largest_free = 2092544,
                  .peak = 4512});
}

TEST(Heaps, FromNvtxMemoryExtension) {
  HeapTrace t = heaps_of(run_traced("capture_prog_nvtx_mem"), "done\n");
  uint64_t s = t.segment;
  std::vector<HeapRecord> expected = {
      trace::HeapCreate{{}, 1, trace::kNoDevice, s, 2 << 20, "small blocks"},
      trace::SubAlloc{{}, 1, s, 1024, 0, 0},
      trace::SubAlloc{{}, 1, s + 1024, 3072, 0, 0},
      trace::SubName{{}, 1, s, "weights"},                // by pointer
      trace::SubName{{}, 1, s + 1024, "activations"},     // by handle, a registered string
      trace::SubFree{{}, 1, s + 1024},  // by handle
      trace::SubFree{{}, 1, s},         // the resize
      trace::SubAlloc{{}, 1, s, 512, 0, 0},
      trace::SubAlloc{{}, 1, s + 4096, 512, 0, 0},
      trace::SubFree{{}, 1, s},  // by pointer
      trace::HeapReset{{}, 1},
      trace::SubAlloc{{}, 0, s + 8192, 256, 0, 0},  // a region of no heap
      trace::SubFree{{}, 0, s + 8192},
      trace::HeapDestroy{{}, 1},
  };
  EXPECT_EQ(t.records, expected);
  for (uint32_t stack : t.suballoc_stacks) EXPECT_NE(stack, 0u);
}

// `gpumemtrace dump` shows the name of a region (nvtxMemRegionsName) with its heap and address.
TEST(Heaps, DumpShowsTheNameOfARegion) {
  TracedRun run = run_traced("capture_prog_nvtx_mem");
  HeapTrace t = heaps_of(run, "done\n");
  ProcessResult dump = run_gpumemtrace({"dump", "--json", run.trace});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  char address[32];
  std::snprintf(address, sizeof address, "0x%llx", static_cast<unsigned long long>(t.segment + 1024));
  EXPECT_NE(dump.out.find(std::string("\"record\":\"sub-name\",\"heap\":1,\"address\":\"") + address +
                          "\",\"name\":\"activations\"}"),
            std::string::npos)
      << dump.out;
}

TEST(Heaps, WithoutTheTracerNvtxNothingChanges) { expect_unchanged("capture_prog_nvtx_mem"); }

// At the pause after the fourth region (the resized first block and [4096, 4608)) the NVTX heap holds
// [0, 512) and [4096, 4608); regions say no reserved size, so nothing is internal waste.
TEST(Heaps, FromNvtxTheFiguresAtAChosenMoment) {
  TracedRun run = run_traced("capture_prog_nvtx_mem");
  heaps_of(run, "done\n");
  expect_heap_at(run.trace, time_of<trace::SubAlloc>(run.trace, 4),
                 {.allocated = 1024, .blocks = 2, .internal = 0, .external = 3584 + 2092544, .largest_free = 2092544,
                  .peak = 4096});
}

std::vector<std::string> python_command() {
  return {GMT_PYTHON3, GMT_HEAPS_SCRIPT, sim_dir() + "/libcudart.so.13"};
}

TEST(Heaps, FromPython) {
  if (std::string(GMT_PYTHON3).empty()) GTEST_SKIP() << "no /usr/bin/python3";
  std::vector<std::string> command = python_command();
  HeapTrace t = heaps_of(
      run_traced(command[0], {command.begin() + 1, command.end()}, {{"PYTHONPATH", GMT_PYTHON_MODULE_DIR}}),
      "active\nheap given\n");
  uint64_t s = t.segment;
  std::vector<HeapRecord> expected = {
      trace::HeapCreate{{}, 1, 0, s, 1 << 20, "python"},
      trace::SubAlloc{{}, 1, s, 700, 1024, 0},
      trace::SubName{{}, 1, s, "embedding"},
      trace::SubAlloc{{}, 1, s + 1024, 512, 0, 0},
      trace::SubFree{{}, 1, s},
      trace::HeapReset{{}, 1},
      trace::HeapDestroy{{}, 1},
  };
  EXPECT_EQ(t.records, expected);
  for (uint32_t stack : t.suballoc_stacks) EXPECT_NE(stack, 0u);
}

// In the used view the blocks are the program's memory, with their Python stacks: both blocks live at once
// (700 + 512 bytes), the largest asked for on the script's line that hands it out.
TEST(Heaps, FromPythonTheUsedViewHasTheBlocksPythonFrames) {
  if (std::string(GMT_PYTHON3).empty()) GTEST_SKIP() << "no /usr/bin/python3";
  std::vector<std::string> command = python_command();
  TracedRun run =
      run_traced(command[0], {command.begin() + 1, command.end()}, {{"PYTHONPATH", GMT_PYTHON_MODULE_DIR}});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  ProcessResult r = run_gpumemtrace({"peak", "--json", run.trace});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json peak = nlohmann::json::parse(r.out);
  EXPECT_EQ(peak["view"], "used");
  EXPECT_EQ(peak["devices"].at(0)["peak_bytes"], 700 + 512);
  ASSERT_EQ(peak["peak"].size(), 2u) << r.out;
  const nlohmann::json& largest = peak["peak"].at(0);
  EXPECT_EQ(largest["bytes"], 700);
  std::vector<nlohmann::json> python;
  for (const nlohmann::json& frame : largest["stack"])
    if (frame["kind"] == "python") python.push_back(frame);
  ASSERT_EQ(python.size(), 2u) << largest["stack"].dump(1);
  EXPECT_EQ(python[0]["function"], "suballoc");  // the module's own call, which text leaves out
  EXPECT_TRUE(python[1]["file"].get<std::string>().ends_with("annotate_heaps.py")) << python[1].dump();
  EXPECT_EQ(python[1]["line"], line_containing(GMT_HEAPS_SCRIPT, "gpumemtrace.suballoc(heap, base, 700"));
}

TEST(Heaps, WithoutTheTracerPythonNothingChanges) {
  if (std::string(GMT_PYTHON3).empty()) GTEST_SKIP() << "no /usr/bin/python3";
  ProcessResult plain = run_process(python_command(), sim_env({{"PYTHONPATH", GMT_PYTHON_MODULE_DIR}}));
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out, "inactive\nheap none\n");
  EXPECT_EQ(plain.err, "");
}

}  // namespace
}  // namespace gpumemtrace::test
