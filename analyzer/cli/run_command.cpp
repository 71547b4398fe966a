// gpumemtrace run [-o FILE] [--cupti | --inject] [--sim] [--sim-memory SIZE] [--sim-devices N] [--param NAME=VALUE]... [--pack]
//                 [--] CMD ARGS...
// Runs CMD with the tracer preloaded (or, with --inject, named by CUDA_INJECTION64_PATH) and exits as CMD
// did. The environment is the tracer's contract: LD_PRELOAD or CUDA_INJECTION64_PATH, GPUMEMTRACE_ROOT_PID,
// GPUMEMTRACE_OUTPUT_ROOT, (unless set) GPUMEMTRACE_OUTPUT, GPUMEMTRACE_CUPTI with --cupti, GPUMEMTRACE_PARAMS with --param.
#include <fcntl.h>
#include <fmt/core.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>

#include "analyzer/cli/child_process.h"
#include "analyzer/cli/command.h"
#include "analyzer/cli/command_line.h"
#include "analyzer/cli/progress.h"
#include "analyzer/cli/top_command.h"
#include "analyzer/cli/tracer_layout.h"
#include "common/clock.h"
#include "common/output_pattern.h"
#include "common/run_params.h"
#include "common/size_units.h"
#include "trace/packed/pack.h"
#include "trace/reader/reader.h"
#include "common/terminal_text.h"

