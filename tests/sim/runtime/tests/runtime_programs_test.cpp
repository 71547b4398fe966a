// Integration tests of the simulated runtime: real programs run on the simulated device (build/lib/sim first on
// LD_LIBRARY_PATH), with exact memory figures, the driver lookups NVIDIA's runtime makes, and the errors NVIDIA's own
// runtime gives without a driver.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "not_supported.inc"
#include "tests/support/subprocess.h"
#include "tests/support/temp_files.h"

namespace {

namespace fs = std::filesystem;
using gpumemtrace::test::bin_dir;
using gpumemtrace::test::EnvChanges;
using gpumemtrace::test::ProcessResult;
using gpumemtrace::test::read_file;
using gpumemtrace::test::run_process;
using gpumemtrace::test::ScratchDir;
using gpumemtrace::test::sim_dir;
using gpumemtrace::test::sim_env;
using gpumemtrace::test::test_data_dir;

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kGiB = size_t{1} << 30;
constexpr size_t kPoolStep = 2 * kMiB;  // async pools reserve in 2 MiB steps
const std::string kNvidiaLibDir = SIM_CUDART_NVIDIA_LIB_DIR;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// The simulated device with one 1 GiB device and nothing used by other processes.
EnvChanges device_1gib(EnvChanges extra = {}) {
  extra.emplace("GPUMEMTRACE_SIM_DEVICES", "1");
  extra.emplace("GPUMEMTRACE_SIM_MEMORY", "1GiB");
  extra.emplace("GPUMEMTRACE_SIM_OTHERS_MEMORY", "0");
  return sim_env(std::move(extra));
}

ProcessResult run(const std::string& program, std::vector<std::string> args, const EnvChanges& env) {
  args.insert(args.begin(), bin_dir() + "/" + program);
  return run_process(args, env);
}

std::string describe(const ProcessResult& r) {
  return "exit " + std::to_string(r.exit_code) + " signal " + std::to_string(r.term_signal) + "\nstdout:\n" + r.out +
         "\nstderr:\n" + r.err;
}

using Fields = std::map<std::string, std::string>;

// The key=value fields of one output line.
Fields fields_of(const std::string& line) {
  Fields fields;
  std::istringstream in(line);
  for (std::string word; in >> word;)
    if (auto eq = word.find('='); eq != std::string::npos) fields[word.substr(0, eq)] = word.substr(eq + 1);
  return fields;
}

// The fields of every line that starts with `record`.
std::vector<Fields> records(const std::string& out, const std::string& record) {
  std::vector<Fields> found;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(record + " ", 0) == 0) found.push_back(fields_of(line));
  return found;
}

// Every key of `want` has its value in `got`.
template <class V>
void expect_fields(const std::map<std::string, V>& got, const std::type_identity_t<std::map<std::string, V>>& want,
                   const std::string& what = "") {
  for (const auto& [key, value] : want) {
    auto it = got.find(key);
    if (it == got.end())
      ADD_FAILURE() << what << " " << key << " missing";
    else
      EXPECT_EQ(it->second, value) << what << " " << key;
  }
}

// The one line of `record` in out, whose fields include `want`.
void expect_record(const std::string& out, const std::string& record, const Fields& want) {
  auto found = records(out, record);
  ASSERT_EQ(found.size(), 1u) << record << " in\n" << out;
  expect_fields(found[0], want, record);
}

// `mem step=<step> free=<n>` lines as step -> free bytes.
std::map<std::string, size_t> free_by_step(const std::string& out) {
  std::map<std::string, size_t> free;
  for (auto& f : records(out, "mem")) free[f["step"]] = std::stoull(f["free"]);
  return free;
}

// `value <key>=<v>` lines as key -> v.
Fields values(const std::string& out) {
  Fields v;
  for (auto& f : records(out, "value")) v.insert(f.begin(), f.end());
  return v;
}

// A directory of its own, removed at the end of the test.
struct TempDir {
  ScratchDir dir;
  fs::path path{dir.path()};
  // A folder holding only our libcudart.so.13 (and, optionally, `driver` as libcuda.so.1).
  std::string runtime_only(const std::string& driver = "") const {
    fs::create_symlink(sim_dir() + "/libcudart.so.13", path / "libcudart.so.13");
    if (!driver.empty()) fs::create_symlink(driver, path / "libcuda.so.1");
    return path.string();
  }
};

