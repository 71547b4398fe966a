// A process that maps a trace it did not write, as a process given the pid of a traced one that ended may
// map a file of its name, and takes SIGUSR1. Usage: maps_trace_workload TRACE DIR. Waits (10 s at most) for
// TRACE, maps it, creates DIR/ready, then waits (10 s at most) for SIGUSR1 and creates DIR/signalled if it
// came. Exits 0.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace {
volatile sig_atomic_t g_signalled = 0;

void on_usr1(int) { g_signalled = 1; }

void touch(const std::string& path) {
  if (FILE* file = std::fopen(path.c_str(), "w")) std::fclose(file);
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  std::string dir = argv[2];
  signal(SIGUSR1, on_usr1);
  int fd = -1;
  for (int i = 0; i < 10000 && fd < 0; ++i) {
    fd = open(argv[1], O_RDONLY | O_CLOEXEC);
    if (fd < 0) usleep(1000);
  }
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0) return 3;
  void* mapped = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
  if (mapped == MAP_FAILED) return 4;
  touch(dir + "/ready");
  for (int i = 0; i < 10000 && !g_signalled; ++i) usleep(1000);
  if (g_signalled) touch(dir + "/signalled");
  return 0;
}