namespace gpumemtrace::cli {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kRunHelp =
    "usage: gpumemtrace run [-o FILE] [--cupti | --inject] [--sim] [--sim-memory SIZE] [--sim-devices N]\n"
    "                       [--param NAME=VALUE]... [--pack] [--top] [--] CMD [ARGS...]\n"
    "\n"
    "Runs CMD with the tracer preloaded and records every GPU memory allocation and free of it, and of\n"
    "the processes it starts, with their call stacks. Children's traces are written beside the top\n"
    "process's trace, named after it with their pid appended, unless GPUMEMTRACE_OUTPUT gives another\n"
    "pattern. In -o FILE and GPUMEMTRACE_OUTPUT, %p is the pid, %h the host name, %r the rank (RANK,\n"
    "OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID; 0 when none is set) and %% a percent sign:\n"
    "`srun gpumemtrace run -o 'mem-%r.trace' -- python train.py` writes one trace per rank. A trace never\n"
    "goes over a file another live process is writing, nor through a symbolic link: it then goes to FILE.PID\n"
    "(one line on stderr says so), and this command prints where it went.\n"
    "Everything from CMD on is CMD's own, options included.\n"
    "\n"
    "--cupti adds NVIDIA's CUPTI to the preloaded hooks: memory-pool sizes and release thresholds, and\n"
    "allocations the hooks cannot see. --inject traces through CUPTI alone, without LD_PRELOAD: the CUDA\n"
    "driver loads the tracer at cuInit (CUDA_INJECTION64_PATH); the simulated device does not. Without a\n"
    "GPU or driver CUPTI says one line on stderr and CMD runs as it would without it (docs/cupti.md: modes).\n"
    "\n"
    "--param batch=32 records a named parameter of the run in the trace (GPUMEMTRACE_PARAMS, added to what it\n"
    "already holds); reports show them, and `gpumemtrace fit` takes the batch size from `batch`.\n"
    "\n"
    "--pack packs the trace once CMD has ended (gpumemtrace pack): every command reads it as before, in a fifth of\n"
    "the bytes or less. A trace that cannot be packed stays as it was written, and one warning says why.\n"
    "\n"
    "--top shows `gpumemtrace top` on CMD while it runs; CMD's output then goes to TRACE.out (its input is\n"
    "/dev/null). q leaves the view and CMD runs on; Ctrl-C reaches CMD, and its end leaves the last frame.\n";

constexpr std::string_view kRunExitStatus =
    "Exit status: CMD's own once it has started (128 + the signal if a signal ended it); before that, 127\n"
    "when CMD is not found and 126 when it cannot be executed (as in a shell), 1 for a bad command line or\n"
    "when the tracer library or the simulated device is missing, 3 for a system error.\n";

struct RunOptions {
  std::optional<fs::path> output;
  bool sim = false;
  bool cupti = false;
  bool inject = false;
  bool top = false;
  bool pack = false;
  std::optional<std::string> sim_memory;
  std::optional<std::string> sim_devices;
  std::vector<RunParam> params;
  std::vector<std::string> command;
};

// nullopt when --help was asked for.
std::optional<RunOptions> parse_options(std::span<const std::string> args) {
  CommandLine line(kRunHelp, kRunExitStatus);
  RunOptions options;
  std::optional<std::string> output;
  line.option("-o,--output", "FILE", output,
              "the trace of CMD's process, %p %h %r expanded (default: gpumemtrace-PID.trace here)");
  line.flag("--cupti", options.cupti, "also record CUPTI's memory and memory-pool activity (GPUMEMTRACE_CUPTI=1)");
  line.flag("--inject", options.inject,
            "trace through CUPTI alone, loaded by the CUDA driver (CUDA_INJECTION64_PATH), not LD_PRELOAD");
  line.flag("--sim", options.sim, "run on the simulated CUDA device instead of a GPU");
  line.option("--sim-memory", "SIZE", options.sim_memory, "memory per simulated device, e.g. 16GiB (implies --sim)");
  line.option("--sim-devices", "N", options.sim_devices, "number of simulated devices (implies --sim)");
  std::vector<std::string> params;
  line.repeated("--param", "NAME=VALUE", params, "a named parameter of the run, recorded in the trace; repeatable");
  line.flag("--pack", options.pack, "pack the trace once CMD has ended (gpumemtrace pack): a fifth of the bytes or less");
  line.flag("--top", options.top, "show the live view (gpumemtrace top) while CMD runs; its output goes to TRACE.out");
  line.rest("command to run", options.command);
  if (!line.parse(args)) return std::nullopt;

  for (const std::string& text : params) {
    std::string error;
    std::optional<RunParam> param = parse_param(text, &error);
    if (!param) throw UsageError("--param " + error);
    options.params.push_back(std::move(*param));
  }

  if (output) {
    if (output->empty()) throw UsageError("-o needs a file name");
    options.output = fs::absolute(*output);
    std::error_code error;
    if (fs::is_directory(*options.output, error)) throw UsageError("-o " + *output + " is a directory");
  }
  if (options.sim_memory && !parse_size(*options.sim_memory))
    throw UsageError("--sim-memory " + *options.sim_memory + " is not a size (e.g. 16GiB, 512M)");
  const std::optional<std::string>& devices = options.sim_devices;
  if (devices && (devices->empty() || devices->size() > 4 || devices->find_first_not_of("0123456789") != std::string::npos))
    throw UsageError("--sim-devices " + *devices + " is not a number of devices");
  options.sim = options.sim || options.sim_memory || options.sim_devices;
  if (options.top && !(isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)))
    throw UsageError("--top needs a terminal (`gpumemtrace top --once PID` prints one frame without)");
  return options;
}

std::string prepend_path(const std::string& entry, const char* list) {
  return list && *list ? entry + ":" + list : entry;
}

// The tracer expands %p, %h, %r and %% in GPUMEMTRACE_OUTPUT: a literal % in the path must be doubled.
std::string escape_pattern(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == '%') out += '%';
    out += c;
  }
  return out;
}

std::optional<fs::file_time_type> modification_time(const fs::path& path) {
  std::error_code error;
  fs::file_time_type time = fs::last_write_time(path, error);
  return error ? std::nullopt : std::optional(time);
}

