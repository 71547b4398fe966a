#include "interpose/recording/recorder.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <mutex>
#include <unordered_map>

#include "common/clock.h"
#include "common/run_params.h"
#include "interpose/base/config.h"
#include "interpose/base/debug_log.h"
#include "interpose/base/loader_walk.h"
#include "interpose/base/spinning_mutex.h"
#include "interpose/recording/event_clock.h"
#include "interpose/recording/stack_interner.h"
#include "interpose/stacks/mixed_stack.h"
#include "interpose/stacks/module_map.h"
#include "trace/writer/trace_writer.h"

namespace gpumemtrace::interpose {

using writer::ProcessInfo;
using writer::TraceWriter;
using writer::monotonic_ns;

namespace {

enum class State {
  NotOpened,  // traced, the file is created on the first event
  Open,
  Off,        // not traced, finished, or the trace could not be written
};

// Identifies a thread within the current trace; `generation` changes when a forked child starts over.
struct ThreadSlot {
  uint64_t generation = 0;
  uint64_t index = 0;
};

thread_local ThreadSlot t_thread __attribute__((tls_model("initial-exec")));
thread_local ClockReading t_clock_reading __attribute__((tls_model("initial-exec")));

class Recorder {
 public:
  Recorder() {
    config_ = Config::from_environment();
    configure_debug_log(config_.debug_log.empty() ? nullptr : config_.debug_log.c_str());
    long pid = getpid();
    if (config_.root_pid == 0) {
      // Plain LD_PRELOAD: this process is the root; children see it through the environment.
      config_.root_pid = pid;
      setenv("GPUMEMTRACE_ROOT_PID", std::to_string(pid).c_str(), 1);
    }
    decide_for_process(pid);
    guard_walks_across_fork();  // before this lock's handlers: the recorder walks under it
    pthread_atfork([] { instance().mutex_.lock(); }, [] { instance().mutex_.unlock(); },
                   [] { instance().after_fork_in_child(); });
  }

  static Recorder& instance() {
    // Never destroyed: hooks may run during and after static destruction.
    static Recorder* recorder = new Recorder();
    return *recorder;
  }

  bool enabled() const { return state_ != State::Off; }
  const Config& config() const { return config_; }
  bool is_root() const { return getpid() == config_.root_pid; }

  // Runs `write` with the writer ready and this thread's records attributed; the stack is interned first.
  // What needs no lock (the clock, a native stack's hash) is done before taking it; Python frames get
  // their code index under the lock.
  void record(CapturedStack& stack, const EventWriter& write) {
    uint64_t hash = stack.python ? 0 : StackInterner::hash(stack.frames, stack.depth);
    uint64_t now = clock_.event_time_ns(t_clock_reading, writer_.next_time_record_clock_ns());
    std::lock_guard lock(mutex_);
    if (!ready_locked()) return;
    attribute_thread_locked();
    uint64_t id = intern_captured_locked(stack, hash);
    set_source_locked(format::CaptureSource::Interposition);
    writer_.set_event_time(now);
    write(writer_, id);
    writer_.set_event_time(0);
    if (writer_.failed()) fail_locked();
  }

  CallOrigin origin_of(CapturedStack& stack) {
    uint64_t hash = stack.python ? 0 : StackInterner::hash(stack.frames, stack.depth);
    std::lock_guard lock(mutex_);
    if (!ready_locked()) return {};
    attribute_thread_locked();
    uint64_t id = intern_captured_locked(stack, hash);
    if (writer_.failed()) fail_locked();
    return CallOrigin{t_thread.index, static_cast<uint32_t>(id), stacks_epoch_, generation_};
  }

  void record_from(format::CaptureSource source, const CallOrigin& origin, uint64_t time_ns, const EventWriter& write) {
    std::lock_guard lock(mutex_);
    if (!ready_locked()) return;
    bool same_trace = origin.thread != 0 && origin.generation == generation_;
    if (same_trace && current_thread_ != origin.thread) {
      writer_.write(trace::ThreadSwitch{static_cast<uint32_t>(origin.thread)});
      current_thread_ = origin.thread;
    } else if (!same_trace) {
      attribute_thread_locked();
    }
    uint64_t stack = same_trace && origin.stacks_epoch == stacks_epoch_ ? origin.stack : 0;
    set_source_locked(source);
    writer_.set_event_time(time_ns);
    write(writer_, stack);
    writer_.set_event_time(0);
    if (writer_.failed()) fail_locked();
  }

