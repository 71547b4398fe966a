// gpumemtrace dump TRACE: every record in readable form (or JSON lines), then whether the trace is complete.
#include <fmt/core.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "analyzer/cli/command.h"
#include "analyzer/cli/command_line.h"
#include "analyzer/render/json_writer.h"
#include "analyzer/export/record_output.h"
#include "analyzer/cli/standard_output.h"
#include "analyzer/sources/trace_source.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kDumpHelp =
    "usage: gpumemtrace dump [--json] TRACE\n"
    "\n"
    "Prints every record of TRACE, one per line: the time in seconds since the trace started, the thread,\n"
    "the record and its fields (sizes in binary units with the exact bytes, addresses in hex, errors by\n"
    "name). The last line says whether the trace is complete or where its written data stops (a process\n"
    "that was killed or is still running), and how many records and events it holds. A PyTorch memory\n"
    "snapshot is dumped as the trace it is read as (docs/reports.md, \"PyTorch snapshots\").\n";

std::string_view status_name(trace::Status status) {
  switch (status) {
    case trace::Status::Complete:
      return "complete";
    case trace::Status::Truncated:
      return "truncated";
    case trace::Status::Corrupt:
      return "corrupt";
    default:
      return "reading";
  }
}

void append_status_text(fmt::memory_buffer& out, const trace::Reader& reader) {
  auto o = fmt::appender(out);
  if (reader.status() == trace::Status::Complete) {
    fmt::format_to(o, "# complete trace: {} records, {} events", reader.records(), reader.events());
  } else {
    fmt::format_to(o,
                   "# truncated trace: the written data stops at byte offset {} of {} (the process was killed "
                   "or is still running): {} records, {} events",
                   reader.stop_offset(), reader.file_size(), reader.records(), reader.events());
  }
  out.push_back('\n');
}

// `unpacking_error`: damage found as a packed trace was unpacked, which stopped the reading.
void append_status_json(fmt::memory_buffer& out, const trace::Reader& reader,
                        const std::optional<std::string>& unpacking_error) {
  {
    render::JsonObject json(out);
    json.string("status", status_name(unpacking_error ? trace::Status::Corrupt : reader.status()));
    json.number("stop_offset", reader.stop_offset());
    json.number("file_size", reader.file_size());
    json.number("records", reader.records());
    json.number("events", reader.events());
    if (unpacking_error)
      json.string("error", *unpacking_error);
    else if (reader.status() == trace::Status::Corrupt)
      json.string("error", reader.error());
  }
  out.push_back('\n');
}

int dump_main(std::span<const std::string> args) {
  CommandLine line(kDumpHelp, kExitStatusHelp);
  bool json = false;
  std::string path;
  line.flag("--json", json, "one JSON object per line instead; the last one has a \"status\" key");
  line.operand("trace file", path);
  if (!line.parse(args)) return kExitOk;

  std::shared_ptr<trace::Reader> reader;
  try {
    reader = sources::TraceSource(path).reader(sources::TraceSource::Unpacked::AsItComes);
  } catch (const trace::OpenError& error) {
    return trace_error(path, error.what());
  }

  BufferedStdout out;
  // A packed trace is printed as it is unpacked: damage found on the way stops it as a corrupt plain trace
  // stops, after the records before it.
  std::optional<std::string> unpacking_error;
  try {
    while (const trace::Record* record = reader->next()) {
      render::RecordContext context{reader->record_offset(), reader->time_ns(), reader->thread()};
      if (json)
        render::append_record_json(out.buffer(), *record, context);
      else
        render::append_record_text(out.buffer(), *record, context);
      out.flush_if_full();
    }
  } catch (const trace::OpenError& error) {
    unpacking_error = error.what();
  }
  if (json)
    append_status_json(out.buffer(), *reader, unpacking_error);
  else if (!unpacking_error && reader->status() != trace::Status::Corrupt)
    append_status_text(out.buffer(), *reader);
  out.flush();
  if (unpacking_error) return trace_error(path, *unpacking_error);
  if (reader->status() == trace::Status::Corrupt) return trace_error(path, reader->error());
  return kExitOk;
}

}  // namespace

extern const Command dump_command;
const Command dump_command{"dump", "print every record of a trace", dump_main};

}  // namespace gpumemtrace::cli