// ---------------------------------------------------------------------------------------------------------------
// Issue 2's "Done when": the NVIDIA-linked program, the statically linked one, the dlopen one.

void expect_runtime_alloc_figures(const ProcessResult& r) {
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  expect_record(r.out, "info", {{"runtime", "13000"}, {"devices", "1"}, {"device", "0"}});

  auto free = free_by_step(r.out);
  const size_t malloc_bytes = round_up(1000000, 512);  // cuMemAlloc accounts in 512-byte units
  const size_t async_bytes = round_up(3000000, kPoolStep);
  expect_fields(free, {{"start", kGiB},
                       {"after_cudaMalloc", kGiB - malloc_bytes},
                       {"after_cudaMallocAsync", kGiB - malloc_bytes - async_bytes},
                       {"after_cudaFreeAsync", kGiB - malloc_bytes},  // threshold 0: the pool shrinks at sync
                       {"after_cudaFree", kGiB},
                       {"after_oversize", kGiB}});
  for (auto& m : records(r.out, "mem")) EXPECT_EQ(m["total"], std::to_string(kGiB));

  auto allocs = records(r.out, "alloc");
  ASSERT_EQ(allocs.size(), 2u);
  EXPECT_EQ(allocs[0]["api"] + " " + allocs[0]["size"], "cudaMalloc 1000000");
  EXPECT_EQ(allocs[1]["api"] + " " + allocs[1]["size"], "cudaMallocAsync 3000000");
  expect_record(r.out, "oversize",
                {{"size", std::to_string(kGiB + 1)},
                 {"result", "2"},
                 {"name", "cudaErrorMemoryAllocation"},
                 {"last_error", "2"},
                 {"cleared", "0"}});
  expect_record(r.out, "summary",
                {{"allocations", "2"}, {"allocated_bytes", "4000000"}, {"frees", "2"}, {"failed_allocations", "1"}});
}

TEST(RuntimePrograms, NvidiaLinkedProgramRunsOnSimulatedRuntime) {
  expect_runtime_alloc_figures(run("sim_prog_runtime_shared", {}, device_1gib()));
}

TEST(RuntimePrograms, StaticallyLinkedProgramRuns) {
  expect_runtime_alloc_figures(run("sim_prog_runtime_static", {}, device_1gib()));
}

// The NVIDIA-linked program really loads ours: NVIDIA's runtime cannot run on the simulated driver.
TEST(RuntimePrograms, NvidiaLinkedProgramLoadsTheSimulatedRuntime) {
  ProcessResult r = run("sim_prog_runtime_shared", {}, device_1gib({{"LD_DEBUG", "libs"}}));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.err.find(sim_dir() + "/libcudart.so.13"), std::string::npos) << r.err;
}

TEST(RuntimePrograms, ProgramSizesComeFromArguments) {
  ProcessResult r = run("sim_prog_runtime_static", {"4096", "5000000"}, device_1gib());
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  auto free = free_by_step(r.out);
  EXPECT_EQ(free["after_cudaMalloc"], kGiB - 4096);
  EXPECT_EQ(free["after_cudaMallocAsync"], kGiB - 4096 - 6 * kMiB);
}

