// What the tracer records for each way a program reaches GPU memory (docs/cuda-memory-paths.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "tests/support/program_output.h"
#include "tests/support/trace_facts.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {

using format::Api;
using format::MemoryKind;

struct Expected {
  MemoryKind kind;
  uint64_t size;
};

std::vector<Expected> kinds_and_sizes(const TraceFacts& facts) {
  std::vector<Expected> out;
  for (const auto& a : facts.allocs) out.push_back({a.kind(), a.size});
  return out;
}

bool operator==(const Expected& a, const Expected& b) { return a.kind == b.kind && a.size == b.size; }
void PrintTo(const Expected& e, std::ostream* os) {
  *os << format::memory_kind_name(e.kind) << ":" << e.size;
}

// The workload of programs/runtime_workload.cpp, in order.
const std::vector<Expected> kRuntimeWorkload = {
    {MemoryKind::Device, 1 << 20},  {MemoryKind::Device, 3000},    {MemoryKind::Managed, 4096},
    {MemoryKind::HostPinned, 8192}, {MemoryKind::AsyncPool, 2 << 20}, {MemoryKind::Device, 5000},
};

// The address range [start, end) of a function in a binary, from its symbol table.
std::pair<uint64_t, uint64_t> symbol_range(const std::string& binary, const std::string& symbol) {
  ProcessResult nm = run_process({"nm", "-S", "--defined-only", binary});
  std::istringstream lines(nm.out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    std::string address, size, type, name;
    if (!(in >> address >> size >> type >> name)) continue;  // symbols without a size have 3 columns
    if (name == symbol) {
      uint64_t start = std::stoull(address, nullptr, 16);
      return {start, start + std::stoull(size, nullptr, 16)};
    }
  }
  ADD_FAILURE() << symbol << " not found in " << binary;
  return {0, 0};
}

void expect_frees_match_allocs(const TraceFacts& facts) {
  std::multiset<uint64_t> live;
  for (const auto& a : facts.allocs) live.insert(a.address);
  for (const auto& f : facts.frees) {
    auto it = live.find(f.address);
    ASSERT_NE(it, live.end()) << "free of an address never allocated: " << f.address;
    live.erase(it);
  }
}

TEST(Capture, SharedRuntimeProgramIsRecordedExactly) {
  TracedRun run = run_traced("capture_prog_runtime_shared");
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  TraceFacts facts = read_trace(run.trace);
  EXPECT_TRUE(facts.complete()) << facts.error;
  EXPECT_EQ(kinds_and_sizes(facts), kRuntimeWorkload);
  std::vector<Api> apis;
  for (const auto& a : facts.allocs) apis.push_back(a.api);
  EXPECT_EQ(apis, (std::vector<Api>{Api::cudaMalloc, Api::cudaMalloc, Api::cudaMallocManaged, Api::cudaMallocHost,
                                    Api::cudaMallocAsync, Api::cudaMalloc}));
  for (const auto& a : facts.allocs) EXPECT_EQ(a.device, a.kind() == MemoryKind::HostPinned ? -1 : 0);

  ASSERT_EQ(facts.frees.size(), 4u);
  std::vector<Api> free_apis;
  for (const auto& f : facts.frees) free_apis.push_back(f.api);
  EXPECT_EQ(free_apis, (std::vector<Api>{Api::cudaFreeAsync, Api::cudaFree, Api::cudaFreeHost, Api::cudaFree}));
  EXPECT_EQ(facts.frees[0].address, facts.allocs[4].address);
  EXPECT_EQ(facts.frees[1].address, facts.allocs[1].address);
  EXPECT_EQ(facts.frees[2].address, facts.allocs[3].address);
  EXPECT_EQ(facts.frees[3].address, facts.allocs[2].address);
  EXPECT_EQ(facts.frees[0].stream, facts.allocs[4].stream);
  EXPECT_NE(facts.allocs[4].stream, 0u);
  expect_frees_match_allocs(facts);

  ASSERT_EQ(facts.mem_infos.size(), 1u);
  EXPECT_EQ(facts.mem_infos[0].free_bytes, printed_value(run.result.out, "meminfo"));
  EXPECT_TRUE(facts.failures.empty());
}

TEST(Capture, StackOfKnownSiteContainsThatFunction) {
  TracedRun run = run_traced("capture_prog_runtime_shared");
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  TraceFacts facts = read_trace(run.trace);
  ASSERT_FALSE(facts.allocs.empty());
  std::string binary = bin_dir() + "/capture_prog_runtime_shared";
  auto [start, end] = symbol_range(binary, "known_allocation_site");
  uint64_t runtime_start = printed_value(run.result.out, "known_allocation_site");
  uint64_t bias = runtime_start - start;
  const auto& frames = facts.alloc_stacks[0];
  ASSERT_FALSE(frames.empty());
  bool found = std::any_of(frames.begin(), frames.end(),
                           [&](uint64_t ip) { return ip >= start + bias && ip < end + bias; });
  EXPECT_TRUE(found) << "no frame of the 1 MiB allocation lies in known_allocation_site";
  // The executable is in the module map, so the analyzer can symbolize the frame offline.
  bool mapped = std::any_of(facts.modules.begin(), facts.modules.end(), [&](const TraceFacts::Module& m) {
    return m.path == binary && m.low <= runtime_start && runtime_start < m.high && !m.build_id.empty();
  });
  EXPECT_TRUE(mapped);
  // No frame of the tracer itself.
  for (const auto& m : facts.modules) {
    if (m.path.find("libgpumemtrace.so") == std::string::npos) continue;
    for (uint64_t ip : frames) EXPECT_FALSE(ip >= m.low && ip < m.high);
  }
}

