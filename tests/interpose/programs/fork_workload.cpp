// The parent allocates, forks; the child allocates and frees its own memory; both exit normally.
#include <cuda_runtime_api.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include "tests/support/program_check.h"

int main() {
  void* parent_buffer = nullptr;
  CHECK_OK(cudaMalloc(&parent_buffer, 1111 * 1024));
  std::fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    void* child_buffer = nullptr;
    CHECK_OK(cudaMalloc(&child_buffer, 2222 * 1024));
    CHECK_OK(cudaFree(child_buffer));
    std::printf("child %d\n", static_cast<int>(getpid()));
    return 0;
  }
  int status = 0;
  waitpid(child, &status, 0);
  CHECK_OK(cudaFree(parent_buffer));
  std::printf("parent %d\n", static_cast<int>(getpid()));
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
