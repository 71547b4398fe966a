#include "analyzer/report/batch_fit.h"

#include <algorithm>
#include <cmath>
#include <compare>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "analyzer/allocator_model/history_replay.h"
#include "analyzer/report/forecast.h"
#include "analyzer/report/recorded_history.h"
#include "common/size_units.h"

namespace gpumemtrace::report {
namespace {

// The least-squares line through (batch, bytes); a constant when the bytes do not change by 1 % of the largest.
struct Line {
  double constant = 0;
  double slope = 0;
  bool proportional = false;
};

Line batch_line(const std::vector<uint64_t>& batches, const std::vector<uint64_t>& bytes) {
  uint64_t low = *std::min_element(bytes.begin(), bytes.end());
  uint64_t high = *std::max_element(bytes.begin(), bytes.end());
  if (high - low <= high / 100) return {static_cast<double>(high), 0, false};
  std::vector<long double> x(batches.begin(), batches.end()), y(bytes.begin(), bytes.end());
  LineFit fit = fit_line(x, y);
  return {static_cast<double>(fit.mean_y - fit.slope * fit.mean_x), static_cast<double>(fit.slope), true};
}

double at_batch(const Line& line, uint64_t batch) { return line.constant + line.slope * static_cast<double>(batch); }

// The largest batch whose bytes (constant + per_sample x batch) fit in `room`; none when not even 1 fits.
std::optional<uint64_t> largest_fitting(double constant, double per_sample, double room) {
  if (constant + per_sample > room) return std::nullopt;
  double batch = std::floor((room - constant) / per_sample);
  // Rounding may leave the quotient one off either way: settle it on the fitted bytes themselves.
  auto b = static_cast<uint64_t>(std::max(1.0, batch));
  while (constant + per_sample * static_cast<double>(b + 1) <= room) ++b;
  while (b > 1 && constant + per_sample * static_cast<double>(b) > room) --b;
  return b;
}

struct GroupKey {
  std::string rank;
  int32_t device;
  auto operator<=>(const GroupKey&) const = default;
};

// The traces of each run, labelled by rank (rank_labels), and each label's trace in each run.
std::vector<std::string> labels_of(const FitRun& run) {
  std::vector<RunProfile> profiles;
  for (const FitTrace& t : run.traces) profiles.push_back(t.profile);
  return rank_labels(profiles);
}

// Each run's history of one process, for the replay; the run with the largest batch is the one replayed.
class ScaledHistory {
 public:
  // Throws WhatifError; `why` gets the reason when the histories cannot be paired request by request.
  static std::optional<ScaledHistory> make(const std::vector<std::string>& paths, const std::vector<uint64_t>& batches,
                                           std::string& why, analysis::PassCounts& passes) {
    std::vector<RecordedHistory> histories;
    for (const std::string& path : paths) histories.push_back(RecordedHistory::load(path, passes));
    ScaledHistory out(std::move(histories.back()));
    std::vector<std::vector<uint64_t>> sizes;  // [run][request]
    for (size_t i = 0; i + 1 < histories.size(); ++i) sizes.push_back(requests_of(histories[i], out.device_));
    std::vector<uint64_t> last;
    for (pytorch::SnapshotEntry* entry : out.requests_) last.push_back(entry->size);
    sizes.push_back(std::move(last));
    for (size_t i = 0; i < sizes.size(); ++i)
      if (sizes[i].size() != sizes.back().size()) {
        why = fmt::format("the runs' PyTorch histories differ: {} allocations at batch {}, {} at batch {}",
                          sizes[i].size(), batches[i], sizes.back().size(), batches.back());
        return std::nullopt;
      }
    for (size_t r = 0; r < out.requests_.size(); ++r) {
      std::vector<uint64_t> column;
      for (const std::vector<uint64_t>& run : sizes) column.push_back(run[r]);
      bool equal = std::all_of(column.begin(), column.end(), [&](uint64_t s) { return s == column.front(); });
      out.lines_.push_back(equal ? Line{static_cast<double>(column.front()), 0, false} : batch_line(batches, column));
    }
    return out;
  }

  uint64_t requests() const { return requests_.size(); }
  uint64_t proportional() const {
    return static_cast<uint64_t>(std::count_if(lines_.begin(), lines_.end(), [](const Line& l) { return l.proportional; }));
  }

  // The history replayed with each request sized for `batch`, on a device of `memory` bytes.
  allocator_model::HistoryReplay replay(uint64_t batch, uint64_t memory) {
    for (size_t r = 0; r < requests_.size(); ++r)
      requests_[r]->size = static_cast<uint64_t>(std::max(1.0, std::round(at_batch(lines_[r], batch))));
    allocator_model::Settings settings = settings_;
    settings.device_memory = memory;
    return history_.replay(device_, settings);
  }

