// gpumemtrace top [--interval SECONDS] [--once [--json]] PID|TRACE: reads the trace as it is written, never
// asking the tracer for anything, and shows its summary figures with the live extras (report/live_model.h).
#include "analyzer/cli/top_command.h"

#include <fmt/core.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "analyzer/cli/command.h"
#include "analyzer/cli/command_line.h"
#include "analyzer/cli/standard_output.h"
#include "analyzer/cli/top_screen.h"
#include "analyzer/cli/traced_process.h"
#include "analyzer/render/live_renderers.h"
#include "analyzer/symbolize/symbolizer.h"
#include "common/terminal_text.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kTopHelp =
    "usage: gpumemtrace top [--interval SECONDS] [--once [--json]] [options] PID|TRACE\n"
    "\n"
    "A live view of a traced process: reads its trace as the tracer writes it (the file the process maps;\n"
    "the tracer does nothing more for it) and redraws every second: the process's state, the phase open\n"
    "now and the step it is in, what the last ended step left live by stack, per device the live and peak\n"
    "memory, the other processes NVML listed, the stacks holding the most now, out-of-memory failures and\n"
    "the forecast. With the PyTorch hook on, PyTorch's allocated bytes show beside its reserved segments\n"
    "once the trace names a snapshot of its allocator (`gpumemtrace snapshot PID` takes one).\n"
    "TRACE: a trace file, read again every interval until its process finishes it. Every frame reads the\n"
    "whole trace again (0.47 s for a trace of 500,000 events). Keys: q quits (so does Ctrl-C); the arrows,\n"
    "space and the page keys scroll. When the process ends, its last frame stays on the terminal. --once\n"
    "prints one frame as text (or with --json, {\"summary\": what `summary --json` prints, \"live\": ...}) and\n"
    "needs no terminal. docs/top.md has the details.\n";

constexpr std::string_view kTopExitStatus =
    "Exit status: 0 after q, Ctrl-C, the process's end or one frame; 1 for a bad command line (or no terminal\n"
    "without --once); 2 when there is nothing to show: no such process, a process not traced or without a\n"
    "trace, a file that is not a readable trace (one line on stderr); 3 for a system error.\n";

volatile sig_atomic_t g_interrupted = 0;
void on_interrupt(int) { g_interrupted = 1; }

// Attaching failed: "gpumemtrace top: MESSAGE", exit 2.
class AttachError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The trace process `pid` writes, nullopt while it has none (no GPU allocation yet). Throws AttachError.
// `tracer_may_come`: the process has just been started by `run`, and may not have loaded the tracer yet.
std::optional<std::string> trace_of_process(long pid, bool tracer_may_come) {
  int error = 0;
  std::optional<TracedProcess> process = read_maps(pid, error);
  if (!process) {
    if (error == ENOENT) throw AttachError(fmt::format("there is no process {}", pid));
    throw AttachError(fmt::format("cannot read /proc/{}/maps: {}", pid, std::strerror(error)));
  }
  if (!process->tracer_loaded && !tracer_may_come)
    throw AttachError(fmt::format("process {} is not traced by gpumemtrace (libgpumemtrace.so is not loaded in it)", pid));
  if (!process->trace) return std::nullopt;
  try {
    if (std::optional<std::string> why = not_its_trace(pid, *process->trace, read_trace_of(*process->trace)))
      throw AttachError(*why);
  } catch (const trace::OpenError& open_error) {
    throw AttachError(fmt::format("{}: {}", *process->trace, open_error.what()));
  }
  return process->trace;
}

// What the view is attached to.
struct Target {
  std::optional<long> pid;
  std::optional<HeldProcess> held;  // with pid
  std::optional<std::string> trace;  // none while the process has written none
  bool tracer_may_come = false;
  std::function<std::optional<std::string>()> written_trace;  // run --top: where the ended child's trace went
};

// A trace that cannot be read as one: "gpumemtrace: PATH: MESSAGE", exit 2.
struct TraceError {
  std::string path;
  std::string message;
};

// One frame: the trace read from the start. Throws TraceError, SelectionError.
report::LiveView read_frame(const Target& target, bool ended, const TopOptions& options,
                            const symbolize::Symbolizer::Warn& warn) {
  analysis::Analysis analysis;
  try {
    analysis = analysis::analyze(*target.trace);
  } catch (const trace::OpenError& error) {
    throw TraceError{*target.trace, error.what()};
  }
  if (analysis.trace.corrupt) throw TraceError{*target.trace, analysis.trace.error};
  symbolize::Symbolizer symbolizer(analysis.replay->stacks(), warn);
  report::LiveView view = report::live_view(analysis, options.selection,
                                            [&](replay::StackId id) { return symbolizer.stack(id); });
  if (target.pid) {
    view.pid = static_cast<uint64_t>(*target.pid);
    view.ended = ended;
  }
  return view;
}

std::string render(const report::LiveView& view, const TopOptions& options, bool json) {
  fmt::memory_buffer out;
  render::RenderOptions render{200, options.all_frames};  // the columns are the timeline's: not in a frame
  if (json)
    render::render_live_json(view, render, out);
  else
    render::render_live_text(view, render, out);
  return fmt::to_string(out);
}

