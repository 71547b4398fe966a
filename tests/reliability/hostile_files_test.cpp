// Files an attacker or an unlucky user puts where gpumemtrace reads and writes (docs/reliability.md, Hostile
// inputs and files): symbolic links planted at a trace's or an export's path, devices and pipes as outputs,
// FIFOs as inputs, a host name with '/' in it, a process given the pid of one that ended.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "tests/support/temp_files.h"
#include "tests/support/trace_builder.h"
#include "tests/support/trace_facts.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {

namespace fs = std::filesystem;

std::string program() { return bin_dir() + "/reliability_prog_shared_path"; }

// The workload's "wait" mode with nothing to wait for: two allocations, "TAG done" on stdout.
std::vector<std::string> quick_workload(const std::string& dir, const std::string& tag) {
  std::ofstream(dir + "/" + tag + ".go").close();
  return {program(), "wait", dir, tag, "4096"};
}

EnvChanges traced_env(EnvChanges extra) {
  extra.emplace("LD_PRELOAD", tracer_preload());
  extra.emplace("GPUMEMTRACE_ROOT_PID", std::nullopt);
  extra.emplace("GPUMEMTRACE_OUTPUT", std::nullopt);
  return sim_env(std::move(extra));
}

size_t lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

std::set<std::string> names_in(const std::string& dir) {
  std::set<std::string> names;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename().string());
  return names;
}