 private:
  explicit ScaledHistory(RecordedHistory history)
      : history_(std::move(history)), device_(history_.busiest_device()) {
    for (const pytorch::HistoryStep& step : history_.history().steps) {
      if (step.device != device_ || step.kind != pytorch::HistoryStep::Kind::Entry) continue;
      pytorch::SnapshotEntry& entry = history_.entry(step);
      if (entry.action == pytorch::schema::Action::Alloc) requests_.push_back(&entry);
    }
    settings_ = history_.recorded_settings({});
  }

  static std::vector<uint64_t> requests_of(RecordedHistory& history, int32_t device) {
    std::vector<uint64_t> out;
    for (const pytorch::HistoryStep& step : history.history().steps) {
      if (step.device != device || step.kind != pytorch::HistoryStep::Kind::Entry) continue;
      const pytorch::SnapshotEntry& entry = history.entry(step);
      if (entry.action == pytorch::schema::Action::Alloc) out.push_back(entry.size);
    }
    return out;
  }

  RecordedHistory history_;
  int32_t device_;
  std::vector<pytorch::SnapshotEntry*> requests_;  // the allocations, in order
  std::vector<Line> lines_;                        // each one's size against the batch
  allocator_model::Settings settings_;
};

// The largest batch whose scaled history replays without running out of memory, searched upward from `start`.
AllocatorCheck check_with_allocator(ScaledHistory& scaled, uint64_t memory, uint64_t start) {
  constexpr uint64_t kMostBatch = uint64_t{1} << 32;
  AllocatorCheck out;
  out.requests = scaled.requests();
  out.proportional_requests = scaled.proportional();
  auto fits = [&](uint64_t batch) { return scaled.replay(batch, memory).counters.out_of_memory.empty(); };
  if (!fits(1)) {
    allocator_model::HistoryReplay failed = scaled.replay(1, memory);
    out.next_failed_request = failed.counters.out_of_memory.front();
    out.next_failed_size = failed.first_out_of_memory ? failed.first_out_of_memory->size : 0;
    return out;
  }
  uint64_t low = 1, high = std::max<uint64_t>(start, 1) + 1;  // fits(low); find a high that does not fit
  while (high < kMostBatch && fits(high)) {
    low = high;
    high *= 2;
  }
  if (high >= kMostBatch) return out;  // no limit found: left as none with requests said
  while (low + 1 < high) {
    uint64_t middle = low + (high - low) / 2;
    (fits(middle) ? low : high) = middle;
  }
  out.largest_batch = low;
  out.peak_reserved = scaled.replay(low, memory).counters.peak_reserved;
  allocator_model::HistoryReplay next = scaled.replay(low + 1, memory);
  out.next_failed_request = next.counters.out_of_memory.front();
  out.next_failed_size = next.first_out_of_memory ? next.first_out_of_memory->size : 0;
  return out;
}

}  // namespace

std::string program_of(const analysis::TraceInfo& trace) {
  std::string program = trace.executable;
  for (size_t i = 1; i < trace.argv.size(); ++i)
    if (trace.argv[i].ends_with(".py")) return program + " " + std::filesystem::path(trace.argv[i]).filename().string();
  return program;
}

std::map<int32_t, uint64_t> device_totals_of(const analysis::Analysis& analysis) {
  std::map<int32_t, uint64_t> out;
  const replay::Replay& replay = *analysis.replay;
  for (replay::AccountId id : replay.accounts().devices()) {
    const replay::Account& account = replay.accounts()[id];
    if (account.meminfo_total) out[account.device] = account.meminfo_total;
  }
  for (const replay::ContextMade& context : replay.device_facts().contexts())
    if (context.total) out[context.device] = context.total;
  return out;
}

BatchFit fit_batch(std::vector<FitRun> runs, const FitRequest& request) {
  if (runs.size() < 2) throw FitError("fit needs at least two runs");
  std::stable_sort(runs.begin(), runs.end(), [](const FitRun& a, const FitRun& b) { return a.batch < b.batch; });
  for (const FitRun& run : runs)
    if (run.program != runs.front().program)
      throw FitError(fmt::format("{} is a run of {}, {} of {}: fit compares runs of one program", run.path,
                                 run.program, runs.front().path, runs.front().program));
  std::set<uint64_t> distinct;
  for (const FitRun& run : runs) distinct.insert(run.batch);
  if (distinct.size() < 2)
    throw FitError(fmt::format("the runs have {} batch size ({}): fit needs at least two different ones",
                               distinct.size(), runs.front().batch));

  BatchFit out;
  out.program = runs.front().program;
  out.margin = request.margin;
  std::vector<uint64_t> batches;
  for (const FitRun& run : runs) {
    out.runs.push_back({run.path, run.batch, run.batch_from});
    batches.push_back(run.batch);
  }

  // The groups: each rank label and device that allocated in any run.
  std::vector<std::vector<std::string>> labels;
  std::set<GroupKey> keys;
  for (const FitRun& run : runs) {
    labels.push_back(labels_of(run));
    for (size_t t = 0; t < run.traces.size(); ++t)
      for (const DeviceProfile& device : run.traces[t].profile.devices) keys.insert({labels.back()[t], device.device});
  }
  out.unbounded = true;
  for (const GroupKey& key : keys) {
    FitGroup group;
    group.rank = key.rank;
    group.device = key.device;
    std::vector<const FitTrace*> traces;  // this group's trace in each run (nullptr: none)
    std::map<std::string, std::vector<uint64_t>> stacks;
    for (size_t r = 0; r < runs.size(); ++r) {
      auto at = std::find(labels[r].begin(), labels[r].end(), key.rank);
      const FitTrace* trace = at == labels[r].end() ? nullptr : &runs[r].traces[static_cast<size_t>(at - labels[r].begin())];
      traces.push_back(trace);
      const DeviceProfile* device = trace ? find_device(trace->profile, key.device) : nullptr;
      group.peaks.push_back(device ? device->peak_bytes : 0);
      if (!device) continue;
      for (const StackBytes& s : device->stacks_at_peak) {
        std::vector<uint64_t>& bytes = stacks[s.stack];
        bytes.resize(runs.size());
        bytes[r] += s.bytes;
      }
    }
    for (auto& [stack, bytes] : stacks) {
      bytes.resize(runs.size());
      Line line = batch_line(batches, bytes);
      group.stacks.push_back({stack, line.proportional, line.constant, line.slope, bytes});
      group.constant_bytes += line.constant;
      group.per_sample_bytes += line.slope;
    }
    std::sort(group.stacks.begin(), group.stacks.end(), [](const StackFit& a, const StackFit& b) {
      if (a.proportional != b.proportional) return a.proportional;
      double ka = a.proportional ? a.per_sample_bytes : a.constant_bytes;
      double kb = b.proportional ? b.per_sample_bytes : b.constant_bytes;
      return ka != kb ? ka > kb : a.stack < b.stack;
    });
    for (size_t r = 0; r < runs.size(); ++r) {
      double fitted = group.constant_bytes + group.per_sample_bytes * static_cast<double>(batches[r]);
      group.largest_error = std::max(group.largest_error,
                                     static_cast<uint64_t>(std::llround(std::fabs(fitted - static_cast<double>(group.peaks[r])))));
    }

    if (request.memory) {
      group.memory = *request.memory;
      group.memory_from = "--memory";
    } else {
      for (auto it = traces.rbegin(); it != traces.rend() && group.memory == 0; ++it)
        if (*it) {
          auto total = (*it)->device_totals.find(key.device);
          if (total != (*it)->device_totals.end()) group.memory = total->second;
        }
      if (group.memory == 0)
        throw FitError(fmt::format("the traces do not say the memory of device {}: give --memory SIZE", key.device));
      group.memory_from = "the traced device";
    }
    if (request.margin >= group.memory)
      throw FitError(fmt::format("--margin {} leaves nothing of the device's {}", format_size(request.margin),
                                 format_size(group.memory)));
    double room = static_cast<double>(group.memory - request.margin);
    if (group.per_sample_bytes <= 0) {
      group.unbounded = group.constant_bytes <= room;
      if (!group.unbounded) out.unbounded = false;
    } else {
      out.unbounded = false;
      group.raw_batch = largest_fitting(group.constant_bytes, group.per_sample_bytes, room);
      if (group.raw_batch)
        group.raw_bytes_at_batch = static_cast<uint64_t>(
            std::llround(group.constant_bytes + group.per_sample_bytes * static_cast<double>(*group.raw_batch)));
    }

    // PyTorch's history, when every run's trace of the group has one.
    if (request.replay && group.per_sample_bytes > 0) {
      std::vector<std::string> paths;
      for (const FitTrace* trace : traces)
        if (trace) paths.push_back(trace->profile.source);
      try {
        if (paths.size() == runs.size()) {
          std::optional<ScaledHistory> scaled = ScaledHistory::make(paths, batches, group.allocator_skipped, out.passes);
          if (scaled)
            group.allocator = check_with_allocator(*scaled, group.memory - request.margin, group.raw_batch.value_or(1));
        }
      } catch (const NoHistoryError&) {
        // No PyTorch: raw bytes.
      } catch (const WhatifError& error) {
        group.allocator_skipped = error.what();
      }
    }
    if (group.largest_batch() && (!out.largest_batch || *group.largest_batch() < *out.largest_batch))
      out.largest_batch = group.largest_batch();
    out.groups.push_back(std::move(group));
  }
  for (const FitGroup& group : out.groups)
    if (!group.unbounded && !group.largest_batch()) out.largest_batch = std::nullopt;
  return out;
}

}  // namespace gpumemtrace::report
