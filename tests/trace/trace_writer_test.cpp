// The writer and the reader agree on every record: what TraceWriter writes is what trace::Reader reads.
#include "trace/writer/trace_writer.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <set>

#include "trace/reader/reader.h"
#include "trace/writer/mapped_file_sink.h"
#include "tests/support/trace_facts.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {

using format::Api;

writer::ProcessInfo sample_process() {
  writer::ProcessInfo info;
  info.pid = 4242;
  info.ppid = 1;
  info.start_wall_ns = 1'700'000'000'000'000'000ull;
  info.max_stack_depth = 64;
  info.rank = 3;
  info.hostname = "node7";
  info.executable = "/usr/bin/python3";
  info.argv = {"python3", "train.py", "--batch", "64"};
  return info;
}

std::string write_sample(const std::string& dir) {
  std::string path = dir + "/sample.trace";
  writer::TraceWriter writer;
  EXPECT_TRUE(writer.open(path, sample_process())) << writer.error();
  writer.write(trace::ModulesBegin{1});
  writer.write(trace::Module{0x400000, 0x400000, 0x480000, "/usr/bin/python3", std::string_view("\x01\x02\x03", 3)});
  writer.write(trace::ThreadNew{1, 4242, "python3"});
  writer.write(trace::StackNode{0, 0, 0x401000});
  writer.write(trace::StackNode{0, 1, 0x402000});
  writer.write(trace::Alloc{{}, Api::cudaMalloc, 0, 0x7f0000000000, 1 << 20, 2, 0, 0});
  writer.write(trace::Alloc{{}, Api::cudaMallocAsync, 1, 0x7f0000100000, 4096, 1, 0x55, 0});
  writer.write(trace::Alloc{{}, Api::cuMemAllocFromPoolAsync, 0, 0x7eff00000000, 512, 2, 0x55, 0x99});
  writer.write(trace::ThreadNew{2, 4243, "worker"});
  writer.write(trace::Free{{}, Api::cudaFreeAsync, 0x7f0000100000, 0x55});
  writer.write(trace::FreeFailed{{}, Api::cudaFree, 0x1234, 1});
  writer.write(trace::AllocFailed{{}, Api::cudaMalloc, 0, 80ull << 30, 2, 2, 1ull << 30, 16ull << 30});
  writer.write(trace::AllocFailed{{}, Api::cuMemAlloc, 0, 100, 0, 1, 0, 0});
  writer.write(trace::ThreadSwitch{1});
  writer.write(trace::AddressReserve{{{}, 0x10000000, 8 << 20}});
  writer.write(trace::Alloc{{}, Api::cuMemCreate, 0, 77, 2 << 20, 0, 0, 0});
  writer.write(trace::MemMap{{}, 0x10000000, 2 << 20, 77, 0});
  writer.write(trace::MemUnmap{{{}, 0x10000000, 2 << 20}});
  writer.write(trace::Free{{}, Api::cuMemRelease, 77, 0});
  writer.write(trace::AddressFree{{{}, 0x10000000, 8 << 20}});
  writer.write(trace::PoolCreate{{{}, 0x99, 0}});
  writer.write(trace::PoolTrim{{}, 0x99, 0, 2 << 20, 512});
  writer.write(trace::PoolDestroy{{{}, 0x99, trace::kNoDevice}});
  writer.write(trace::MemInfo{{}, 0, 15ull << 30, 16ull << 30});
  writer.write(trace::StacksReset{});
  writer.write(trace::StackNode{0, 0, 0x403000});
  writer.write(trace::Fork{4300});
  writer.end();
  return path;
}

