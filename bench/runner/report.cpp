#include "bench/runner/report.h"

#include <fmt/core.h>

#include <algorithm>
#include <optional>

namespace gpumemtrace::bench {

namespace {

std::string describe(const CaptureCase& workload) {
  return workload.threads == 1 ? workload.shape : fmt::format("{}, {} threads", workload.shape, workload.threads);
}

std::string ns_or_dash(std::optional<double> ns) { return ns ? fmt::format("{:.0f}", *ns) : "—"; }

std::string ratio_or_dash(std::optional<double> ours, std::optional<double> theirs) {
  if (!ours || !theirs || *theirs <= 0) return "—";
  return fmt::format("{:.2f}×", *ours / *theirs);
}

std::string bytes_per_event(uint64_t bytes, uint64_t events) {
  return bytes ? fmt::format("{:.2f}", static_cast<double>(bytes) / static_cast<double>(events)) : "—";
}

std::string mib(long kib) { return fmt::format("{:.1f}", static_cast<double>(kib) / 1024); }

std::string millions(uint64_t events) {
  return events % 1'000'000 == 0 ? fmt::format("{} M", events / 1'000'000) : fmt::format("{}", events);
}

const char* verdict(bool met) { return met ? "**met**" : "**not met**"; }

}  // namespace

void print_capture_table(const std::vector<CaptureResult>& results, unsigned depth, unsigned repeats) {
  fmt::print(
      "### Capture: CPU time per event of the whole process tree (traced − plain), median of {}\n\n"
      "Call stacks {} frames deep in the program (plus the runtime's and libc's). gpumemtrace: cudaMalloc/cudaFree "
      "on the simulated device; heaptrack: malloc/free of the same shape.\n\n",
      repeats, depth);
  fmt::print(
      "| workload | events | plain CUDA run, ns/event | gpumemtrace, ns/event | gpumemtrace without stacks, ns/event "
      "| heaptrack, ns/event | gpumemtrace / heaptrack | gpumemtrace, bytes/event | without stacks, bytes/event "
      "| heaptrack, bytes/event |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& r : results) {
    auto theirs = r.heaptrack_ns();
    fmt::print("| {} | {} | {:.0f} | {:.0f} | {:.0f} | {} | {} | {} | {} | {} |\n", describe(r.workload),
               millions(r.events), r.cuda_plain.cpu_seconds * 1e9 / static_cast<double>(r.events), r.traced_ns(),
               r.traced_no_stacks_ns(), ns_or_dash(theirs), ratio_or_dash(r.traced_ns(), theirs),
               bytes_per_event(r.traced.trace_bytes, r.events),
               bytes_per_event(r.traced_no_stacks.trace_bytes, r.events),
               r.heaptrack ? bytes_per_event(r.heaptrack->trace_bytes, r.events) : "—");
  }
  fmt::print("\n");
}

void print_packed_table(const std::vector<CaptureResult>& results) {
  fmt::print(
      "### Finished traces packed: `gpumemtrace pack` of the traced run's trace\n\n"
      "The trace the capture table's last full-stack run left, packed once by the analyzer (docs/trace-format.md, "
      "\"Packed traces\"); its CPU time per event beside the capture's.\n\n");
  fmt::print(
      "| workload | events | plain, bytes/event | packed, bytes/event | heaptrack, bytes/event | packed / heaptrack "
      "| packing, ns/event | capture + packing, ns/event | capture + packing / heaptrack |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& r : results) {
    if (!r.packed) continue;
    std::optional<double> heaptrack_bytes;
    if (r.heaptrack && r.heaptrack->trace_bytes) heaptrack_bytes = static_cast<double>(r.heaptrack->trace_bytes);
    fmt::print("| {} | {} | {} | {} | {} | {} | {:.0f} | {:.0f} | {} |\n", describe(r.workload), millions(r.events),
               bytes_per_event(r.traced.trace_bytes, r.events), bytes_per_event(r.packed->trace_bytes, r.events),
               r.heaptrack ? bytes_per_event(r.heaptrack->trace_bytes, r.events) : "—",
               ratio_or_dash(static_cast<double>(r.packed->trace_bytes), heaptrack_bytes),
               r.packed->cpu_seconds * 1e9 / static_cast<double>(r.events), *r.traced_and_packed_ns(),
               ratio_or_dash(r.traced_and_packed_ns(), r.heaptrack_ns()));
  }
  fmt::print("\n");
}

void print_python_table(const std::vector<PythonResult>& results, const std::string& python, const std::string& version,
                        unsigned repeats) {
  fmt::print(
      "### Capture of a Python program: CPU time per event (traced − plain), median of {}\n\n"
      "bench/workload/python_workload.py run by CPython {} ({}): cudaMalloc/cudaFree through ctypes on the "
      "simulated device, from a Python recursion of the given depth. Mixed: Python frames spliced into the native "
      "stacks; native: GPUMEMTRACE_PYTHON_STACKS=0.\n\n",
      repeats, version, python);
  fmt::print(
      "| Python depth | events | plain run, ns/event | mixed stacks, ns/event | native stacks, ns/event "
      "| mixed, bytes/event | native, bytes/event |\n"
      "|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& r : results) {
    fmt::print("| {} | {} | {:.0f} | {:.0f} | {:.0f} | {} | {} |\n", r.depth, millions(r.events),
               r.plain.cpu_seconds * 1e9 / static_cast<double>(r.events), r.ns_per_event(r.mixed),
               r.ns_per_event(r.native), bytes_per_event(r.mixed.trace_bytes, r.events),
               bytes_per_event(r.native.trace_bytes, r.events));
  }
  fmt::print("\n");
}

void print_analyzer_table(const std::vector<AnalyzerResult>& results, const std::string& command, unsigned repeats) {
  fmt::print(
      "### Analyzer: `gpumemtrace {}` against `heaptrack_print`, median CPU time of {}\n\n"
      "Traces of the mixed shape with about 4096 live allocations whatever their length. Peak RSS is the largest "
      "resident set (ru_maxrss, file pages of a mapped trace included); anonymous is the largest RssAnon "
      "sampled every 2 ms.\n\n",
      command, repeats);
  fmt::print(
      "| events | gpumemtrace trace, bytes/event | gpumemtrace, M events/s | peak RSS, MiB | anonymous, MiB "
      "| heaptrack_print, M events/s | peak RSS, MiB | anonymous, MiB | speed ratio |\n"
      "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& r : results) {
    double ours = r.ours.events_per_second(r.events);
    std::optional<double> theirs;
    if (r.heaptrack_print) theirs = r.heaptrack_print->events_per_second(r.events);
    fmt::print("| {} | {} | {:.1f} | {} | {} | {} | {} | {} | {} |\n", millions(r.events),
               bytes_per_event(r.ours.trace_bytes, r.events), ours / 1e6, mib(r.ours.max_rss_kib),
               mib(r.ours.peak_anon_kib), theirs ? fmt::format("{:.1f}", *theirs / 1e6) : "—",
               r.heaptrack_print ? mib(r.heaptrack_print->max_rss_kib) : "—",
               r.heaptrack_print ? mib(r.heaptrack_print->peak_anon_kib) : "—", ratio_or_dash(ours, theirs));
  }
  fmt::print("\n");
  if (results.empty() || !results.front().packed) return;
  fmt::print(
      "### Analyzer: `gpumemtrace {}` of the same traces packed\n\n"
      "The trace of each row above after `gpumemtrace pack`. The first reading takes it as a second thread unpacks "
      "it (docs/architecture.md), so its CPU time is both threads' and its wall time what a user waits; the "
      "plain trace's wall time beside it.\n\n"
      "| events | packed, bytes/event | M events/s by CPU time | M events/s by wall time | plain trace, M events/s by "
      "wall time | peak RSS, MiB |\n"
      "|---:|---:|---:|---:|---:|---:|\n",
      command);
  for (const auto& r : results) {
    if (!r.packed) continue;
    fmt::print("| {} | {} | {:.1f} | {:.1f} | {:.1f} | {} |\n", millions(r.events),
               bytes_per_event(r.packed->trace_bytes, r.events), r.packed->events_per_second(r.events) / 1e6,
               r.packed->events_per_wall_second(r.events) / 1e6, r.ours.events_per_wall_second(r.events) / 1e6,
               mib(r.packed->max_rss_kib));
  }
  fmt::print("\n");
}

void print_targets(const std::vector<CaptureResult>& capture, const std::vector<PythonResult>& python,
                   const std::vector<AnalyzerResult>& analyzer) {
  fmt::print("### Targets (docs/benchmarks.md)\n\n| target | measured | verdict |\n|---|---|---|\n");
  for (const auto& r : python) {
    double ns = r.ns_per_event(r.mixed);
    fmt::print("| capture with Python stacks ≤ 500 ns per event (Python depth {}) | {:.0f} ns | {} |\n", r.depth, ns,
               verdict(ns <= 500));
  }
  for (const auto& r : capture) {
    auto theirs = r.heaptrack_ns();
    if (!theirs) continue;
    double ratio = r.traced_ns() / *theirs;
    fmt::print("| capture cost with full stacks ≤ 0.5× heaptrack's ({}) | {:.2f}× | {} |\n", describe(r.workload),
               ratio, verdict(ratio <= 0.5));
  }
  for (const auto& r : capture) {
    if (r.workload.shape != "loop" || r.workload.threads != 1) continue;
    double bytes = static_cast<double>(r.traced.trace_bytes) / static_cast<double>(r.events);
    fmt::print("| ≤ 4 bytes per event on the repetitive loop | {:.2f} | {} |\n", bytes, verdict(bytes <= 4));
  }
  for (const auto& r : capture) {
    if (!r.packed || r.workload.threads != 1) continue;
    double bytes = static_cast<double>(r.packed->trace_bytes) / static_cast<double>(r.events);
    if (r.workload.shape == "loop")
      fmt::print("| packed trace ≤ 0.5 bytes per event on the repetitive loop | {:.2f} | {} |\n", bytes,
                 verdict(bytes <= 0.5));
    if (r.workload.shape == "mixed" && r.heaptrack && r.heaptrack->trace_bytes) {
      double ratio = static_cast<double>(r.packed->trace_bytes) / static_cast<double>(r.heaptrack->trace_bytes);
      fmt::print("| packed trace ≤ 0.6× heaptrack's bytes per event (mixed) | {:.2f}× ({:.2f} bytes per event) | {} |\n",
                 ratio, bytes, verdict(ratio <= 0.6));
    }
  }
  for (const auto& r : analyzer) {
    if (!r.heaptrack_print) continue;
    double ratio = r.ours.events_per_second(r.events) / r.heaptrack_print->events_per_second(r.events);
    fmt::print("| analyzer ≥ 10× heaptrack_print's events/s ({} events) | {:.2f}× | {} |\n", millions(r.events), ratio,
               verdict(ratio >= 10));
  }
  if (analyzer.size() >= 2) {
    const auto& small = analyzer.front();
    const auto& large = analyzer.back();
    double total = static_cast<double>(large.ours.max_rss_kib) / static_cast<double>(small.ours.max_rss_kib);
    double anon = static_cast<double>(large.ours.peak_anon_kib) / std::max(1.0, double(small.ours.peak_anon_kib));
    fmt::print("| analyzer RSS at {} events ≤ 2× that at {} (same live set) | {:.2f}× peak RSS ({:.2f}× anonymous) "
               "| {} |\n",
               millions(large.events), millions(small.events), total, anon, verdict(total <= 2));
  }
  fmt::print("\n");
}

}  // namespace gpumemtrace::bench