TEST(Capture, StaticRuntimeIsSeenThroughTheDriverChain) {
  TracedRun run = run_traced("capture_prog_runtime_static");
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  TraceFacts facts = read_trace(run.trace);
  EXPECT_TRUE(facts.complete()) << facts.error;
  EXPECT_EQ(kinds_and_sizes(facts), kRuntimeWorkload);
  for (const auto& a : facts.allocs) EXPECT_LT(static_cast<int>(a.api), static_cast<int>(Api::cudaMalloc));
  EXPECT_EQ(facts.frees.size(), 4u);
  expect_frees_match_allocs(facts);
}

TEST(Capture, DriverLookupsAndRuntimeEntryPointsAreSeen) {
  TracedRun run = run_traced("capture_prog_driver_lookups");
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  TraceFacts facts = read_trace(run.trace);
  EXPECT_TRUE(facts.complete()) << facts.error;
  EXPECT_EQ(kinds_and_sizes(facts), (std::vector<Expected>{{MemoryKind::Device, 7 << 20},
                                                           {MemoryKind::AsyncPool, 3 << 20},
                                                           {MemoryKind::VmmPhysical, 4 << 20},
                                                           {MemoryKind::Device, 5 << 20},
                                                           {MemoryKind::AsyncPool, 6 << 20}}));
  ASSERT_EQ(facts.frees.size(), 4u);
  EXPECT_EQ(facts.frees[2].api, Api::cuMemRelease);
  EXPECT_EQ(facts.frees[2].address, facts.allocs[2].address);
  ASSERT_EQ(facts.reserves.size(), 1u);
  EXPECT_EQ(facts.reserves[0].size, 8u << 20);
  ASSERT_EQ(facts.maps.size(), 1u);
  EXPECT_EQ(facts.maps[0].address, facts.reserves[0].address);
  EXPECT_EQ(facts.maps[0].size, 4u << 20);
  EXPECT_EQ(facts.maps[0].handle, facts.allocs[2].address);
  ASSERT_EQ(facts.unmaps.size(), 1u);
  EXPECT_EQ(facts.unmaps[0].address, facts.reserves[0].address);
  ASSERT_EQ(facts.address_frees.size(), 1u);
  expect_frees_match_allocs(facts);
}

TEST(Capture, ProgramLinkedWithLibcudaIsSeenThroughExportedNames) {
  TracedRun run = run_traced("capture_prog_linked_driver");
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  TraceFacts facts = read_trace(run.trace);
  EXPECT_TRUE(facts.complete());
  EXPECT_EQ(kinds_and_sizes(facts), (std::vector<Expected>{{MemoryKind::Device, 12345},
                                                           {MemoryKind::Device, 678},
                                                           {MemoryKind::HostPinned, 4096}}));
  ASSERT_EQ(facts.frees.size(), 2u);
  EXPECT_EQ(facts.frees[0].api, Api::cuMemFree);
  EXPECT_EQ(facts.frees[0].address, facts.allocs[0].address);
  EXPECT_EQ(facts.frees[1].api, Api::cuMemFreeHost);
  ASSERT_EQ(facts.mem_infos.size(), 1u);
  EXPECT_EQ(facts.mem_infos[0].free_bytes, printed_value(run.result.out, "meminfo"));
}

