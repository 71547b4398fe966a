// Prints the benchmark's results as Markdown tables (pasted as is into docs/benchmarks.md), then the
// targets of docs/benchmarks.md with met / not met.
#pragma once

#include <string>
#include <vector>

#include "bench/runner/analyzer_bench.h"
#include "bench/runner/capture_bench.h"
#include "bench/runner/python_bench.h"

namespace gpumemtrace::bench {

void print_capture_table(const std::vector<CaptureResult>& results, unsigned depth, unsigned repeats);
// The capture runs' traces packed: sizes and the CPU time of packing.
void print_packed_table(const std::vector<CaptureResult>& results);
void print_analyzer_table(const std::vector<AnalyzerResult>& results, const std::string& command, unsigned repeats);
void print_python_table(const std::vector<PythonResult>& results, const std::string& python, const std::string& version,
                        unsigned repeats);
void print_targets(const std::vector<CaptureResult>& capture, const std::vector<PythonResult>& python,
                   const std::vector<AnalyzerResult>& analyzer);

}  // namespace gpumemtrace::bench