// Runs argv with stdout into `out` (a file), returns its exit status (128 + signal).
int run_with_stdout(const std::vector<std::string>& argv, const EnvChanges& env, const std::string& out) {
  std::vector<std::string> args = argv, vars = environment_with(env);
  auto c_argv = c_strings(args);
  auto c_env = c_strings(vars);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, (out + ".err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, c_argv[0], &actions, nullptr, c_argv.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  if (rc != 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(HostileFiles, TracesAreCreatedReadableByTheirOwnerOnly) {
  mode_t old = umask(022);
  std::string dir = make_temp_dir();
  ProcessResult run = run_process(quick_workload(dir, "mode"), traced_env({{"GPUMEMTRACE_OUTPUT_ROOT", dir + "/t.trace"}}));
  umask(old);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  struct stat st {};
  ASSERT_EQ(stat((dir + "/t.trace").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

// A symbolic link planted where the trace goes (a shared directory) is not followed: what it points to is
// untouched, nothing is created through a dangling one; one warning, and the program runs untraced.
TEST(HostileFiles, ASymbolicLinkAtTheTracePathIsNotFollowed) {
  std::string dir = make_temp_dir(), victim = dir + "/victim", link = dir + "/link.trace";
  std::string dangling = dir + "/dangling.trace", target = dir + "/created-through-the-link";
  write_file(victim, {'k', 'e', 'e', 'p'});
  fs::create_symlink(victim, link);
  fs::create_symlink(target, dangling);
  for (const std::string& path : {link, dangling}) {
    ProcessResult run = run_process(quick_workload(dir, "link"), traced_env({{"GPUMEMTRACE_OUTPUT_ROOT", path}}));
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.out, "link done\n");
    EXPECT_EQ(lines(run.err), 1u) << run.err;
    EXPECT_NE(run.err.find(path + " is a symbolic link (not followed): no trace is written through it"),
              std::string::npos)
        << run.err;
  }
  EXPECT_EQ(read_file(victim), "keep");
  EXPECT_FALSE(file_exists(target));
  EXPECT_EQ(names_in(dir), (std::set<std::string>{"victim", "link.trace", "dangling.trace", "link.go", "link.ready"}));
}

// A later choice of name (PATH.PID, taken while PATH is being written) that is a planted link is passed
// over. The test holds PATH locked as a live writer does; a shell plants the link at PATH.PID with the pid
// the program will have ($$: it execs it), then starts it with the tracer.
TEST(HostileFiles, ALinkPlantedAtTheNextNameIsPassedOver) {
  std::string dir = make_temp_dir(), path = dir + "/fixed.trace", victim = dir + "/victim";
  write_file(victim, {'k', 'e', 'e', 'p'});
  int held = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  ASSERT_GE(held, 0);
  ASSERT_EQ(flock(held, LOCK_EX | LOCK_NB), 0);
  std::string script = "v=\"$1\" p=\"$2\" t=\"$3\"; shift 3; ln -s \"$v\" \"$p.$$\" && LD_PRELOAD=\"$t\" exec \"$@\"";
  std::vector<std::string> argv{"/bin/sh", "-c", script, "sh", victim, path, tracer_preload()};
  std::vector<std::string> workload = quick_workload(dir, "next");
  argv.insert(argv.end(), workload.begin(), workload.end());
  ProcessResult run = run_process(argv, sim_env({{"GPUMEMTRACE_OUTPUT_ROOT", path},
                                                 {"GPUMEMTRACE_OUTPUT", std::nullopt},
                                                 {"GPUMEMTRACE_ROOT_PID", std::nullopt}}));
  ::close(held);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "next done\n");
  ASSERT_EQ(lines(run.err), 1u) << run.err;
  ASSERT_NE(run.err.find(path + " is being written by another process: this trace goes to " + path + "."),
            std::string::npos)
      << run.err;
  std::string moved = run.err.substr(run.err.find("goes to ") + 8);
  moved.pop_back();
  EXPECT_TRUE(moved.ends_with(".2")) << moved;
  EXPECT_EQ(read_file(victim), "keep");
  EXPECT_EQ(read_trace(moved).allocs.size(), 2u);
}

// GPUMEMTRACE_OUTPUT=/dev/stdout while stdout is a file: the trace must not be written over the program's
// output. A path that is not a regular file is refused with one warning; the program runs untraced.
TEST(HostileFiles, StdoutAsTheTracePathIsRefused) {
  std::string dir = make_temp_dir(), out = dir + "/out.txt";
  int status = run_with_stdout(quick_workload(dir, "stdout"),
                               traced_env({{"GPUMEMTRACE_OUTPUT_ROOT", std::nullopt}, {"GPUMEMTRACE_OUTPUT", "/dev/stdout"}}),
                               out);
  EXPECT_EQ(status, 0) << read_file(out + ".err");
  EXPECT_EQ(read_file(out), "stdout done\n");
  std::string err = read_file(out + ".err");
  EXPECT_EQ(lines(err), 1u) << err;
  EXPECT_NE(err.find("/dev/stdout is a symbolic link (not followed): no trace is written through it"), std::string::npos)
      << err;

  // A FIFO where the trace goes: not written into either.
  std::string fifo = dir + "/out.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ProcessResult run = run_process(quick_workload(dir, "fifo"), traced_env({{"GPUMEMTRACE_OUTPUT_ROOT", fifo}}));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "fifo done\n");
  EXPECT_EQ(lines(run.err), 1u) << run.err;
  EXPECT_NE(run.err.find(fifo + " is not a regular file: no trace is written over it"), std::string::npos) << run.err;
}

// %h is one path component whatever the host name holds. Needs a user and UTS namespace to set the name.
TEST(HostileFiles, AHostNameWithASlashStaysInItsDirectory) {
  std::string dir = make_temp_dir();
  fs::create_directory(dir + "/sub");
  // The program is started by python3 after the host name is set, with the tracer preloaded into it alone.
  std::string script =
      "import os, socket, sys\n"
      "socket.sethostname(sys.argv[1])\n"
      "env = dict(os.environ, LD_PRELOAD=sys.argv[2])\n"
      "os.execve(sys.argv[3], sys.argv[3:], env)\n";
  std::vector<std::string> argv{"unshare", "--user", "--map-root-user", "--uts", "python3", "-c", script,
                                "../escaped", tracer_preload()};
  std::vector<std::string> workload = quick_workload(dir, "host");
  argv.insert(argv.end(), workload.begin(), workload.end());
  ProcessResult probe = run_process({"unshare", "--user", "--map-root-user", "--uts", "true"});
  if (probe.exit_code != 0) GTEST_SKIP() << "no user namespaces here: " << probe.err;
  ProcessResult run = run_process(argv, sim_env({{"GPUMEMTRACE_OUTPUT", dir + "/sub/%h.trace"},
                                                 {"GPUMEMTRACE_OUTPUT_ROOT", std::nullopt},
                                                 {"GPUMEMTRACE_ROOT_PID", std::nullopt},
                                                 {"LD_PRELOAD", std::nullopt}}));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_FALSE(file_exists(dir + "/escaped.trace"));
  EXPECT_EQ(names_in(dir + "/sub"), std::set<std::string>{".._escaped.trace"});
  EXPECT_EQ(read_trace(dir + "/sub/.._escaped.trace").allocs.size(), 2u);
}

// A trace to export, made once.
const std::string& small_trace() {
  static const std::string trace = [] {
    std::string dir = make_temp_dir();
    ProcessResult run = run_process(quick_workload(dir, "export"), traced_env({{"GPUMEMTRACE_OUTPUT_ROOT", dir + "/t.trace"}}));
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return dir + "/t.trace";
  }();
  return trace;
}

TEST(HostileFiles, ExportKeepsAnExistingOutputWhenItsInputIsUnreadable) {
  std::string dir = make_temp_dir(), out = dir + "/out.csv";
  write_file(out, {'o', 'l', 'd'});
  write_file(dir + "/garbage.trace", {'n', 'o', 't', ' ', 'a', ' ', 't', 'r', 'a', 'c', 'e'});
  ProcessResult r = run_gpumemtrace({"export", "--format", "csv", "-o", out, dir + "/garbage.trace"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(read_file(out), "old");
  EXPECT_EQ(names_in(dir), (std::set<std::string>{"out.csv", "garbage.trace"})) << "no file left behind";

  // And a good input replaces it, with its side file.
  ProcessResult good = run_gpumemtrace({"export", "--format", "csv", "-o", out, small_trace()});
  EXPECT_EQ(good.exit_code, 0) << good.err;
  EXPECT_NE(read_file(out), "old");
  EXPECT_EQ(names_in(dir), (std::set<std::string>{"out.csv", "out.stacks.csv", "garbage.trace"}));
}

TEST(HostileFiles, ExportReplacesASymbolicLinkAtItsOutputInsteadOfFollowingIt) {
  std::string dir = make_temp_dir(), victim = dir + "/victim", out = dir + "/out.csv";
  write_file(victim, {'k', 'e', 'e', 'p'});
  fs::create_symlink(victim, out);
  ProcessResult r = run_gpumemtrace({"export", "--format", "csv", "-o", out, small_trace()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(victim), "keep");
  EXPECT_FALSE(fs::is_symlink(out));
  EXPECT_NE(read_file(out).find("4096"), std::string::npos) << read_file(out);
}

// An output that is not a regular file gets no files beside it (there was /dev/null.stacks.csv).
TEST(HostileFiles, AnOutputThatIsNotARegularFileGetsNoFileBesideIt) {
  bool existed = file_exists("/dev/null.stacks.csv");
  ProcessResult r = run_gpumemtrace({"export", "--format", "csv", "-o", "/dev/null", small_trace()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (!existed) {
    EXPECT_FALSE(file_exists("/dev/null.stacks.csv"));
  }
  // The same through a link in a directory of the test's own.
  std::string dir = make_temp_dir();
  fs::create_symlink("/dev/null", dir + "/out.csv");
  ProcessResult linked = run_gpumemtrace({"export", "--format", "csv", "-o", dir + "/out.csv", small_trace()});
  EXPECT_EQ(linked.exit_code, 0) << linked.err;
  EXPECT_EQ(names_in(dir), std::set<std::string>{"out.csv"});
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

// The analyzer on a FIFO, or a trace naming one, must end at once with exit 2 (or a warning) instead of
// waiting forever in open(2) for a writer. `timeout` turns a hang into exit 124.
TEST(HostileFiles, AFifoAsInputEndsWithExit2) {
  std::string dir = make_temp_dir(), fifo = dir + "/in.trace";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (std::vector<std::string> command :
       {std::vector<std::string>{"summary", fifo}, {"dump", fifo}, {"export", "--format", "folded", "-o", dir + "/o", fifo},
        {"diff", fifo, fifo}, {"leaks", fifo}}) {
    std::vector<std::string> argv{"timeout", "5", analyzer_path()};
    argv.insert(argv.end(), command.begin(), command.end());
    ProcessResult r = run_process(argv);
    EXPECT_EQ(r.exit_code, 2) << command[0] << ": " << r.err;
    EXPECT_NE(r.err.find("not a regular file"), std::string::npos) << command[0] << ": " << r.err;
  }
}

TEST(HostileFiles, AModulePathThatIsAFifoIsNotOpened) {
  std::string dir = make_temp_dir(), fifo = dir + "/libfifo.so";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  TraceBuilder b;
  b.process(4242, 1, 1, 64, -1, "host", "/bin/prog", {"prog"});
  b.modules_begin(1).module(0x400000, 0x400000, 0x500000, fifo, "");
  b.stack_node(0, 0x401000);
  b.alloc(format::Api::cudaMalloc, 0, 0x7000000, 4096, 1, 1000);
  std::string trace = write_file(dir + "/t.trace", b.bytes());
  ProcessResult r = run_process({"timeout", "5", analyzer_path(), "summary", trace});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("cannot read " + fifo + " (not a regular file)"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("libfifo.so+0x1000"), std::string::npos) << r.out;
}

TEST(HostileFiles, AFifoAsTheDebugLogIsRefusedWithOneWarning) {
  std::string dir = make_temp_dir(), fifo = dir + "/debug.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ProcessResult run = run_process(quick_workload(dir, "debug"), traced_env({{"GPUMEMTRACE_OUTPUT_ROOT", dir + "/t.trace"},
                                                    {"GPUMEMTRACE_DEBUG", fifo}}));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "debug done\n");
  EXPECT_EQ(lines(run.err), 1u) << run.err;
  EXPECT_NE(run.err.find("GPUMEMTRACE_DEBUG=" + fifo), std::string::npos) << run.err;
  EXPECT_TRUE(read_trace(dir + "/t.trace").complete());
}

// A trace names its snapshots by file name in its directory; a symbolic link there is not followed.
TEST(HostileFiles, ASnapshotNamedByATraceIsNotReadThroughASymbolicLink) {
  std::string dir = make_temp_dir();
  TraceBuilder b;
  b.process(4242, 1, 1, 64, -1, "host", "/usr/bin/python3", {"python3"});
  b.event(trace::TorchSnapshot{{}, 0, 1, 1000, 2000, "t.trace.torch-exit.pickle"}, 1000);
  std::string trace = write_file(dir + "/t.trace", b.bytes());
  write_file(dir + "/elsewhere", {0x80, 0x04, 0xff});
  fs::create_symlink(dir + "/elsewhere", dir + "/t.trace.torch-exit.pickle");
  ProcessResult r = run_gpumemtrace({"summary", trace});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "gpumemtrace: warning: " + dir +
                       "/t.trace.torch-exit.pickle: a symbolic link (not followed): the trace is analyzed without "
                       "this PyTorch snapshot\n");
}

// `gpumemtrace snapshot PID` signals only the process its trace records: a process given the pid of a traced
// one that ended (its trace begun before it started) is not sent SIGUSR1, which would end it.
TEST(HostileFiles, SnapshotDoesNotSignalAProcessItsTraceDoesNotRecord) {
  for (bool reused : {true, false}) {
    SCOPED_TRACE(reused ? "a trace begun an hour before the process" : "the process's own trace");
    std::string dir = make_temp_dir(), trace = dir + "/old.trace";
    std::vector<std::string> argv{bin_dir() + "/reliability_prog_maps_trace", trace, dir}, env =
        environment_with(traced_env({{"GPUMEMTRACE_OUTPUT_ROOT", dir + "/none"}}));
    auto c_argv = c_strings(argv);
    auto c_env = c_strings(env);
    pid_t pid = -1;
    ASSERT_EQ(posix_spawn(&pid, c_argv[0], nullptr, nullptr, c_argv.data(), c_env.data()), 0);
    // The process's own trace (dir/none) is there first; the test's trace replaces what it maps.
    auto now = std::chrono::system_clock::now().time_since_epoch();
    uint64_t now_ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count());
    TraceBuilder b;
    b.process(static_cast<uint64_t>(pid), 1, reused ? now_ns - 3600'000'000'000ull : now_ns, 64, -1, "host", "/x", {"x"});
    b.event(trace::TorchHook{{}, "2.6.0", 100000, static_cast<uint64_t>(format::TorchSignal::Taken)}, 1000);
    write_file(trace + ".new", b.bytes());
    fs::rename(trace + ".new", trace);
    for (int i = 0; i < 10000 && !file_exists(dir + "/ready"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_TRUE(file_exists(dir + "/ready"));
    fs::remove(dir + "/none");  // its own trace, unlinked: /proc/PID/maps shows it "(deleted)"

    ProcessResult r = run_gpumemtrace({"snapshot", "--wait", "0", std::to_string(pid)});
    int status = 0;
    if (reused) {
      EXPECT_EQ(r.exit_code, 2) << r.err;
      EXPECT_NE(r.err.find("it is another process given the same process id: nothing sent"), std::string::npos) << r.err;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // a signal sent would have been handled by now
      kill(pid, SIGKILL);
      ASSERT_EQ(waitpid(pid, &status, 0), pid);
    } else {
      EXPECT_EQ(r.exit_code, 0) << r.err;
      ASSERT_EQ(waitpid(pid, &status, 0), pid);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    }
    EXPECT_EQ(file_exists(dir + "/signalled"), !reused);
  }
}

}  // namespace
}  // namespace gpumemtrace::test
