// Processes that are given one trace path (docs/reliability.md, Hostile inputs and files).
//   fork N:          forks a child that makes N cudaMalloc/cudaFree pairs of 1000 + i bytes, waits for it,
//                    then makes N pairs of 2000 + i; prints the child's pid and how it ended.
//   wait DIR TAG N:  allocates N bytes, creates DIR/TAG.ready, waits (30 s at most) for DIR/TAG.go, allocates
//                    N + 1 bytes, frees both, prints "TAG done".
// The root process's trace is open from its start, so a second process given the same path meets a file a
// live process has mapped.
#include <cuda_runtime_api.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tests/support/program_check.h"

namespace {

void pairs(int count, size_t base) {
  for (int i = 0; i < count; ++i) {
    void* ptr = nullptr;
    CHECK_OK(cudaMalloc(&ptr, base + static_cast<size_t>(i)));
    CHECK_OK(cudaFree(ptr));
  }
}

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "fork") == 0) {
    int count = std::atoi(argv[2]);
    std::fflush(stdout);
    pid_t child = fork();
    if (child < 0) return 3;
    if (child == 0) {
      pairs(count, 1000);
      return 0;
    }
    int status = 0;
    if (waitpid(child, &status, 0) != child) return 4;
    pairs(count, 2000);
    std::printf("child %d: %s %d\n", static_cast<int>(child), WIFEXITED(status) ? "exit" : "signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    return 0;
  }
  if (argc == 5 && std::strcmp(argv[1], "wait") == 0) {
    std::string dir = argv[2], tag = argv[3];
    size_t size = std::strtoull(argv[4], nullptr, 10);
    void *first = nullptr, *second = nullptr;
    CHECK_OK(cudaMalloc(&first, size));
    if (FILE* ready = std::fopen((dir + "/" + tag + ".ready").c_str(), "w")) std::fclose(ready);
    for (int i = 0; i < 30000 && !exists(dir + "/" + tag + ".go"); ++i) usleep(1000);
    CHECK_OK(cudaMalloc(&second, size + 1));
    CHECK_OK(cudaFree(first));
    CHECK_OK(cudaFree(second));
    std::printf("%s done\n", tag.c_str());
    return 0;
  }
  return 2;
}
