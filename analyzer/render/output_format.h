// The output formats, chosen with --format. Each format is one renderer file and one row in the table of
// output_format.cpp. A format renders the report commands' models (text, json, folded, pprof), exports a
// whole trace (`gpumemtrace export`: folded, pprof, csv, perfetto), or both.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "analyzer/render/export_sink.h"
#include "analyzer/replay/allocation_listener.h"
#include "analyzer/report/report.h"
#include "analyzer/report/weights_model.h"

namespace gpumemtrace::render {

struct RenderOptions {
  uint32_t columns = 80;  // text: the width of the terminal or of --width
  bool all_frames = false;  // text and folded: every frame, not only report::user_frames (--all-frames)
};

struct ExportOptions {
  report::Weighing what = report::Weighing::Peak;  // folded and pprof: --what
  bool all_frames = false;                          // folded: --all-frames
};

// One export of a trace: told of every allocation while the trace is read, if it needs them, then it
// writes its output from the replay.
class Exporter {
 public:
  virtual ~Exporter() = default;
  virtual replay::AllocationListener* listener() { return nullptr; }
  // The trace has been read (with the selection applied): write the output.
  virtual void finish(const report::Analysis& analysis, report::SymbolizeStack symbolize) = 0;
};

struct OutputFormat {
  std::string_view name;         // the value of --format
  std::string_view description;  // one line in --help
  // Renders a report; nullptr: not a format of the report commands.
  void (*render)(const report::Report& report, const RenderOptions& options, fmt::memory_buffer& out) = nullptr;
  // The reports it renders; nullptr: all of them.
  bool (*renders)(const report::ReportBody& body) = nullptr;
  // Starts an export into `sink`; nullptr: not a format of `gpumemtrace export`.
  std::unique_ptr<Exporter> (*start_export)(const ExportOptions& options, ExportSink& sink) = nullptr;
  bool weighed = false;  // takes --what
};

std::span<const OutputFormat* const> output_formats();
const OutputFormat* find_output_format(std::string_view name);
// "text, json, folded, pprof": the formats of the report commands (or of export).
std::string output_format_names(bool exports = false);

}  // namespace gpumemtrace::render