// The trace process `pid` wrote, asked to go to `root`. The tracer puts it elsewhere when `root` is taken (a
// live process writes it: common/output_pattern.h), so the one of those names whose Process record is of
// that pid, begun since `since_ns`, is it. Else `root` if it changed during the run (`before`: its time
// before, so a stale file is not taken for the new trace).
std::optional<fs::path> written_trace(const fs::path& root, pid_t pid, uint64_t since_ns,
                                      std::optional<fs::file_time_type> before) {
  for (const std::string& candidate : trace_path_choices(root.string(), pid)) {
    try {
      trace::Reader reader(candidate);
      const trace::Record* first = reader.next();
      const auto* process = first ? std::get_if<trace::Process>(first) : nullptr;
      if (process && process->pid == static_cast<uint64_t>(pid) && process->start_wall_ns >= since_ns) return candidate;
    } catch (const trace::OpenError&) {
    }
  }
  std::optional<fs::file_time_type> after = modification_time(root);
  return after && after != before ? std::optional(root) : std::nullopt;
}

// --top: CMD's output goes to a file and its input is /dev/null, so that the view has the terminal.
void leave_terminal(const std::string& output) {
  int null_input = open("/dev/null", O_RDONLY);
  int out = open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (null_input < 0 || out < 0) throw std::runtime_error("cannot redirect");  // run_child: exit 127
  dup2(null_input, STDIN_FILENO);
  dup2(out, STDOUT_FILENO);
  dup2(out, STDERR_FILENO);
}

void report_trace(const std::optional<fs::path>& trace, bool inject) {
  std::error_code error;
  if (!trace && inject)
    fmt::print(stderr, "gpumemtrace: no trace was written: no CUDA driver loaded the tracer (--inject needs one)\n");
  else if (!trace)
    fmt::print(stderr, "gpumemtrace: no trace was written (see warnings above)\n");
  else
    fmt::print(stderr, "gpumemtrace: trace written to {} ({})\n", terminal_text(trace->string()), format_size(fs::file_size(*trace, error)));
}

// --pack: the finished trace packed; when it cannot be, it stays as written and one warning says why.
void pack_trace(const fs::path& trace) {
  try {
    packed::PackStats stats;
    {
      Progress progress(trace.string());
      stats = packed::pack_file(trace.string(), packed::kDefaultLevel, std::ref(progress));
    }
    double per_event = stats.events ? static_cast<double>(stats.packed_bytes) / static_cast<double>(stats.events) : 0.0;
    fmt::print(stderr, "gpumemtrace: trace packed into {} ({:.2f} bytes per event)\n", format_size(stats.packed_bytes),
               per_event);
  } catch (const std::exception& error) {
    print_warning(std::string("the trace was not packed (it stays as written): ") + error.what());
  }
}

