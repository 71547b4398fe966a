// gpumemtrace dump TRACE: every record in readable form (or JSON lines), then whether the trace is complete.
#include <fmt/core.h>

#include <cstdio>
#include <optional>

#include "analyzer/cli/arguments.h"
#include "analyzer/cli/command.h"
#include "analyzer/cli/json_writer.h"
#include "analyzer/cli/record_output.h"
#include "trace/reader/reader.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kHelp =
    "usage: gpumemtrace dump [--json] TRACE\n"
    "\n"
    "Prints every record of TRACE, one per line: the time in seconds since the trace started, the thread,\n"
    "the record and its fields (sizes in binary units with the exact bytes, addresses in hex, errors by\n"
    "name). The last line says whether the trace is complete or where its written data stops (a process\n"
    "that was killed or is still running), and how many records and events it holds.\n"
    "\n"
    "options:\n"
    "  --json      one JSON object per line instead; the last one has a \"status\" key\n"
    "  -h, --help  this text\n"
    "\n"
    "Exit status: 0 for a complete or truncated trace, 2 for an unreadable, foreign or corrupt file.\n";

// Writes stdout in large blocks: a dump can have hundreds of millions of lines.
class BufferedStdout {
 public:
  fmt::memory_buffer& buffer() { return buffer_; }
  void flush_if_full() {
    if (buffer_.size() >= (size_t{1} << 20)) flush();
  }
  void flush() {
    std::fwrite(buffer_.data(), 1, buffer_.size(), stdout);
    buffer_.clear();
  }
  ~BufferedStdout() {
    flush();
    std::fflush(stdout);
  }

 private:
  fmt::memory_buffer buffer_;
};

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

void append_status_json(fmt::memory_buffer& out, const trace::Reader& reader) {
  {
    JsonObject json(out);
    json.string("status", status_name(reader.status()));
    json.number("stop_offset", reader.stop_offset());
    json.number("file_size", reader.file_size());
    json.number("records", reader.records());
    json.number("events", reader.events());
    if (reader.status() == trace::Status::Corrupt) json.string("error", reader.error());
  }
  out.push_back('\n');
}

int dump_main(std::span<const std::string> args) {
  bool json = false;
  std::optional<std::string> path;
  bool options_done = false;
  for (const std::string& arg : args) {
    if (!options_done && is_help_option(arg)) {
      fmt::print("{}", kHelp);
      return kExitOk;
    }
    if (!options_done && arg == "--json") {
      json = true;
    } else if (!options_done && arg == "--") {
      options_done = true;
    } else {
      if (!options_done) reject_unknown_option(arg);
      if (path) throw UsageError("expects one trace file, got '" + *path + "' and '" + arg + "'");
      path = arg;
    }
  }
  if (!path) throw UsageError("expects a trace file");

  std::optional<trace::Reader> reader;
  try {
    reader.emplace(*path);
  } catch (const trace::OpenError& error) {
    return trace_error(*path, error.what());
  }

  BufferedStdout out;
  while (const trace::Record* record = reader->next()) {
    RecordContext context{reader->record_offset(), reader->time_ns(), reader->thread()};
    if (json)
      append_record_json(out.buffer(), *record, context);
    else
      append_record_text(out.buffer(), *record, context);
    out.flush_if_full();
  }
  if (json)
    append_status_json(out.buffer(), *reader);
  else if (reader->status() != trace::Status::Corrupt)
    append_status_text(out.buffer(), *reader);
  out.flush();
  if (reader->status() == trace::Status::Corrupt) return trace_error(*path, reader->error());
  return kExitOk;
}

}  // namespace

extern const Command dump_command;
const Command dump_command{"dump", "print every record of a trace", kHelp, dump_main};

}  // namespace gpumemtrace::cli