  void capture(CapturedStack& stack) const {
    if (!config_.stacks) return;
    if (python::PythonStacks* python = config_.python_stacks ? process_python().stacks : nullptr)
      capture_mixed_stack(stack, config_.stack_depth, *python);
    else
      stack.depth = capture_stack(stack.frames, config_.stack_depth);
  }

  void sync() {
    std::lock_guard lock(mutex_);
    if (state_ == State::Open) writer_.sync();
  }

  void open_now() {
    std::lock_guard lock(mutex_);
    ready_locked();
  }

  std::string trace_path() {
    std::lock_guard lock(mutex_);
    return state_ == State::Open ? absolute_path_ : std::string();
  }

  void finish() {
    // A vfork child shares our memory: closing the trace there would close the parent's.
    if (getpid() != pid_) return;
    std::lock_guard lock(mutex_);
    if (state_ == State::Open) {
      writer_.end();
      debug_log("trace complete: %s", path_.c_str());
    }
    state_ = State::Off;
  }

 private:
  void decide_for_process(long pid) {
    pid_ = pid;
    bool root = pid == config_.root_pid;
    if (!root && !config_.follow_children) {
      state_ = State::Off;
      debug_log("not tracing pid %ld (GPUMEMTRACE_FOLLOW_CHILDREN=0)", pid);
      return;
    }
    path_ = root && !config_.output_root.empty() ? config_.output_root
                                                   : expand_output_pattern(config_.output_pattern, pid);
    state_ = State::NotOpened;
  }

  bool ready_locked() {
    if (state_ == State::Open) return true;
    if (state_ == State::Off) return false;
    if (!writer_.open(path_, process_info())) {
      warn("cannot write the trace (%s); the program continues untraced", writer_.error().c_str());
      state_ = State::Off;
      return false;
    }
    // The path asked for may be taken (another live process writes it: never truncated under it).
    if (!writer_.notice().empty()) warn("%s", writer_.notice().c_str());
    path_ = writer_.path();
    debug_log("tracing into %s", path_.c_str());
    state_ = State::Open;
    // The program may change its directory later; the path is resolved while it is still the one it was.
    if (char* resolved = realpath(path_.c_str(), nullptr)) {
      absolute_path_ = resolved;
      free(resolved);
    } else {
      absolute_path_ = path_;
    }
    source_ = format::CaptureSource::Interposition;
    counters_ = load_counters();
    write_modules_locked();
    return true;
  }

  void fail_locked() {
    warn("the trace %s could not be extended (%s); the program continues untraced", path_.c_str(),
         writer_.error().c_str());
    writer_.abandon();
    state_ = State::Off;
  }

  // A captured stack's id in the trie; `hash`: its native frames' (computed before the lock), unused for
  // a mixed stack, whose Python frames get their code index here.
  uint64_t intern_captured_locked(CapturedStack& stack, uint64_t hash) {
    if (stack.python) {
      stack.depth = resolve_python_frames_locked(stack);
      hash = StackInterner::hash(stack.frames, stack.depth);
    }
    return intern_locked(stack.frames, stack.depth, hash);
  }

  void set_source_locked(format::CaptureSource source) {
    if (source == source_) return;
    writer_.write(trace::Source{static_cast<uint64_t>(source)});
    source_ = source;
  }

  void attribute_thread_locked() {
    if (t_thread.generation != generation_ || t_thread.index == 0) {
      t_thread = {generation_, ++thread_count_};
      char name[64] = {};
      pthread_getname_np(pthread_self(), name, sizeof name);
      writer_.write(trace::ThreadNew{static_cast<uint32_t>(t_thread.index), static_cast<uint64_t>(syscall(SYS_gettid)), name});
      current_thread_ = t_thread.index;
    }
    if (current_thread_ != t_thread.index) {
      writer_.write(trace::ThreadSwitch{static_cast<uint32_t>(t_thread.index)});
      current_thread_ = t_thread.index;
    }
  }