int run_main(std::span<const std::string> args) {
  std::optional<RunOptions> options = parse_options(args);
  if (!options) return kExitOk;

  fs::path library = tracer_library_path();
  std::error_code error;
  if (!fs::exists(library, error)) {
    fmt::print(stderr, "gpumemtrace: the tracer library is missing: {} (build or reinstall gpumemtrace)\n",
               library.string());
    return kExitUsage;
  }
  std::optional<fs::path> sim_dir;
  if (options->sim && !(sim_dir = find_sim_dir())) {
    auto candidates = sim_dir_candidates();
    fmt::print(stderr, "gpumemtrace: the simulated device is not installed (looked in {} and {})\n",
               candidates[0].string(), candidates[1].string());
    return kExitUsage;
  }

  if (options->inject && options->sim)
    fmt::print(stderr, "gpumemtrace: --inject: the simulated device does not load CUDA_INJECTION64_PATH; "
                       "CMD runs untraced\n");

  fs::path cwd = fs::current_path();
  auto root_trace = [&](pid_t pid) {
    return options->output ? fs::path(expand_output_pattern(options->output->string(), pid))
                           : cwd / fmt::format("gpumemtrace-{}.trace", pid);
  };
  // A file already at the trace's path must not pass for the new trace. A pattern with %p names a new file.
  uint64_t started_ns = clock_ns(CLOCK_REALTIME);
  bool names_pid = options->output && options->output->string().find("%p") != std::string::npos;
  std::optional<fs::file_time_type> before =
      options->output && !names_pid ? modification_time(root_trace(0)) : std::nullopt;
  const char* output_pattern = getenv("GPUMEMTRACE_OUTPUT");
  bool set_pattern = !output_pattern || !*output_pattern;

  ChildResult child = run_child(options->command, [&](pid_t self) {
    std::string root = root_trace(self).string();
    // The simulated runtime is preloaded as well as first on the library path: a library whose DT_RPATH names
    // NVIDIA's libcudart.so.13 (PyTorch's do) would find that one first, and it cannot run on the simulated driver.
    std::string preload = getenv("LD_PRELOAD") ? getenv("LD_PRELOAD") : "";
    if (sim_dir) preload = prepend_path((*sim_dir / "libcudart.so.13").string(), preload.c_str());
    if (options->inject)
      setenv("CUDA_INJECTION64_PATH", library.c_str(), 1);
    else
      preload = prepend_path(library.string(), preload.c_str());
    if (!preload.empty()) setenv("LD_PRELOAD", preload.c_str(), 1);
    if (options->cupti) setenv("GPUMEMTRACE_CUPTI", "1", 1);
    setenv("GPUMEMTRACE_ROOT_PID", std::to_string(self).c_str(), 1);
    setenv("GPUMEMTRACE_OUTPUT_ROOT", root.c_str(), 1);
    if (set_pattern) setenv("GPUMEMTRACE_OUTPUT", (escape_pattern(root) + ".%p").c_str(), 1);
    if (sim_dir) {
      setenv("LD_LIBRARY_PATH", prepend_path(sim_dir->string(), getenv("LD_LIBRARY_PATH")).c_str(), 1);
      // PyTorch's expandable segments otherwise ask NVIDIA's management library (libnvidia-ml.so.1, which the
      // simulated device does not have) whether handles can be shared over a fabric, and crash without it; the
      // simulated device shares nothing between processes anyway. A value the user set is kept.
      setenv("TORCH_CUDA_EXPANDABLE_SEGMENTS_IPC", "0", 0);
    }
    if (options->sim_memory) setenv("GPUMEMTRACE_SIM_MEMORY", options->sim_memory->c_str(), 1);
    if (options->sim_devices) setenv("GPUMEMTRACE_SIM_DEVICES", options->sim_devices->c_str(), 1);
    if (!options->params.empty()) {
      std::string error;
      const char* set = getenv(kParamsVariable);
      std::string list = set && parse_params(set, &error) ? std::string(set) : std::string();
      list += (list.empty() ? "" : ",") + join_params(options->params);
      setenv(kParamsVariable, list.c_str(), 1);
    }
    if (options->top) leave_terminal(root + ".out");
  }, [&](pid_t child) {
    if (!options->top) return;
    TopOptions top;
    top.selection = top_selection();
    top_of_child(child, top, [&]() -> std::optional<std::string> {
      std::optional<fs::path> trace = written_trace(root_trace(child), child, started_ns, before);
      return trace ? std::optional(trace->string()) : std::nullopt;
    });
  });
  if (child.start_error) {
    fmt::print(stderr, "gpumemtrace: cannot run {}: {}\n", terminal_text(options->command[0]), std::strerror(child.start_error));
    return child.start_error == ENOENT ? 127 : 126;
  }
  std::optional<fs::path> trace = written_trace(root_trace(child.pid), child.pid, started_ns, before);
  report_trace(trace, options->inject);
  if (options->pack && trace) pack_trace(*trace);
  if (options->top) fmt::print(stderr, "gpumemtrace: the output of {} is in {}.out\n", terminal_text(options->command[0]),
                               terminal_text(root_trace(child.pid).string()));
  return child.exit_code;
}

}  // namespace

extern const Command run_command;
const Command run_command{"run", "run a program with the tracer and write a trace", run_main};

}  // namespace gpumemtrace::cli
