// The JSON contract of `gpumemtrace summary --json` (issue 4, docs/reports.md), key for key, on a trace
// with every kind of figure.
#include <gtest/gtest.h>

#include "tests/support/temp_files.h"
#include "tests/support/trace_builder.h"
#include "tests/support/subprocess.h"

namespace gpumemtrace::test {
namespace {

using format::Api;
constexpr uint64_t kMiB = 1 << 20;

TEST(SummaryJson, FollowsTheContract) {
  TraceBuilder b;
  b.process(4242, 1, 1'700'000'000'000'000'000, 64, -1, "node7", "/usr/bin/python3", {"python3", "train.py"});
  b.thread_new(1, 4242, "python3");
  b.stack_node(0, 0xA000).stack_node(1, 0xB000);  // stack 1: [0xa000], stack 2: [0xb000, 0xa000]
  b.alloc(Api::cudaMalloc, 0, 0x1000000, 10 * kMiB, 2, 1000);
  b.alloc(Api::cudaMallocAsync, 0, 0x2000000, 20 * kMiB, 1, 1000, 0x5);
  b.alloc(Api::cudaMallocManaged, 0, 0x3000000, 4096, 1, 1000);
  b.alloc(Api::cudaHostAlloc, -1, 0x4000000, 8192, 1, 1000);
  b.free(Api::cudaFreeAsync, 0x2000000, 1000, 0x5);
  b.free(Api::cudaFreeHost, 0x4000000, 1000);
  b.alloc_failed(Api::cudaMalloc, 0, 2048 * kMiB, 2, 2, 1000, 1024 * kMiB, 2048 * kMiB);
  b.end(7, 1000);
  ScratchDir scratch;
  std::string path = write_file(scratch / "contract.trace", b.bytes());

  ProcessResult r = run_process({bin_dir() + "/gpumemtrace", "summary", "--json", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::string a = R"({"function":"0xa000","file":null,"line":null,"module":null,"kind":"native"})";
  const std::string b_a = R"([{"function":"0xb000","file":null,"line":null,"module":null,"kind":"native"},)" + a + "]";
  EXPECT_EQ(r.out,
            R"({"trace":{"path":")" + path + R"(","pid":4242,"command":"python3 train.py","complete":true,"events":7},)"
            R"("devices":[{"device":0,"peak_bytes":31457280,"peak_time_ns":2000,"final_bytes":10485760,)"
            R"("allocations":2,"frees":1,"leaked_allocations":1,"failed_allocations":1}],)"
            R"("managed":{"peak_bytes":4096,"peak_time_ns":3000,"final_bytes":4096,"allocations":1,"frees":0,)"
            R"("leaked_allocations":1,"failed_allocations":0},)"
            R"("host_pinned":{"peak_bytes":8192,"peak_time_ns":4000,"final_bytes":0,"allocations":1,"frees":1,)"
            R"("leaked_allocations":0,"failed_allocations":0},)"
            R"("peak":[{"device":0,"bytes":20971520,"allocations":1,"stack":[)" + a + R"(]},)"
            R"({"device":0,"bytes":10485760,"allocations":1,"stack":)" + b_a + R"(}],)"
            R"("leaks":[{"device":0,"bytes":10485760,"allocations":1,"stack":)" + b_a + R"(}],)"
            R"("growth":[],)"
            R"("ooms":[{"device":0,"time_ns":7000,"requested_bytes":2147483648,"free_bytes":1073741824,)"
            R"("total_bytes":2147483648,"live_bytes":10485760,"api":"cudaMalloc","stack":)" + b_a + "}]}\n");
}

}  // namespace
}  // namespace gpumemtrace::test