  uint64_t intern_locked(const uintptr_t* frames, size_t depth, uint64_t hash) {
    bool checked = false, reset = false;
    auto write_node = [&](uint64_t parent, uint64_t ip) {
      writer_.write(trace::StackNode{0, static_cast<uint32_t>(parent), ip});
    };
    auto new_node = [&](uint64_t parent, uint64_t ip) {
      if (!checked) {
        checked = true;
        reset = refresh_modules_locked();
      }
      write_node(parent, ip);
    };
    uint64_t stack = trie_.intern(frames, depth, hash, new_node);
    if (reset) {
      // A library was unloaded: cached addresses may now mean other code, so the trie starts over.
      trie_.clear();
      ++stacks_epoch_;
      writer_.write(trace::StacksReset{});
      stack = trie_.intern(frames, depth, write_node);
    }
    return stack;
  }

  // Gives each pending Python frame its code index (format::python_frame); returns the new depth.
  [[gnu::noinline]] size_t resolve_python_frames_locked(CapturedStack& stack) {
    size_t n = 0;
    for (size_t i = 0; i < stack.depth; ++i) {
      uintptr_t frame = stack.frames[i];
      if (is_pending_python_frame(frame)) {
        const python::PythonFrame& walked = stack.walk[pending_python_index(frame)];
        uint32_t code = python_code_locked(*stack.python, walked.code);
        if (code == kNoPythonCode) continue;
        frame = format::python_frame(code, walked.line > 0 ? static_cast<uint32_t>(walked.line) : 0);
      }
      stack.frames[n++] = frame;
    }
    return n;
  }

  // The index of a code object of a frame this thread is running, written as a PythonCode record the
  // first time. An address seen before counts only if it still holds the same code object (a code object
  // freed and another allocated at its address get an index of their own). A direct-mapped cache answers
  // the frames of a steady loop without a hash table lookup.
  uint32_t python_code_locked(python::PythonStacks& python, const void* code) {
    auto key = reinterpret_cast<uintptr_t>(code);
    KnownCode& cached = python_code_cache_[(key >> 4) * 0x9E3779B97F4A7C15ull >> (64 - kPythonCodeCacheBits)];
    if (cached.code == code && python.same_code(code, cached.identity)) return cached.index;
    auto [it, added] = python_codes_.try_emplace(code);
    if (added || !python.same_code(code, it->second.identity)) {
      if (python_code_count_ == format::kPythonCodes) {  // the format's limit: the frame is left out
        if (added) python_codes_.erase(it);
        return kNoPythonCode;
      }
      python::CodeInfo info = python.describe(code);
      it->second = KnownCode{code, python_code_count_++, info.identity};
      writer_.write(trace::PythonCode{it->second.index, info.filename, info.qualname,
                                      static_cast<uint64_t>(info.first_line > 0 ? info.first_line : 0)});
    }
    cached = it->second;
    return cached.index;
  }

  // Called before the first new stack node of an event: new code addresses may come from new libraries.
  bool refresh_modules_locked() {
    LoadCounters now = load_counters();
    if (now == counters_) return false;
    bool unloaded = now.subs != counters_.subs;
    counters_ = now;
    write_modules_locked();
    return unloaded;
  }

  void write_modules_locked() {
    writer_.write(trace::ModulesBegin{++module_generation_});
    for (const trace::ModuleInfo& module : loaded_modules()) writer_.write(module.record());
  }

  void after_fork_in_child() {
    mutex_.unlock();
    writer_.abandon();  // the mapping is the parent's file
    trie_.clear();
    ++stacks_epoch_;
    python_codes_.clear();
    python_code_cache_.fill(KnownCode{});
    python_code_count_ = 0;
    ++generation_;
    thread_count_ = current_thread_ = 0;
    module_generation_ = 0;
    decide_for_process(getpid());
  }