TEST(RuntimePrograms, DriverDlopenProgramGetsEverythingThroughGetProcAddress) {
  ProcessResult r = run("sim_prog_driver_dlopen", {}, device_1gib());
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  Fields resolved;
  for (auto& l : records(r.out, "lookup")) {
    EXPECT_EQ(l["result"], "0") << l["name"];
    EXPECT_EQ(l["status"], "0") << l["name"];
    resolved[l["name"] + "/" + l["flags"]] = l["resolved"];
  }
  expect_fields(resolved, {{"cuMemAlloc/0", "cuMemAlloc_v2"},
                           {"cuMemFree/0", "cuMemFree_v2"},
                           {"cuMemGetInfo/0", "cuMemGetInfo_v2"},
                           {"cuMemCreate/0", "cuMemCreate"},
                           {"cuMemMap/0", "cuMemMap"},
                           {"cuMemAllocAsync/2", "cuMemAllocAsync_ptsz"},
                           {"cuMemFreeAsync/2", "cuMemFreeAsync_ptsz"}});

  auto free = free_by_step(r.out);
  const size_t start = free["start"];
  EXPECT_EQ(start, kGiB);
  expect_fields(free, {{"after_cuMemAlloc", start - kMiB},
                       {"after_cuMemFree", start},
                       {"after_cuMemCreate", start - 2 * kMiB},          // physical memory counts when created
                       {"after_cuMemAddressReserve", start - 2 * kMiB},  // a reservation is not memory
                       {"after_cuMemMap", start - 2 * kMiB},
                       {"after_cuMemRelease", start},  // 0 after release
                       {"after_cuMemAllocAsync", start - 4 * kMiB},
                       {"after_cuMemFreeAsync", start}});
  for (auto& v : records(r.out, "vmm")) EXPECT_EQ(v["result"], "0") << v["op"];
  expect_record(r.out, "summary",
                {{"allocations", "3"}, {"allocated_bytes", std::to_string(6 * kMiB)}, {"frees", "3"}});
}

// ---------------------------------------------------------------------------------------------------------------
// The driver lookups are NVIDIA's list exactly: the probe, then every row in order, once per process.

std::vector<std::string> expected_lookups() {
  std::vector<std::string> expected = {"\t0\t0"};  // the empty-name probe
  std::ifstream tsv(test_data_dir() + "/cudart13-driver-lookups.tsv");
  for (std::string line; std::getline(tsv, line);) {
    if (line.empty() || line[0] == '#' || line.rfind("symbol\t", 0) == 0) continue;
    expected.push_back(line.substr(0, line.rfind('\t')));  // symbol, version, flags
  }
  return expected;
}