TEST(TraceWriter, EveryRecordReadsBackExactly) {
  std::string path = write_sample(make_temp_dir());
  trace::Reader reader(path);
  std::vector<trace::Record> records;
  while (const trace::Record* r = reader.next()) records.push_back(*r);
  ASSERT_EQ(reader.status(), trace::Status::Complete) << reader.error();

  const auto& process = std::get<trace::Process>(records.at(0));
  EXPECT_EQ(process.pid, 4242u);
  EXPECT_EQ(process.rank, 3);
  EXPECT_EQ(process.hostname, "node7");
  ASSERT_EQ(process.argv.size(), 4u);
  EXPECT_EQ(process.argv[3], "64");

  const auto& module = std::get<trace::Module>(records.at(2));
  EXPECT_EQ(module.path, "/usr/bin/python3");
  EXPECT_EQ(module.build_id, std::string_view("\x01\x02\x03", 3));
  EXPECT_EQ(module.high, 0x480000u);

  const auto& first = std::get<trace::Alloc>(records.at(6));
  EXPECT_EQ(first.api, Api::cudaMalloc);
  EXPECT_EQ(first.device, 0);
  EXPECT_EQ(first.address, 0x7f0000000000u);
  EXPECT_EQ(first.size, 1u << 20);
  EXPECT_EQ(first.stack, 2u);
  EXPECT_EQ(first.thread, 1u);
  const auto& async = std::get<trace::Alloc>(records.at(7));
  EXPECT_EQ(async.device, 1);
  EXPECT_EQ(async.stream, 0x55u);
  const auto& pooled = std::get<trace::Alloc>(records.at(8));
  EXPECT_EQ(pooled.address, 0x7eff00000000u);  // a negative address delta
  EXPECT_EQ(pooled.pool, 0x99u);
  EXPECT_EQ(pooled.stream, 0x55u);

  const auto& free = std::get<trace::Free>(records.at(10));
  EXPECT_EQ(free.address, 0x7f0000100000u);
  EXPECT_EQ(free.stream, 0x55u);
  EXPECT_EQ(free.thread, 2u);
  const auto& oom = std::get<trace::AllocFailed>(records.at(12));
  EXPECT_EQ(oom.size, 80ull << 30);
  EXPECT_EQ(oom.device_free, 1ull << 30);
  EXPECT_EQ(oom.device_total, 16ull << 30);
  const auto& invalid = std::get<trace::AllocFailed>(records.at(13));
  EXPECT_EQ(invalid.error, 1u);
  EXPECT_EQ(invalid.device_total, 0u);

  EXPECT_EQ(std::get<trace::MemMap>(records.at(17)).handle, 77u);
  EXPECT_EQ(std::get<trace::PoolTrim>(records.at(22)).reserved_after, 2u << 20);
  EXPECT_EQ(std::get<trace::MemInfo>(records.at(24)).free_bytes, 15ull << 30);
  EXPECT_EQ(std::get<trace::StackNode>(records.at(26)).id, 1u);
  EXPECT_EQ(std::get<trace::Fork>(records.at(27)).child_pid, 4300u);
  EXPECT_EQ(std::get<trace::End>(records.back()).events_written, 17u);

  uint64_t last = 0;
  for (const auto& r : records) {
    std::visit([&](const auto& record) {
      if constexpr (std::is_base_of_v<trace::Event, std::decay_t<decltype(record)>>) {
        EXPECT_GE(record.time_ns, last);
        last = record.time_ns;
      }
    }, r);
  }
}

// The times a reading gives to events written at `at` (ns after the trace's start), one MemInfo each.
std::vector<uint64_t> times_read_back(const std::string& name, const std::vector<uint64_t>& at) {
  std::string path = make_temp_dir() + "/" + name;
  writer::TraceWriter writer;
  EXPECT_TRUE(writer.open(path, sample_process())) << writer.error();
  uint64_t now = writer::monotonic_ns();
  uint64_t start = now - writer.trace_time(now);
  for (uint64_t t : at) {
    writer.set_event_time(start + t);
    writer.write(trace::MemInfo{{}, 0, t, 0});
  }
  writer.end();
  trace::Reader reader(path);
  std::vector<uint64_t> times;
  while (const trace::Record* r = reader.next())
    if (const auto* info = std::get_if<trace::MemInfo>(r)) times.push_back(info->time_ns);
  EXPECT_EQ(reader.status(), trace::Status::Complete) << reader.error();
  return times;
}

// Time steps by whole microseconds, the rest carried to the next step: times in whole microseconds, and
// no nanosecond noise in the trace (docs/trace-format.md, "Times").
TEST(TraceWriter, TimeStepsByWholeMicrosecondsCarryingTheRest) {
  EXPECT_EQ(times_read_back("steps.trace", {1500, 2600, 2900, 4100}), (std::vector<uint64_t>{1000, 2000, 2000, 4000}));
}

// A Time record is written when the clock has moved a microsecond since the last one was written, not at
// every microsecond boundary the carried time crosses: events 300 ns apart get one per 1.2 us, not per 1 us.
TEST(TraceWriter, TimeRecordsFollowTheClockNotTheCarriedTime) {
  std::vector<uint64_t> at;
  for (uint64_t t = 300; t <= 30000; t += 300) at.push_back(t);
  std::vector<uint64_t> times = times_read_back("dense.trace", at);
  // Every Time record moves the time by at least a microsecond: each gives the events after it a new time.
  std::set<uint64_t> moved_to(times.begin(), times.end());
  moved_to.erase(0);
  EXPECT_EQ(moved_to.size(), 25u);
  ASSERT_EQ(times.size(), at.size());
  for (size_t i = 0; i < at.size(); ++i) {
    EXPECT_EQ(times[i] % 1000, 0u) << at[i];
    EXPECT_LE(times[i], at[i]);
    EXPECT_LT(at[i] - times[i], 2000u) << at[i];
  }
}

TEST(TraceWriter, FileEndsAtTheLastRecord) {
  std::string path = write_sample(make_temp_dir());
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  trace::Reader reader(path);
  while (reader.next()) {
  }
  EXPECT_EQ(static_cast<uint64_t>(in.tellg()), reader.stop_offset());
}