  ProcessInfo process_info() const {
    ProcessInfo info;
    info.pid = static_cast<uint64_t>(getpid());
    info.ppid = static_cast<uint64_t>(getppid());
    info.start_wall_ns = clock_ns(CLOCK_REALTIME);
    info.max_stack_depth = config_.stacks ? config_.stack_depth : 0;
    info.rank = current_rank();
    info.local_rank = current_local_rank();
    if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) info.visible_devices = visible;
    if (const char* list = std::getenv(kParamsVariable)) {
      std::string error;
      if (std::optional<std::vector<RunParam>> params = parse_params(list, &error))
        for (RunParam& p : *params) info.params.emplace_back(std::move(p.name), std::move(p.value));
      else
        warn("%s is not name=value[,name=value...] (%s): no parameter recorded", kParamsVariable, error.c_str());
    }
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    info.hostname = host;
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) info.executable.assign(exe, static_cast<size_t>(n));
    std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
    for (size_t start = 0; start < all.size();) {
      size_t end = all.find('\0', start);
      if (end == std::string::npos) end = all.size();
      info.argv.push_back(all.substr(start, end - start));
      start = end + 1;
    }
    return info;
  }

  Config config_;
  long pid_ = 0;  // the process this recorder writes for
  std::string path_;
  std::string absolute_path_;  // of the open trace
  SpinningMutex mutex_;
  State state_ = State::Off;
  TraceWriter writer_;
  EventClock<HardwareClockSources> clock_{HardwareClockSources{}, time_stamp_counter_usable()};
  StackInterner trie_;
  LoadCounters counters_;
  uint64_t module_generation_ = 0;
  uint64_t generation_ = 1;
  uint64_t thread_count_ = 0;
  uint64_t current_thread_ = 0;
  uint64_t stacks_epoch_ = 1;
  format::CaptureSource source_ = format::CaptureSource::Interposition;
  // The Python code objects written so far.
  struct KnownCode {
    const void* code = nullptr;
    uint32_t index = 0;
    python::CodeIdentity identity;
  };
  static constexpr uint32_t kNoPythonCode = UINT32_MAX;
  static constexpr unsigned kPythonCodeCacheBits = 9;
  std::unordered_map<const void*, KnownCode> python_codes_;  // by code object address
  std::array<KnownCode, size_t{1} << kPythonCodeCacheBits> python_code_cache_{};
  uint32_t python_code_count_ = 0;
};

}  // namespace

bool recording_enabled() { return Recorder::instance().enabled(); }

const Config& tracer_config() { return Recorder::instance().config(); }

void record_event(const EventWriter& writer, bool with_stack) {
  BusyGuard busy;
  if (busy.nested()) return;
  Recorder& recorder = Recorder::instance();
  if (!recorder.enabled()) return;
  CapturedStack stack;
  if (with_stack) recorder.capture(stack);
  recorder.record(stack, writer);
}

CallOrigin capture_call_origin() {
  BusyGuard busy;
  Recorder& recorder = Recorder::instance();
  if (busy.nested() || !recorder.enabled()) return {};
  CapturedStack stack;
  recorder.capture(stack);
  return recorder.origin_of(stack);
}

void record_event_from(format::CaptureSource source, const CallOrigin& origin, uint64_t time_ns,
                       const EventWriter& write) {
  BusyGuard busy;
  if (busy.nested()) return;
  Recorder& recorder = Recorder::instance();
  if (recorder.enabled()) recorder.record_from(source, origin, time_ns, write);
}

std::string trace_path() {
  BusyGuard busy;
  return Recorder::instance().trace_path();
}

void sync_trace() {
  BusyGuard busy;
  Recorder::instance().sync();
}

void start_recorder() {
  BusyGuard busy;
  Recorder& recorder = Recorder::instance();
  // The root process always gets a trace, even if it never allocates; children only when they do.
  if (recorder.enabled() && recorder.is_root()) recorder.open_now();
}

void finish_recorder() {
  BusyGuard busy;
  Recorder::instance().finish();
}

}  // namespace gpumemtrace::interpose
