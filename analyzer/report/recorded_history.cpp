#include "analyzer/report/recorded_history.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <variant>

#include "analyzer/sources/trace_source.h"

namespace gpumemtrace::report {
namespace {

// The snapshots a trace names, with the device's memory its out-of-memory records give; or the snapshot itself.
struct Named {
  std::vector<sources::NamedSnapshot> named;
  uint64_t device_total = 0;
};

Named read_named(const std::string& path) {
  Named out;
  sources::TraceSource source(path);
  if (source.snapshot()) {
    sources::NamedSnapshot one;
    one.file = std::filesystem::path(path).filename().string();
    one.taken_ns = one.taken_wall_ns = UINT64_MAX / 2;  // its clock is its own
    out.named.push_back(one);
    return out;
  }
  std::shared_ptr<trace::Reader> reader = source.reader();
  while (const trace::Record* record = reader->next()) {
    if (const auto* snapshot = std::get_if<trace::TorchSnapshot>(record)) {
      out.named.push_back(sources::NamedSnapshot::of(*snapshot));
      out.device_total = std::max(out.device_total, snapshot->device_total);
    } else if (const auto* failed = std::get_if<trace::AllocFailed>(record)) {
      out.device_total = std::max(out.device_total, failed->device_total);
    }
  }
  return out;
}

int32_t busiest_device(const pytorch::JoinedHistory& history) {
  std::map<int32_t, uint64_t> entries;
  for (const pytorch::HistoryStep& step : history.steps)
    if (step.kind == pytorch::HistoryStep::Kind::Entry) ++entries[step.device];
  auto most = std::max_element(entries.begin(), entries.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  return most == entries.end() ? 0 : most->first;
}

}  // namespace

RecordedHistory load_recorded_history(const std::string& path) {
  Named named;
  try {
    named = read_named(path);
  } catch (const std::exception& error) {
    throw HistoryError(error.what());
  }
  if (named.named.empty())
    throw NoHistoryError("no PyTorch snapshot in this trace (docs/pytorch.md)");
  RecordedHistory out;
  std::vector<std::string> unreadable;
  out.loaded = sources::join::load_snapshots(path, named.named, unreadable);
  if (out.loaded.empty()) throw HistoryError(unreadable.empty() ? "no snapshot could be read" : unreadable.front());
  for (sources::join::LoadedSnapshot& s : out.loaded)
    out.taken.push_back({&s.snapshot, s.reader.get(), s.named.taken_ns, s.named.taken_wall_ns});
  out.history = pytorch::join_histories(out.taken);
  out.device_total = named.device_total;
  out.busiest_device = busiest_device(out.history);
  return out;
}

}  // namespace gpumemtrace::report