// Python codes and the tagged stack nodes that refer to them, through the writer, the reader and
// `gpumemtrace dump` (text and JSON).
TEST(TraceWriter, PythonCodesAndTaggedFramesReadBackAndDump) {
  std::string path = make_temp_dir() + "/python.trace";
  uint64_t step = format::python_frame(0, 57), main = format::python_frame(1, 90);
  {
    writer::TraceWriter writer;
    ASSERT_TRUE(writer.open(path, sample_process())) << writer.error();
    writer.write(trace::ThreadNew{1, 4242, "python3"});
    writer.write(trace::PythonCode{0, "/srv/train.py", "Trainer.step", 50});
    writer.write(trace::PythonCode{0, "/srv/train.py", "<module>", 1});
    writer.write(trace::StackNode{0, 0, format::kTruncatedFrame});
    writer.write(trace::StackNode{0, 1, main});
    writer.write(trace::StackNode{0, 2, step});
    writer.write(trace::StackNode{0, 3, 0x7f0000001234});
    writer.write(trace::Alloc{{}, Api::cudaMalloc, 0, 0x7f1000000000, 1 << 20, 4, 0, 0});
    writer.end();
  }
  trace::Reader reader(path);
  std::vector<trace::Record> records;
  while (const trace::Record* r = reader.next()) records.push_back(*r);
  ASSERT_EQ(reader.status(), trace::Status::Complete) << reader.error();
  ASSERT_EQ(records.size(), 10u);
  EXPECT_EQ(std::get<trace::PythonCode>(records.at(2)), (trace::PythonCode{0, "/srv/train.py", "Trainer.step", 50}));
  EXPECT_EQ(std::get<trace::PythonCode>(records.at(3)).index, 1u);
  EXPECT_EQ(reader.python_codes().at(1).qualname, "<module>");
  EXPECT_EQ(reader.stacks().frames(std::get<trace::Alloc>(records.at(8)).stack),
            (std::vector<uint64_t>{0x7f0000001234, step, main, format::kTruncatedFrame}));

  ProcessResult text = run_gpumemtrace({"dump", path});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  for (const char* line : {"python-code index=0 filename=\"/srv/train.py\" qualname=\"Trainer.step\" first_line=50",
                           "python-code index=1 filename=\"/srv/train.py\" qualname=\"<module>\" first_line=1",
                           "stack-node id=1 parent=0 ip=\"truncated\"",
                           "stack-node id=2 parent=1 ip=\"python code 1 line 90\"",
                           "stack-node id=3 parent=2 ip=\"python code 0 line 57\"",
                           "stack-node id=4 parent=3 ip=0x7f0000001234"})
    EXPECT_NE(text.out.find(line), std::string::npos) << line << "\n" << text.out;
  ProcessResult json = run_gpumemtrace({"dump", "--json", path});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  for (const char* member : {"\"record\":\"python-code\",\"index\":0,\"filename\":\"/srv/train.py\","
                             "\"qualname\":\"Trainer.step\",\"first_line\":50}",
                             "\"record\":\"stack-node\",\"id\":3,\"parent\":2,\"ip\":\"python code 0 line 57\"}"})
    EXPECT_NE(json.out.find(member), std::string::npos) << member << "\n" << json.out;
}

// A process whose address space is limited (`ulimit -v`, RLIMIT_AS, as some clusters set it) cannot reserve
// the 1 TiB the trace would like; it gets a smaller reservation, never no trace. The child's limit is its
// address space now plus 2 GiB: the 1 TiB to 4 GiB reservations fail, a smaller one fits.
TEST(MappedFileSink, LimitedAddressSpaceStillGetsATrace) {
  std::string path = ::testing::TempDir() + "/limited.trace";
  constexpr size_t kChunk = size_t{1} << 20, kChunks = 20;
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::ifstream status("/proc/self/status");
    std::string key;
    unsigned long long vm_kib = 0;
    while (status >> key)
      if (key == "VmSize:" && status >> vm_kib) break;
    rlimit limit{};
    limit.rlim_cur = limit.rlim_max = vm_kib * 1024 + (2ull << 30);
    if (vm_kib == 0 || setrlimit(RLIMIT_AS, &limit) != 0) _exit(3);
    writer::MappedFileSink sink;
    if (!sink.open(path, {}) || !sink.publish()) _exit(4);
    for (size_t i = 0; i < kChunks; ++i) {
      uint8_t* at = sink.reserve(kChunk);
      if (!at) _exit(5);
      std::memset(at, static_cast<int>(i), kChunk);
      sink.commit(kChunk);
    }
    sink.close();
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "3: no limit set, 4: open failed, 5: a chunk could not be written";
  struct stat st{};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(static_cast<size_t>(st.st_size), kChunk * kChunks);
  std::ifstream file(path, std::ios::binary);
  file.seekg(static_cast<std::streamoff>(kChunk * (kChunks - 1)));
  EXPECT_EQ(file.get(), static_cast<int>(kChunks - 1));
}

TEST(TraceWriter, UnwritablePathFailsCleanly) {
  writer::TraceWriter writer;
  EXPECT_FALSE(writer.open("/nonexistent-dir/x.trace", sample_process()));
  EXPECT_NE(writer.error().find("cannot create /nonexistent-dir/x.trace"), std::string::npos);
}

}  // namespace
}  // namespace gpumemtrace::test