TEST(Capture, SixteenThreadsLoseNothing) {
  TracedRun run = run_traced("capture_prog_threads", {"16", "1000"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  TraceFacts facts = read_trace(run.trace);
  EXPECT_TRUE(facts.complete()) << facts.error;
  ASSERT_EQ(facts.allocs.size(), 16000u);
  ASSERT_EQ(facts.frees.size(), 16000u);
  std::map<uint32_t, int> per_thread;
  for (const auto& a : facts.allocs) ++per_thread[a.thread];
  ASSERT_EQ(per_thread.size(), 16u);
  for (const auto& [thread, count] : per_thread) EXPECT_EQ(count, 1000) << "thread " << thread;
  // Each thread's sizes are its own: 1024 * (t + 1) + i % 7.
  std::map<uint32_t, std::set<uint64_t>> sizes;
  for (const auto& a : facts.allocs) sizes[a.thread].insert(a.size / 1024);
  for (const auto& [thread, kib] : sizes) EXPECT_EQ(kib.size(), 1u);
  expect_frees_match_allocs(facts);
}

TEST(Capture, ForkedChildWritesItsOwnTrace) {
  TracedRun run = run_traced("capture_prog_fork");
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  uint64_t child = printed_value(run.result.out, "child");
  TraceFacts parent = read_trace(run.trace);
  EXPECT_TRUE(parent.complete());
  EXPECT_EQ(kinds_and_sizes(parent), (std::vector<Expected>{{MemoryKind::Device, 1111 * 1024}}));
  EXPECT_EQ(parent.frees.size(), 1u);
  std::string child_path = run.dir + "/child." + std::to_string(child) + ".trace";
  ASSERT_TRUE(file_exists(child_path));
  TraceFacts child_facts = read_trace(child_path);
  EXPECT_EQ(child_facts.pid, child);
  EXPECT_EQ(kinds_and_sizes(child_facts), (std::vector<Expected>{{MemoryKind::Device, 2222 * 1024}}));
  EXPECT_EQ(child_facts.frees.size(), 1u);
}

TEST(Capture, ChildrenAreNotTracedWhenFollowingIsOff) {
  TracedRun run = run_traced("capture_prog_fork", {}, {{"GPUMEMTRACE_FOLLOW_CHILDREN", "0"}});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  uint64_t child = printed_value(run.result.out, "child");
  EXPECT_FALSE(file_exists(run.dir + "/child." + std::to_string(child) + ".trace"));
  EXPECT_EQ(read_trace(run.trace).allocs.size(), 1u);
}

TEST(Capture, ExecutedChildrenWriteTheirOwnTraces) {
  // The shell forks and execs the program: the program's trace is its own, the shell's has no events.
  std::string program = bin_dir() + "/capture_prog_threads";
  TracedRun run = run_traced("/bin/sh", {"-c", program + " 1 5; true"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  TraceFacts shell = read_trace(run.trace);
  EXPECT_TRUE(shell.complete());
  EXPECT_TRUE(shell.allocs.empty());
  std::vector<std::string> children;
  for (const auto& entry : std::filesystem::directory_iterator(run.dir)) {
    if (entry.path().filename().string().rfind("child.", 0) == 0) children.push_back(entry.path());
  }
  ASSERT_EQ(children.size(), 1u);
  TraceFacts child = read_trace(children[0]);
  EXPECT_TRUE(child.complete());
  EXPECT_EQ(child.allocs.size(), 5u);
  EXPECT_EQ(child.frees.size(), 5u);
  EXPECT_NE(child.pid, shell.pid);
}

TEST(Capture, KilledProgramKeepsEveryReturnedEvent) {
  TracedRun run = run_traced("capture_prog_killed", {"250"});
  EXPECT_EQ(run.result.term_signal, 9);
  EXPECT_EQ(printed_value(run.result.out, "allocated"), 250u);
  TraceFacts facts = read_trace(run.trace);
  EXPECT_EQ(facts.status, trace::Status::Truncated);
  ASSERT_EQ(facts.allocs.size(), 250u);
  for (size_t i = 0; i < facts.allocs.size(); ++i) EXPECT_EQ(facts.allocs[i].size, 4096 + i);
}

TEST(Capture, OutOfMemoryIsRecordedWithDeviceState) {
  TracedRun run = run_traced("capture_prog_runtime_shared", {"--oom"}, {{"GPUMEMTRACE_SIM_MEMORY", "1GiB"}});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  TraceFacts facts = read_trace(run.trace);
  ASSERT_EQ(facts.failures.size(), 1u);
  const auto& oom = facts.failures[0];
  EXPECT_EQ(oom.api, Api::cudaMalloc);
  EXPECT_EQ(oom.error, 2u);
  EXPECT_EQ(oom.size, printed_value(run.result.out, "oom requested"));
  EXPECT_EQ(oom.device_total, 1ull << 30);
  EXPECT_EQ(oom.device_free, printed_value(run.result.out, "meminfo"));
  EXPECT_EQ(oom.device, 0);
  EXPECT_FALSE(facts.failure_stacks[0].empty());
  // The failed request is not an allocation.
  EXPECT_EQ(kinds_and_sizes(facts), kRuntimeWorkload);
}

TEST(Capture, OutOfMemoryRecordsWhatThePoolsHold) {
  TracedRun run = run_traced("capture_prog_pool_oom", {}, {{"GPUMEMTRACE_SIM_MEMORY", "1GiB"}});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  TraceFacts facts = read_trace(run.trace);
  ASSERT_EQ(facts.failures.size(), 1u);
  EXPECT_EQ(facts.failures[0].size, 768u << 20);
  EXPECT_EQ(facts.failures[0].device_free, 512u << 20);
  ASSERT_EQ(facts.pool_usages.size(), 1u);  // the default pool is also the current one: reported once
  const auto& usage = facts.pool_usages[0];
  EXPECT_EQ(usage.pool, printed_value(run.result.out, "default_pool"));
  EXPECT_EQ(usage.device, 0);
  EXPECT_EQ(usage.reserved_bytes, 512u << 20);
  EXPECT_EQ(usage.used_bytes, 0u);
  EXPECT_GE(usage.time_ns, facts.failures[0].time_ns);
}

}  // namespace
}  // namespace gpumemtrace::test