std::vector<std::string> logged_lookups(const std::string& program, const std::vector<std::string>& args) {
  TempDir dir;
  std::string log = (dir.path / "lookups.log").string();
  ProcessResult r = run(program, args, device_1gib({{"GPUMEMTRACE_SIM_LOOKUP_LOG", log}}));
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  std::vector<std::string> lines;
  std::istringstream in(read_file(log));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(RuntimeLookups, SharedRuntimeAsksForTheTsvRowsInOrder) {
  auto expected = expected_lookups();
  ASSERT_EQ(expected.size(), 440u);
  EXPECT_EQ(logged_lookups("sim_prog_runtime_shared", {}), expected);
}

TEST(RuntimeLookups, StaticRuntimeAsksForTheTsvRowsInOrder) {
  EXPECT_EQ(logged_lookups("sim_prog_runtime_static", {}), expected_lookups());
}

TEST(RuntimeLookups, RacingThreadsLoadTheDriverOnce) {
  EXPECT_EQ(logged_lookups("sim_prog_runtime_checks", {"threads"}), expected_lookups());
}

// ---------------------------------------------------------------------------------------------------------------
// Without a usable driver the simulated runtime answers what NVIDIA's runtime answers.

ProcessResult nvidia(const std::string& program, const std::vector<std::string>& args, const std::string& lib_path) {
  return run(program, args, {{"LD_LIBRARY_PATH", lib_path}, {"LD_PRELOAD", std::nullopt}});
}

// These comparisons need a machine without a CUDA driver on the system path (like CI and development machines):
// there NVIDIA's runtime, given only its own folder, finds no libcuda.so.1.
bool system_has_driver() {
  ProcessResult r = nvidia("sim_prog_runtime_checks", {"probe"}, kNvidiaLibDir);
  return r.out.find("call=cudaGetDeviceCount result=35 ") == std::string::npos;
}
#define SKIP_IF_SYSTEM_DRIVER() \
  if (system_has_driver()) GTEST_SKIP() << "a CUDA driver (libcuda.so.1) is installed on this system"

TEST(RuntimeWithoutDriver, ProbeMatchesNvidiaRuntime) {
  SKIP_IF_SYSTEM_DRIVER();
  TempDir dir;
  std::string ours = dir.runtime_only();
  ProcessResult expected = nvidia("sim_prog_runtime_checks", {"probe"}, kNvidiaLibDir);
  ProcessResult got = nvidia("sim_prog_runtime_checks", {"probe"}, ours);
  ASSERT_NE(expected.out.find("call=cudaGetDeviceCount result=35 count=-1"), std::string::npos) << expected.out;
  EXPECT_EQ(got.out, expected.out);
  EXPECT_EQ(got.exit_code, expected.exit_code);
}

TEST(RuntimeWithoutDriver, AllocationProgramFailsLikeNvidiaRuntime) {
  SKIP_IF_SYSTEM_DRIVER();
  TempDir dir;
  std::string ours = dir.runtime_only();
  ProcessResult expected = nvidia("sim_prog_runtime_shared", {}, kNvidiaLibDir);
  ProcessResult got = nvidia("sim_prog_runtime_shared", {}, ours);
  EXPECT_EQ(expected.out, "error call=cudaGetDeviceCount result=35 name=cudaErrorInsufficientDriver\n");
  EXPECT_EQ(got.out, expected.out);
  EXPECT_EQ(got.exit_code, 1);
  ProcessResult static_run = nvidia("sim_prog_runtime_static", {}, dir.path.string());
  EXPECT_EQ(static_run.out, expected.out);
}

TEST(RuntimeWithoutDriver, StubDriverMatchesNvidiaRuntime) {
  const std::string stub = kNvidiaLibDir + "/stubs/libcuda.so";
  if (!fs::exists(stub)) GTEST_SKIP() << "no " << stub;
  TempDir nvidia_dir, our_dir;
  fs::create_symlink(stub, nvidia_dir.path / "libcuda.so.1");
  std::string ours = our_dir.runtime_only(stub);
  ProcessResult expected = nvidia("sim_prog_runtime_checks", {"probe"}, nvidia_dir.path.string() + ":" + kNvidiaLibDir);
  ProcessResult got = nvidia("sim_prog_runtime_checks", {"probe"}, ours);
  ASSERT_NE(expected.out.find("call=cudaMalloc result=34"), std::string::npos) << expected.out;
  EXPECT_EQ(got.out, expected.out);
}

TEST(RuntimeWithoutDriver, NoDeviceIsStickyCudaErrorNoDevice) {
  ProcessResult r = run("sim_prog_runtime_checks", {"probe"}, sim_env({{"GPUMEMTRACE_SIM_DEVICES", "0"}}));
  EXPECT_NE(r.out.find("value peek=100\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("call=cudaGetDeviceCount result=100 count=0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("call=cudaMalloc result=100 null=1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("call=cudaMemGetInfo result=100 free=7 total=7\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("value last_again=100\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("call=cudaRuntimeGetVersion result=0 version=13000\n"), std::string::npos) << r.out;
  ProcessResult program = run("sim_prog_runtime_shared", {}, sim_env({{"GPUMEMTRACE_SIM_DEVICES", "0"}}));
  EXPECT_EQ(program.exit_code, 1);
  EXPECT_EQ(program.out, "error call=cudaGetDeviceCount result=100 name=cudaErrorNoDevice\n");
}

TEST(RuntimeErrorsText, NamesAndStringsMatchNvidiaRuntime) {
  ProcessResult expected = nvidia("sim_prog_runtime_checks", {"errors"}, kNvidiaLibDir);
  ProcessResult got = run("sim_prog_runtime_checks", {"errors"}, sim_env());
  ASSERT_EQ(expected.exit_code, 0) << describe(expected);
  EXPECT_GT(std::count(expected.out.begin(), expected.out.end(), '\n'), 130);
  EXPECT_EQ(got.out, expected.out);
}

// ---------------------------------------------------------------------------------------------------------------
// The runtime API, unit by unit, through sim_prog_runtime_checks on the simulated device.

ProcessResult checks(const std::string& mode, EnvChanges env = {}) {
  ProcessResult r = run("sim_prog_runtime_checks", {mode}, device_1gib(std::move(env)));
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out.find("unexpected"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("failures=0\n"), std::string::npos) << r.out;
  return r;
}

TEST(RuntimeApi, LastErrorIsPerThreadAndClearedByGetLastError) {
  auto v = values(checks("lasterror").out);
  expect_fields(v, {{"initial", "0"},
                    {"peek", "101"},
                    {"peek_again", "101"},
                    {"last", "101"},
                    {"cleared", "0"},
                    {"latest", "21"},
                    {"other_thread", "0"},
                    {"this_thread", "1"},
                    {"malloc0_null", "1"},
                    {"final", "101"},
                    {"name.2", "cudaErrorMemoryAllocation"}});
}

TEST(RuntimeApi, CurrentDeviceIsPerThreadAndPropertiesComeFromTheDriver) {
  ProcessResult r = checks("devices", {{"GPUMEMTRACE_SIM_DEVICES", "2"}});
  auto v = values(r.out);
  expect_fields(v, {{"count", "2"},
                    {"default_device", "0"},
                    {"thread_device", "1"},
                    {"main_device_after_thread", "0"},
                    {"switched_device", "1"},
                    {"device1_allocated", std::to_string(8 * kMiB)},
                    {"device0_allocated", std::to_string(4 * kMiB)},
                    {"free.device1_now", std::to_string(kGiB)},  // device 1's memory was freed in the thread
                    {"free.device0_end", std::to_string(kGiB)}});
  auto devices = records(r.out, "device");
  ASSERT_EQ(devices.size(), 2u);
  for (auto& d : devices) {
    EXPECT_EQ(d["total"], std::to_string(kGiB));
    EXPECT_EQ(d["warp"], "32");
    EXPECT_FALSE(d["name"].empty());
    EXPECT_NE(d["major"], "0");
    EXPECT_NE(d["sms"], "0");
    EXPECT_EQ(d["pools"], "1");
    EXPECT_EQ(d["managed"], "1");
  }
}

TEST(RuntimeApi, EveryAllocationApiAccountsAndRoundTripsData) {
  ProcessResult r = checks("memory");
  auto v = values(r.out);
  const size_t start = kGiB;
  EXPECT_EQ(v["free.start"], std::to_string(start));
  auto drop = [&](const char* before, const char* after) {
    return std::stoull(v[std::string("free.") + before]) - std::stoull(v[std::string("free.") + after]);
  };
  EXPECT_EQ(v["free.cudaMalloc"], std::to_string(start - kMiB));
  EXPECT_EQ(v["pitch"], "1024");  // rows are 512-byte aligned
  EXPECT_EQ(drop("cudaMalloc", "cudaMallocPitch"), 1024u * 10);
  EXPECT_EQ(v["pitch3d"], "512");
  EXPECT_EQ(drop("cudaMallocPitch", "cudaMalloc3D"), 512u * 10 * 5);
  EXPECT_EQ(drop("cudaMalloc3D", "cudaMallocManaged"), 0u);    // managed memory is not resident until used
  EXPECT_EQ(drop("cudaMallocManaged", "cudaMallocHost"), 0u);  // pinned host memory is not device memory
  EXPECT_EQ(drop("cudaMallocHost", "cudaHostAlloc"), 0u);
  EXPECT_GE(drop("cudaHostAlloc", "cudaMallocArray"), 64u * 64 * 16);
  EXPECT_GE(drop("cudaMallocArray", "cudaMalloc3DArray"), 32u * 32 * 32);
  EXPECT_EQ(v["free.end"], std::to_string(start));
  for (auto& p : records(r.out, "pointer")) {
    if (p["of"] == "pageable")
      EXPECT_EQ(p["device"], "-2");
    else
      EXPECT_EQ(p["device"], "0") << p["of"];
  }
}

TEST(RuntimeApi, PoolsKeepMemoryUntilTrimmed) {
  auto v = values(checks("pools").out);
  const size_t start = kGiB;
  expect_fields(v, {{"threshold", std::to_string(UINT64_MAX)},
                    {"allocated.reserved", std::to_string(4 * kMiB)},
                    {"allocated.used", "3000000"},
                    {"free.allocated", std::to_string(start - 4 * kMiB)},
                    {"freed.reserved", std::to_string(4 * kMiB)},  // threshold: the pool keeps it
                    {"freed.used", "0"},
                    {"freed.reserved_high", std::to_string(4 * kMiB)},
                    {"freed.used_high", "3000000"},
                    {"free.freed", std::to_string(start - 4 * kMiB)},
                    {"trimmed.reserved", "0"},
                    {"free.trimmed", std::to_string(start)},
                    {"current.used", std::to_string(kMiB)}});
}

TEST(RuntimeApi, StreamsAndEvents) { checks("streams"); }

// Each lookup as "<result> <query status> <driver symbol returned>".
TEST(RuntimeApi, DriverEntryPointsAreTheDriversOwn) {
  ProcessResult r = checks("entrypoint");
  Fields entries;
  for (auto& e : records(r.out, "entry")) entries[e["of"]] = e["result"] + " " + e["status"] + " " + e["resolved"];
  expect_fields(entries, {{"ByVersion.cuMemAllocAsync.per_thread", "0 0 cuMemAllocAsync_ptsz"},
                          {"ByVersion.cuMemAllocAsync.legacy", "0 0 cuMemAllocAsync"},
                          {"ByVersion.cuMemAllocAsync.default", "0 0 cuMemAllocAsync"},
                          {"ByVersion.cuMemAlloc", "0 0 cuMemAlloc_v2"},
                          {"ByVersion.cuMemCreate", "0 0 cuMemCreate"},
                          {"EntryPoint.cuMemAlloc", "0 0 cuMemAlloc_v2"},
                          {"EntryPoint.cuMemFreeAsync.per_thread", "0 0 cuMemFreeAsync_ptsz"},
                          {"ByVersion.cuNoSuchFunction", "0 1 null"},         // not found: success with NULL
                          {"ByVersion.cuMemAllocAsync.too_old", "0 2 null"}});  // version not sufficient
  ASSERT_FALSE(records(r.out, "entry").empty()) << describe(r);
  EXPECT_EQ(records(r.out, "entry").back()["result"], "1");  // NULL symbol: invalid value
  EXPECT_EQ(values(r.out)["cuMemAlloc_through_entry_point"], "0");
}

// A kernel registered and launched the way nvcc-generated code does it: the launch succeeds and runs nothing.
TEST(RuntimeApi, KernelsLaunchWithoutRunningDeviceCode) {
  ProcessResult r = checks("kernels");
  expect_fields(values(r.out), {{"byte_after_launch", "127"},  // the cudaMemset's 0x7f, untouched by the kernel
                                {"maxThreadsPerBlock", "1024"},
                                {"blocks_per_sm", "8"},  // 2048 threads per multiprocessor / 256
                                {"host_func_runs", "1"},
                                {"callback_status", "0"},
                                {"capture_status", "0"},
                                {"previous_capture_mode", "0"},
                                {"pci_bus_id", "0000:01:00.0"}});
  // Two calls of cudaGraphLaunch, one line.
  EXPECT_EQ(r.err,
            "gpumemtrace simulated CUDA runtime: cudaGraphLaunch is not supported: the simulated driver captures no "
            "stream work into CUDA graphs\n");
}

TEST(RuntimeApi, PerThreadDefaultStreamBuildUsesThePtszExports) {
  auto v = values(checks("ptds").out);
  expect_fields(v, {{"EntryPoint_ptsz.cuMemAllocAsync", "cuMemAllocAsync_ptsz"},
                    {"ByVersion_ptsz.cuMemFreeAsync", "cuMemFreeAsync_ptsz"},
                    {"ByVersion_ptsz.legacy.cuMemFreeAsync", "cuMemFreeAsync"}});
}

TEST(RuntimeApi, RacingFirstCallsAllSucceed) { EXPECT_EQ(values(checks("threads").out)["threads_ok"], "8"); }

TEST(RuntimeApi, DeviceResetReleasesTheContextsMemory) {
  auto v = values(checks("reset").out);
  expect_fields(v, {{"free.allocated", std::to_string(kGiB - 4 * kMiB)},
                    {"free.after_reset", std::to_string(kGiB)},
                    {"free.end", std::to_string(kGiB)}});
}

// ---------------------------------------------------------------------------------------------------------------
// The shared library's interface: NVIDIA's names under NVIDIA's version node, nothing else.

std::vector<std::string> defined_dynamic_symbols(const std::string& library) {
  std::vector<std::string> symbols;
  std::string command = "nm -D --defined-only --with-symbol-versions " + library;
  FILE* nm = popen(command.c_str(), "r");
  if (nm == nullptr) return symbols;
  char line[512];
  while (std::fgets(line, sizeof line, nm) != nullptr) {
    std::istringstream in(line);
    std::string address, type, name;
    if (in >> address >> type >> name) symbols.push_back(name);
  }
  pclose(nm);
  return symbols;
}

TEST(RuntimeLibrary, ExportsOnlyVersionedCudaApiThatNvidiaExports) {
  auto ours = defined_dynamic_symbols(sim_dir() + "/libcudart.so.13");
  auto theirs = defined_dynamic_symbols(kNvidiaLibDir + "/libcudart.so.13");
  ASSERT_GT(theirs.size(), 100u) << "nm could not read NVIDIA's libcudart.so.13";
  std::set<std::string> nvidia_names(theirs.begin(), theirs.end());
  size_t api = 0;
  for (const std::string& s : ours) {
    if (s.rfind("libcudart.so.13", 0) == 0) continue;  // the version node itself
    EXPECT_TRUE(s.starts_with("cuda") || s.starts_with("__cuda")) << s;
    EXPECT_TRUE(nvidia_names.count(s)) << s << " is not exported by NVIDIA's libcudart.so.13";
    ++api;
  }
  EXPECT_GE(api, 60u);
  for (const char* name :
       {"cudaMalloc@@libcudart.so.13", "cudaMallocAsync_ptsz@@libcudart.so.13",
        "cudaGetDriverEntryPointByVersion_ptsz@@libcudart.so.13", "cudaMemcpy_ptds@@libcudart.so.13"})
    EXPECT_NE(std::find(ours.begin(), ours.end(), name), ours.end()) << name;
}

std::vector<std::string> torch_imports() {
  std::vector<std::string> names;
  std::ifstream in(test_data_dir() + "/torch-2.14.1-cudart-imports.txt");
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') names.push_back(line);
  return names;
}

TEST(RuntimeLibrary, ExportsEveryFunctionPyTorchImports) {
  auto names = torch_imports();
  ASSERT_EQ(names.size(), 106u);
  void* ours = dlopen((sim_dir() + "/libcudart.so.13").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(ours, nullptr) << dlerror();
  for (const std::string& name : names)
    EXPECT_NE(dlvsym(ours, name.c_str(), "libcudart.so.13"), nullptr) << name;
  dlclose(ours);
}

// tests/sim/README.md's table of PyTorch's imports: every one listed, "not supported" exactly for not_supported.inc.
TEST(RuntimeLibrary, ReadmeTableMatchesTheNotSupportedList) {
  std::set<std::string> not_supported;
#define SIM_NAME(name, why, params) not_supported.insert(#name);
  SIM_NOT_SUPPORTED_FUNCTIONS(SIM_NAME)
#undef SIM_NAME
  std::string readme = read_file(test_data_dir() + "/../sim/README.md");
  size_t table = readme.find("| functions | simulated runtime |");
  ASSERT_NE(table, std::string::npos);
  std::string rows = readme.substr(table, readme.find("\n\n", table) - table);
  std::set<std::string> listed;
  std::istringstream lines(rows);
  for (std::string row; std::getline(lines, row);) {
    size_t split = row.find(" | ");  // functions | what the simulated runtime does
    if (split == std::string::npos) continue;
    std::string functions = row.substr(0, split);
    bool row_not_supported = row.compare(split, 16, " | not supported") == 0;
    for (size_t open = functions.find('`'); open != std::string::npos;) {
      size_t close = functions.find('`', open + 1);
      std::string name = functions.substr(open + 1, close - open - 1);
      listed.insert(name);
      EXPECT_EQ(row_not_supported, not_supported.count(name) == 1) << name;
      open = functions.find('`', close + 1);
    }
  }
  for (const std::string& name : torch_imports()) EXPECT_TRUE(listed.count(name)) << name << " not in the table";
  for (const std::string& name : not_supported) EXPECT_TRUE(listed.count(name)) << name << " not in the table";
}

TEST(RuntimeLibrary, HasNvidiasSoname) {
  void* ours = dlopen((sim_dir() + "/libcudart.so.13").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(ours, nullptr) << dlerror();
  EXPECT_NE(dlvsym(ours, "cudaMalloc", "libcudart.so.13"), nullptr);
  EXPECT_NE(dlvsym(ours, "cudaGetErrorString", "libcudart.so.13"), nullptr);
  dlclose(ours);
}

}  // namespace
