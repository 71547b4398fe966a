// A pprof heap profile: profile.proto (github.com/google/pprof, as Debian's golang-github-google-pprof-dev
// ships it, compiled by CMake's protobuf support), written with Debian's protobuf library and gzipped by its
// GzipOutputStream (zlib). `go tool pprof` reads it.
//
// Sample types: allocations/count and space/bytes (the default); one sample per site: its stack (the
// frames people read, report::user_frames, or all with --all-frames; the innermost first) and the label
// memory ("device 0", "managed memory", "pinned host memory"). A location is a return address with the
// calls inlined there (Line per function, the innermost first), or a Python frame; a function is a name
// (short, without parameters; the whole demangled name as system_name) in a file.
#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <map>
#include <tuple>

#include "analyzer/export/exports.h"
#include "analyzer/render/text_parts.h"
#include "analyzer/export/weighed_export.h"
#include "analyzer/report/stack_text.h"
#include "common/utf8.h"
#include "profile.pb.h"

namespace gpumemtrace::render {

namespace {

namespace pprof = perftools::profiles;

class ProfileBuilder {
 public:
  ProfileBuilder() {
    string("");  // index 0 is the empty string
    add_type(profile_.add_sample_type(), "allocations", "count");
    add_type(profile_.add_sample_type(), "space", "bytes");
    add_type(profile_.mutable_period_type(), "space", "bytes");
    profile_.set_period(1);
    profile_.set_default_sample_type(string("space"));
  }

  void add(const report::SiteFigures& site, const report::Frames& frames) {
    pprof::Sample* sample = profile_.add_sample();
    for (size_t first = 0; first < frames.size();) {
      size_t last = first;  // a frame inlined into the next one shares its location
      while (last + 1 < frames.size() && frames[last].inlined) ++last;
      sample->add_location_id(location(std::span(frames).subspan(first, last - first + 1)));
      first = last + 1;
    }
    sample->add_value(static_cast<int64_t>(site.count));
    sample->add_value(static_cast<int64_t>(site.bytes));
    pprof::Label* label = sample->add_label();
    label->set_key(string("memory"));
    label->set_str(string(account_name(site.memory, site.device)));
  }

  void set_duration(uint64_t ns) { profile_.set_duration_nanos(static_cast<int64_t>(ns)); }

  // The profile, gzipped.
  std::string gzipped() const {
    std::string bytes;
    google::protobuf::io::StringOutputStream output(&bytes);
    google::protobuf::io::GzipOutputStream::Options options;
    options.format = google::protobuf::io::GzipOutputStream::GZIP;
    google::protobuf::io::GzipOutputStream gzip(&output, options);
    if (!profile_.SerializeToZeroCopyStream(&gzip) || !gzip.Close())
      throw std::runtime_error("cannot encode the pprof profile");
    return bytes;
  }

 private:
  void add_type(pprof::ValueType* type, std::string_view name, std::string_view unit) {
    type->set_type(string(name));
    type->set_unit(string(unit));
  }

  // Protobuf strings are UTF-8 (Go's pprof refuses others): bytes that are not become U+FFFD.
  int64_t string(std::string_view raw) {
    std::string text = valid_utf8(raw);
    auto [it, added] = strings_.try_emplace(text, profile_.string_table_size());
    if (added) profile_.add_string_table(text);
    return it->second;
  }

  uint64_t function(const symbolize::Frame& frame) {
    std::string name, system_name;
    if (frame.kind == symbolize::FrameKind::Native && !frame.function.empty()) {
      name = report::short_function_name(frame.function);
      system_name = frame.function;
    } else {
      name = frame.kind == symbolize::FrameKind::Python ? frame.function : report::frame_text(frame);
      system_name = name;
    }
    auto key = std::tuple(name, system_name, frame.file);
    auto [it, added] = functions_.try_emplace(key, functions_.size() + 1);
    if (added) {
      pprof::Function* function = profile_.add_function();
      function->set_id(it->second);
      function->set_name(string(name));
      function->set_system_name(string(system_name));
      function->set_filename(string(frame.file));
    }
    return it->second;
  }

  uint64_t location(std::span<const symbolize::Frame> inlined_group) {
    std::vector<std::pair<uint64_t, int64_t>> lines;
    for (const symbolize::Frame& frame : inlined_group) lines.emplace_back(function(frame), frame.line);
    auto [it, added] = locations_.try_emplace(lines, locations_.size() + 1);
    if (added) {
      pprof::Location* location = profile_.add_location();
      location->set_id(it->second);
      for (const auto& [function_id, line_number] : lines) {
        pprof::Line* line = location->add_line();
        line->set_function_id(function_id);
        line->set_line(line_number);
      }
    }
    return it->second;
  }

  pprof::Profile profile_;
  std::map<std::string, int64_t> strings_;
  std::map<std::tuple<std::string, std::string, std::string>, uint64_t> functions_;
  std::map<std::vector<std::pair<uint64_t, int64_t>>, uint64_t> locations_;
};

std::string profile_of(std::span<const report::SiteFigures> sites, const report::SymbolizeStack& frames_of,
                       bool all_frames, uint64_t duration_ns) {
  ProfileBuilder builder;
  for (const report::SiteFigures& site : sites) {
    report::Frames frames = frames_of(site.stack);
    builder.add(site, all_frames ? frames : report::user_frames(frames));
  }
  builder.set_duration(duration_ns);
  return builder.gzipped();
}

}  // namespace

void render_pprof(const report::Report& report, const RenderOptions& options, fmt::memory_buffer& out) {
  if (const auto* sites = report::report_sites(report.body))
    out.append(profile_of(*sites, [&](replay::StackId id) { return report.stacks[id]; }, options.all_frames, 0));
}

std::unique_ptr<Exporter> start_pprof(const ExportOptions& options, ExportSink& sink) {
  return start_weighed_export(options, sink, [](std::span<const report::SiteFigures> sites,
                                                const report::SymbolizeStack& frames_of, const ExportOptions& options,
                                                const analysis::Analysis& analysis) {
    return profile_of(sites, frames_of, options.all_frames, analysis.replay->end_time_ns());
  });
}

}  // namespace gpumemtrace::render
