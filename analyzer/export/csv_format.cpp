// CSV for pandas and spreadsheets (RFC 4180: a field with a comma, a quote or a line break is quoted, its
// quotes doubled). Two files: the -o file has one row per allocation,
//   time_ns,device,kind,api,size,address,freed_ns,stack
// (device empty for pinned host memory, freed_ns empty for an allocation never freed, stack the id of
// its stack in the other file), in the order the allocations ended: as they were freed, then those still
// live at the end in the order they were made. Beside it, NAME.stacks.csv (the -o name with .stacks.csv
// in place of its extension) has one row per frame of each stack the rows name,
//   stack,depth,function,file,line,module,offset,kind
// depth 0 the innermost frame, every frame (as in JSON); offset the address in the module (the address
// itself without a module; empty for a Python frame); kind native, python or truncated. The text cells are
// UTF-8, and a name a spreadsheet would take for a formula ("=HYPERLINK(...)", "-cmd") starts with a ' in
// quotes (append_field).
#include <vector>

#include "analyzer/export/exports.h"
#include "analyzer/replay/lifetimes.h"
#include "common/utf8.h"

namespace gpumemtrace::render {

namespace {

// "-12", "+3.5", "1e-9": a number, which a spreadsheet reads as one and no formula.
bool is_number(std::string_view text) {
  size_t i = text.starts_with('-') || text.starts_with('+') ? 1 : 0;
  auto digits = [&] {
    size_t start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    return i > start;
  };
  bool whole = digits();
  bool fraction = i < text.size() && text[i] == '.' && (++i, digits());
  if (!whole && !fraction) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
    if (!digits()) return false;
  }
  return i == text.size();
}

// A text cell (a function, file or module name: the numeric columns are written as numbers). Bytes that are
// not UTF-8 become U+FFFD. A cell a spreadsheet would run as a formula (OWASP's CSV injection: starting with
// =, +, -, @, a tab or a carriage return), unless it is a number, gets a ' in front and is quoted.
void append_field(fmt::memory_buffer& out, std::string_view raw) {
  std::string field = valid_utf8(raw);
  bool formula = !field.empty() && std::string_view("=+-@\t\r").find(field.front()) != std::string_view::npos &&
                 !is_number(field);
  if (!formula && field.find_first_of(",\"\r\n") == std::string::npos) {
    out.append(field);
    return;
  }
  out.push_back('"');
  if (formula) out.push_back('\'');
  for (char c : field) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
}

class CsvExport : public Exporter {
 public:
  explicit CsvExport(ExportSink& sink)
      : sink_(sink), lifetimes_([this](const replay::AllocationEvent& a, std::optional<uint64_t> freed_ns) {
          row(a, freed_ns);
        }) {
    out_.append(std::string_view("time_ns,device,kind,api,size,address,freed_ns,stack\n"));
  }

  replay::AllocationListener* listener() override { return &lifetimes_; }

  void finish(const analysis::Analysis&, report::SymbolizeStack symbolize) override {
    lifetimes_.finish();
    drain(sink_);
    std::unique_ptr<ExportSink> stacks = sink_.beside(".stacks.csv");
    out_.append(std::string_view("stack,depth,function,file,line,module,offset,kind\n"));
    for (replay::StackId id = 0; id < used_stacks_.size(); ++id) {
      if (!used_stacks_[id]) continue;
      report::Frames frames = symbolize(id);
      for (size_t depth = 0; depth < frames.size(); ++depth) {
        const symbolize::Frame& frame = frames[depth];
        fmt::format_to(std::back_inserter(out_), "{},{},", id, depth);
        append_field(out_, frame.function);
        out_.push_back(',');
        append_field(out_, frame.file);
        out_.push_back(',');
        if (frame.line) fmt::format_to(std::back_inserter(out_), "{}", frame.line);
        out_.push_back(',');
        append_field(out_, frame.module);
        out_.push_back(',');
        if (frame.kind == symbolize::FrameKind::Native) fmt::format_to(std::back_inserter(out_), "{:#x}", frame.offset);
        fmt::format_to(std::back_inserter(out_), ",{}\n", symbolize::frame_kind_name(frame.kind));
      }
      if (out_.size() >= kFlushBytes) drain(*stacks);
    }
    drain(*stacks);
    stacks->close();
  }

 private:
  static constexpr size_t kFlushBytes = size_t{1} << 20;

  void row(const replay::AllocationEvent& a, std::optional<uint64_t> freed_ns) {
    auto out = std::back_inserter(out_);
    fmt::format_to(out, "{},", a.time_ns);
    if (a.device != trace::kNoDevice) fmt::format_to(out, "{}", a.device);
    fmt::format_to(out, ",{},{},{},{:#x},", format::memory_kind_name(a.kind), format::api_info(a.api).name, a.size,
                   a.address);
    if (freed_ns) fmt::format_to(out, "{}", *freed_ns);
    fmt::format_to(out, ",{}\n", a.stack);
    if (a.stack >= used_stacks_.size()) used_stacks_.resize(a.stack + 1, false);
    used_stacks_[a.stack] = true;
    if (out_.size() >= kFlushBytes) drain(sink_);
  }

  void drain(ExportSink& sink) {
    sink.write(std::string_view(out_.data(), out_.size()));
    out_.clear();
  }

  ExportSink& sink_;
  replay::Lifetimes lifetimes_;
  fmt::memory_buffer out_;
  std::vector<bool> used_stacks_;
};

}  // namespace

std::unique_ptr<Exporter> start_csv(const ExportOptions&, ExportSink& sink) { return std::make_unique<CsvExport>(sink); }

}  // namespace gpumemtrace::render
