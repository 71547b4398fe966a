// bench_runner: the benchmarks of docs/benchmarks.md. Run it through bench/run.sh, which builds a Release
// tree first. Prints Markdown tables of per-event capture cost, trace size and analyzer speed and memory,
// side by side with heaptrack, and whether each target of docs/benchmarks.md is met.
#include <fmt/core.h>

#include <cstdlib>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/count_arg.h"
#include "bench/runner/analyzer_bench.h"
#include "bench/runner/build_layout.h"
#include "bench/runner/capture_bench.h"
#include "bench/runner/python_bench.h"
#include "bench/runner/report.h"

using namespace gpumemtrace::bench;

namespace {

struct Options {
  uint64_t pairs = 1'000'000;
  unsigned depth = 20;
  unsigned threads = 8;
  unsigned repeats = 7;
  unsigned analyzer_repeats = 3;
  std::vector<uint64_t> analyzer_events{1'000'000, 10'000'000, 100'000'000};
  bool heaptrack = true;
  bool capture = true;
  bool python = true;
  bool analyzer = true;
  std::string python_path;  // default: python3 on PATH
  uint64_t python_pairs = 250'000;
  std::string work_dir;
  std::string tracer;
};

// The Python depths of the Python capture table.
constexpr unsigned kPythonDepths[] = {5, 20, 50};

[[noreturn]] void usage(const char* message) {
  fmt::print(stderr,
             "bench_runner: {}\n"
             "usage: bench_runner [--quick] [--pairs N] [--depth D] [--threads T] [--repeats R]\n"
             "                    [--analyzer-events N,N,...] [--analyzer-repeats R] [--no-heaptrack]\n"
             "                    [--only capture|python|analyzer] [--python PYTHON] [--python-pairs N]\n"
             "                    [--no-python] [--work-dir DIR] [--tracer LIBGPUMEMTRACE_SO]\n"
             "Numbers take K and M suffixes (10M = 10,000,000).\n",
             message);
  std::exit(2);
}

uint64_t positive_count(std::string_view text) {
  std::optional<uint64_t> count = parse_count(text);
  if (!count || *count == 0) usage("expected a positive count");
  return *count;
}

std::vector<uint64_t> parse_counts(std::string_view text) {
  std::vector<uint64_t> out;
  while (!text.empty()) {
    size_t comma = text.find(',');
    out.push_back(positive_count(text.substr(0, comma)));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  return out;
}

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string_view flag = argv[i];
    auto value = [&]() -> std::string_view {
      if (i + 1 >= argc) usage("missing value");
      return argv[++i];
    };
    if (flag == "--quick") {
      // Proves the benchmark runs, in seconds; its numbers mean little.
      options.pairs = 20'000;
      options.python_pairs = 5'000;
      options.repeats = 1;
      options.analyzer_repeats = 1;
      options.analyzer_events = {200'000};
    } else if (flag == "--pairs") {
      options.pairs = positive_count(value());
    } else if (flag == "--depth") {
      options.depth = static_cast<unsigned>(positive_count(value()));
    } else if (flag == "--threads") {
      options.threads = static_cast<unsigned>(positive_count(value()));
    } else if (flag == "--repeats") {
      options.repeats = static_cast<unsigned>(positive_count(value()));
    } else if (flag == "--analyzer-repeats") {
      options.analyzer_repeats = static_cast<unsigned>(positive_count(value()));
    } else if (flag == "--analyzer-events") {
      options.analyzer_events = parse_counts(value());
    } else if (flag == "--no-heaptrack") {
      options.heaptrack = false;
    } else if (flag == "--python") {
      options.python_path = value();
    } else if (flag == "--python-pairs") {
      options.python_pairs = positive_count(value());
    } else if (flag == "--no-python") {
      options.python = false;
    } else if (flag == "--only") {
      std::string_view which = value();
      if (which != "capture" && which != "python" && which != "analyzer")
        usage("--only takes capture, python or analyzer");
      options.capture = which == "capture";
      options.python = which == "python";
      options.analyzer = which == "analyzer";
    } else if (flag == "--work-dir") {
      options.work_dir = value();
    } else if (flag == "--tracer") {
      options.tracer = value();
    } else {
      usage("unknown option");
    }
  }
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  Options options = parse_options(argc, argv);
  BuildLayout build = this_build();
  build.tracer_override = options.tracer;
  std::string heaptrack, heaptrack_print;
  if (options.heaptrack) {
    heaptrack = find_on_path("heaptrack");
    heaptrack_print = find_on_path("heaptrack_print");
    if (heaptrack.empty() || heaptrack_print.empty()) {
      fmt::print("heaptrack or heaptrack_print is not installed: measuring gpumemtrace alone\n\n");
      heaptrack.clear();
    }
  }
  if (options.work_dir.empty()) options.work_dir = build.bin_dir + "/../bench-work";
  std::filesystem::create_directories(options.work_dir);

  try {
    std::vector<CaptureResult> capture;
    if (options.capture) {
      CaptureSettings settings{options.pairs, options.depth, options.repeats, heaptrack, options.work_dir};
      for (CaptureCase workload : {CaptureCase{"loop", 1}, CaptureCase{"loop-sizes", 1}, CaptureCase{"mixed", 1},
                                   CaptureCase{"loop", options.threads}})
        capture.push_back(run_capture_case(build, settings, workload));
      print_capture_table(capture, options.depth, options.repeats);
      print_packed_table(capture);
    }
    std::vector<PythonResult> python;
    if (options.python) {
      std::string command = options.python_path.empty() ? find_on_path("python3") : options.python_path;
      std::optional<PythonInterpreter> interpreter = find_python(command, options.work_dir);
      if (!interpreter) {
        fmt::print("no Python interpreter ({}): the Python capture table is left out\n\n",
                   command.empty() ? "python3 is not on PATH" : command + " does not run");
      } else {
        PythonSettings settings{interpreter->executable, options.python_pairs, options.repeats, options.work_dir};
        for (unsigned depth : kPythonDepths) python.push_back(run_python_case(build, settings, depth));
        print_python_table(python, interpreter->executable, interpreter->version, options.repeats);
      }
    }
    std::vector<AnalyzerResult> analyzer;
    if (options.analyzer) {
      AnalyzerSettings settings{options.analyzer_repeats, options.depth, heaptrack, heaptrack_print, options.work_dir};
      for (uint64_t events : options.analyzer_events) analyzer.push_back(run_analyzer_case(build, settings, events));
      print_analyzer_table(analyzer, analyzer_command(build), options.analyzer_repeats);
    }
    print_targets(capture, python, analyzer);
  } catch (const std::exception& error) {
    fmt::print(stderr, "bench_runner: {}\n", error.what());
    return 1;
  }
  return 0;
}