// The live view until q, `stop` or the end of the process (or of the trace file's process). Returns the
// last frame when the process ended, to leave on the terminal.
std::optional<std::string> watch(Target& target, const TopOptions& options, std::set<std::string>& warnings) {
  TopScreen screen;
  auto warn = [&](std::string_view message) { warnings.emplace(message); };
  auto stop = [] { return g_interrupted != 0; };
  std::string status = fmt::format("q: quit   ↑ ↓ PgUp PgDn: scroll   every {:g} s",
                                   static_cast<double>(options.interval.count()) / 1000);
  while (true) {
    bool ended = target.held && target.held->ended();
    if (!target.trace) target.trace = trace_of_process(*target.pid, target.tracer_may_come);
    if (!target.trace && ended && target.written_trace) target.trace = target.written_trace();
    if (!target.trace) {
      if (ended) return fmt::format("process {} ended without writing a trace (it made no GPU allocation)\n",
                                    *target.pid);
      screen.show(fmt::format("gpumemtrace top: process {} is running, no trace yet (no GPU allocation)\n", *target.pid),
                  status);
    } else {
      report::LiveView view = read_frame(target, ended, options, warn);
      std::string frame = render(view, options, false);
      if (view.ended) return frame;
      screen.show(frame, status);
    }
    if (screen.wait_for_quit(options.interval, stop)) return std::nullopt;
  }
}

// Runs the view and prints what it leaves: the last frame, then the warnings. Returns the exit status.
int show_live(Target& target, const TopOptions& options) {
  std::set<std::string> warnings;
  std::optional<std::string> last;
  try {
    last = watch(target, options, warnings);
  } catch (const AttachError& error) {
    fmt::print(stderr, "gpumemtrace top: {}\n", terminal_text(error.what()));
    return kExitBadTrace;
  } catch (const TraceError& error) {
    return trace_error(error.path, error.message);
  } catch (const report::SelectionError& error) {
    fmt::print(stderr, "gpumemtrace top: {}\n", terminal_text(error.what()));
    return kExitUsage;
  } catch (const std::runtime_error& error) {  // the terminal is not one ncurses knows (TopScreen)
    fmt::print(stderr, "gpumemtrace top: {}\n", terminal_text(error.what()));
    return kExitUsage;
  }
  if (last) write_stdout(*last);
  flush_stdout();
  for (const std::string& warning : warnings) print_warning(warning);
  return kExitOk;
}

// --interval: seconds, fractions allowed, from 0.1 to 3600.
std::chrono::milliseconds parse_interval(const std::string& text) {
  size_t used = 0;
  double seconds = -1;
  try {
    seconds = std::stod(text, &used);
  } catch (const std::exception&) {
  }
  if (used != text.size() || !(seconds >= 0.1 && seconds <= 3600))
    throw UsageError("--interval " + text + " is not a number of seconds from 0.1 to 3600");
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

int top_main(std::span<const std::string> args) {
  CommandLine line(kTopHelp, kTopExitStatus);
  std::optional<std::string> interval, top, device;
  bool once = false, json = false;
  TopOptions options;
  options.selection = top_selection();
  std::string operand;
  line.option("--interval", "SECONDS", interval, "redraw every SECONDS (default 1; fractions allowed)");
  line.flag("--once", once, "print one frame and exit (no terminal needed)");
  line.flag("--json", json, "with --once: the frame as JSON");
  line.option("--top", "N", top, fmt::format("at most N stacks per device (default {})", options.selection.top));
  line.option("--device", "N", device, "only device N's memory");
  line.flag("--all-frames", options.all_frames, "every frame of each stack, also the CUDA runtime's");
  line.operand("process id or trace file", operand);
  if (!line.parse(args)) return kExitOk;
  if (json && !once) throw UsageError("--json needs --once: the live view is for a terminal");
  if (interval) options.interval = parse_interval(*interval);
  if (top) options.selection.top = parse_number("--top", *top, 1'000'000);
  if (device) options.selection.device = static_cast<int32_t>(parse_number("--device", *device, INT32_MAX - 1));
  if (!once && !(isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)))
    throw UsageError("the live view needs a terminal: give --once (and --json) for one frame");

  Target target;
  std::error_code error;
  if (std::optional<long> pid = parse_pid(operand); pid && !std::filesystem::exists(operand, error)) {
    target.pid = pid;
    target.held.emplace(*pid);
    try {
      if (target.held->gone()) throw AttachError(fmt::format("there is no process {}", *pid));
      target.trace = trace_of_process(*pid, false);
      if (!target.trace)
        throw AttachError(fmt::format("process {} writes no trace yet (it has made no GPU allocation)", *pid));
    } catch (const AttachError& attach_error) {
      fmt::print(stderr, "gpumemtrace top: {}\n", terminal_text(attach_error.what()));
      return kExitBadTrace;
    }
  } else {
    target.trace = operand;
  }

  if (!once) {
    struct sigaction interrupt {};
    interrupt.sa_handler = on_interrupt;  // no SA_RESTART: the wait for a key returns
    sigemptyset(&interrupt.sa_mask);
    sigaction(SIGINT, &interrupt, nullptr);
    return show_live(target, options);
  }
  try {
    report::LiveView view = read_frame(target, target.held && target.held->ended(), options, print_warning);
    write_stdout(render(view, options, json));
    flush_stdout();
  } catch (const TraceError& trace_error_) {
    return trace_error(trace_error_.path, trace_error_.message);
  } catch (const report::SelectionError& selection_error) {
    throw UsageError(selection_error.what());
  }
  return kExitOk;
}

}  // namespace

void top_of_child(long pid, const TopOptions& options,
                  const std::function<std::optional<std::string>()>& written_trace) {
  Target target;
  target.pid = pid;
  target.held.emplace(pid);
  target.tracer_may_come = true;
  target.written_trace = written_trace;
  show_live(target, options);
}

extern const Command top_command;
const Command top_command{"top", "a live view of a traced process: memory, steps, stacks, forecast", top_main};

}  // namespace gpumemtrace::cli
