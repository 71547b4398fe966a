// Neighbours that bind around a preloaded library (docs/capture.md, "Neighbours"): a plugin loaded with
// RTLD_DEEPBIND, and a program that interposes dlsym itself. Each allocation the program makes is in the
// trace exactly once, or, where the tracer cannot see it, the tracer says so in one line on stderr and the
// program runs exactly as it does untraced.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "tests/support/program_output.h"
#include "tests/support/trace_facts.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {

constexpr int kBindingAllocations = 6;

std::string plugin(const std::string& name) { return lib_dir() + "/libreliability_deepbind_" + name + ".so"; }

// (i + 1) * step + extra for i < kBindingAllocations: the sizes the test programs allocate.
std::multiset<uint64_t> sizes(uint64_t step, uint64_t extra) {
  std::multiset<uint64_t> out;
  for (uint64_t i = 0; i < kBindingAllocations; ++i) out.insert((i + 1) * step + extra);
  return out;
}

struct Expected {
  format::Api api;
  format::Api free_api;
  std::multiset<uint64_t> sizes;
};

// The run's trace is complete and holds exactly `expected`: allocations under each API with those sizes, each
// freed once under its free API, and nothing else.
void expect_trace_holds(const TracedRun& run, const std::vector<Expected>& expected) {
  TraceFacts facts = read_trace(run.trace);
  EXPECT_TRUE(facts.complete()) << facts.error;
  size_t count = 0;
  for (const Expected& e : expected) {
    std::multiset<uint64_t> traced, live;
    for (const auto& a : facts.allocs) {
      if (a.api != e.api) continue;
      traced.insert(a.size);
      live.insert(a.address);
    }
    EXPECT_EQ(traced, e.sizes);
    for (const auto& f : facts.frees) {
      if (f.api != e.free_api) continue;
      auto it = live.find(f.address);
      EXPECT_NE(it, live.end()) << "a free of an address not allocated under that API: " << f.address;
      if (it != live.end()) live.erase(it);
    }
    EXPECT_TRUE(live.empty()) << live.size() << " allocations never freed";
    count += e.sizes.size();
  }
  EXPECT_EQ(facts.allocs.size(), count);
  EXPECT_EQ(facts.frees.size(), count);
}

// The tracer said one line on stderr, and it says `what`.
void expect_one_line(const std::string& err, const std::string& what) {
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find(what), std::string::npos) << err;
}

// The program's exit code and output are those of the same run without the tracer.
void expect_same_as_untraced(const TracedRun& run, const std::string& program, const std::vector<std::string>& args) {
  ProcessResult untraced = run_process([&] {
    std::vector<std::string> argv{bin_dir() + "/" + program};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }(), sim_env());
  ASSERT_EQ(untraced.exit_code, 0) << untraced.err;
  EXPECT_EQ(run.result.exit_code, untraced.exit_code) << run.result.err;
  EXPECT_EQ(run.result.out, untraced.out);
}

const char kDeepbindLine[] = "was loaded with RTLD_DEEPBIND and ";

// These programs only run in the plain build. AddressSanitizer and ThreadSanitizer end any process that loads
// a library with RTLD_DEEPBIND (their dlopen interceptor: google/sanitizers#611), and their runtime looks up
// what it intercepts with dlsym while it sets itself up: a program's own dlsym, instrumented, would run before
// the sanitizer is ready.
bool sanitizer_build() { return tracer_preload() != preload_library(); }
#define SKIP_UNDER_SANITIZERS() \
  if (sanitizer_build()) GTEST_SKIP() << "a sanitizer build: RTLD_DEEPBIND and a program's own dlsym are not run"

// The plugin binds cudaMalloc to the runtime it links, which the program loaded before it: the runtime hook
// is bypassed, but that runtime reaches the driver through the tracer's wrappers.
TEST(NeighbourBinding, DeepbindPluginOnARuntimeLoadedBefore) {
  SKIP_UNDER_SANITIZERS();
  std::vector<std::string> args{plugin("runtime"), std::to_string(kBindingAllocations), "runtime-first"};
  TracedRun run = run_traced("reliability_prog_deepbind", args);
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(printed_value(run.result.out, "done"), static_cast<uint64_t>(kBindingAllocations));
  EXPECT_EQ(run.result.err, "");
  expect_trace_holds(run, {{format::Api::cuMemAlloc, format::Api::cuMemFree, sizes(4096, 100)}});
}

// The plugin brings the runtime in with it: the runtime's dlsym is glibc's, so it reaches the driver
// around the tracer. Nothing of it is traced; the line says so.
TEST(NeighbourBinding, DeepbindPluginWithItsOwnRuntimeIsSaidOnce) {
  SKIP_UNDER_SANITIZERS();
  std::vector<std::string> args{plugin("runtime"), std::to_string(kBindingAllocations)};
  TracedRun run = run_traced("reliability_prog_deepbind", args);
  expect_same_as_untraced(run, "reliability_prog_deepbind", args);
  expect_one_line(run.result.err, plugin("runtime") + " " + kDeepbindLine + "brought its own CUDA runtime");
  expect_trace_holds(run, {});
}

// The plugin calls the driver it links: its cuMemAlloc is the driver's own, around the tracer's exported one.
TEST(NeighbourBinding, DeepbindPluginCallingTheDriverIsSaidOnce) {
  SKIP_UNDER_SANITIZERS();
  for (std::string first : {"", "runtime-first"}) {
    std::vector<std::string> args{plugin("driver"), std::to_string(kBindingAllocations)};
    if (!first.empty()) args.push_back(first);
    TracedRun run = run_traced("reliability_prog_deepbind", args);
    expect_same_as_untraced(run, "reliability_prog_deepbind", args);
    expect_one_line(run.result.err, plugin("driver") + " " + kDeepbindLine + "binds to the CUDA driver itself");
    expect_trace_holds(run, {});
  }
}

// The program's dlsym forwards with dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34"): that is the tracer's, which
// carries glibc's versions, so the runtime's lookup and the program's own both reach the wrappers.
TEST(NeighbourBinding, OwnDlsymForwardingToTheNextIsExact) {
  SKIP_UNDER_SANITIZERS();
  TracedRun run = run_traced("reliability_prog_own_dlsym", {"next", std::to_string(kBindingAllocations)});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(printed_value(run.result.out, "done"), static_cast<uint64_t>(kBindingAllocations));
  EXPECT_EQ(printed_value(run.result.out, "own dlsym found cuGetProcAddress_v2"), 1u);
  EXPECT_EQ(run.result.err, "");
  expect_trace_holds(run, {{format::Api::cudaMalloc, format::Api::cudaFree, sizes(8192, 300)},
                           {format::Api::cuMemAlloc, format::Api::cuMemFree, sizes(4096, 77)}});
}

// The program's dlsym goes straight to glibc's: the runtime hooks still record the runtime's allocations
// (exactly), the driver functions looked up through that dlsym are untraced, and the line says so.
TEST(NeighbourBinding, OwnDlsymForwardingToGlibcIsSaidOnce) {
  SKIP_UNDER_SANITIZERS();
  std::vector<std::string> args{"libc", std::to_string(kBindingAllocations)};
  TracedRun run = run_traced("reliability_prog_own_dlsym", args);
  expect_same_as_untraced(run, "reliability_prog_own_dlsym", args);
  expect_one_line(run.result.err,
                  "reliability_prog_own_dlsym defines its own dlsym, which does not forward to the tracer's");
  expect_trace_holds(run, {{format::Api::cudaMalloc, format::Api::cudaFree, sizes(8192, 300)}});
}

}  // namespace
}  // namespace gpumemtrace::test
