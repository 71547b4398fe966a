// gpumemtrace pack [--level N] [--streams] TRACE: replaces a finished trace by its packed form
// (docs/trace-format.md, "Packed traces"), which every command reads as it read the plain one.
#include <fmt/core.h>

#include <functional>
#include <system_error>

#include "analyzer/cli/command.h"
#include "analyzer/cli/command_line.h"
#include "analyzer/cli/progress.h"
#include "common/size_units.h"
#include "trace/packed/pack.h"
#include "trace/packed/zstd_streams.h"
#include "trace/reader/open_error.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kHelp =
    "usage: gpumemtrace pack [--level N] [--streams] TRACE\n"
    "\n"
    "Packs TRACE in place: every record coded from what the trace predicts (a free as the live allocation it\n"
    "frees, a size as the stack's last one, an address as a block freed before), each kind of field compressed\n"
    "with zstd. Every command reads the packed trace as it read the plain one, record for record. The packed\n"
    "file is written beside TRACE and renamed over it, so TRACE stays whole if packing is interrupted. A trace\n"
    "its process still writes is not packed.\n";

constexpr std::string_view kExitStatus =
    "Exit status: 0 when the trace was packed, 1 for a bad command line, 2 when the file is not a readable\n"
    "version-1 trace (or is packed already), 3 when the packed file cannot be written.\n";

double per_event(uint64_t bytes, uint64_t events) { return events ? static_cast<double>(bytes) / events : 0.0; }

int pack_main(std::span<const std::string> args) {
  CommandLine line(kHelp, kExitStatus);
  std::optional<std::string> level_text;
  bool streams = false;
  std::string path;
  line.option("--level", "N", level_text,
              fmt::format("zstd's compression level, 1 to 19 (default {}), for each stream it codes smaller than level 1",
                          packed::kDefaultLevel));
  line.flag("--streams", streams, "also print the size of each stream, before and after compression");
  line.operand("trace file", path);
  if (!line.parse(args)) return kExitOk;
  int level = level_text ? static_cast<int>(parse_count("--level", *level_text, 19)) : packed::kDefaultLevel;
  if (level < 1) throw UsageError("--level must be from 1 to 19");

  packed::PackStats stats;
  try {
    Progress progress(path);
    stats = packed::pack_file(path, level, std::ref(progress));
  } catch (const trace::OpenError& error) {
    return trace_error(path, error.what());
  } catch (const packed::PackedError& error) {
    return trace_error(path, error.what());
  } catch (const std::system_error& error) {
    return command_error("pack", error.what(), kExitSystem);
  }
  fmt::print("{}: {} packed into {}, {:.2f} -> {:.2f} bytes per event ({} events{})\n", path,
             format_size(stats.plain_bytes), format_size(stats.packed_bytes), per_event(stats.plain_bytes, stats.events),
             per_event(stats.packed_bytes, stats.events), stats.events, stats.complete ? "" : ", truncated trace");
  if (streams) {
    for (size_t i = 0; i < packed::kStreams; ++i)
      fmt::print("  {:<18} {:>12} -> {:>10} bytes\n", packed::kStreamNames[i], stats.raw_bytes[i],
                 stats.compressed_bytes[i]);
  }
  return kExitOk;
}

}  // namespace

extern const Command pack_command;
const Command pack_command{"pack", "replace a finished trace by its packed form", pack_main};

}  // namespace gpumemtrace::cli
