// Chrome/Perfetto trace-event JSON ({"traceEvents": [...]}), which ui.perfetto.dev and chrome://tracing
// open. Each memory is a process of its own: "device N" (pid 10 + N), "managed memory" (pid 2), "pinned
// host memory" (pid 3); the program's phases are on pid 1, a thread each. On each memory:
//   counter "live bytes": one track per memory kind (device, async-pool, vmm-physical, array, ...), the
//     most that was live in each slice of the replay's timeline clock (kTimelineWindows to twice as many
//     slices: at most 2 x kTimelineWindows + 1 points per track, whatever the trace's length), and the
//     value at the end;
//   counter "heap NAME": reserved and allocated bytes of each sub-allocator heap, on the same clock;
//   counter "pool 0x...": reserved and used bytes of each async pool, at each report the trace has of it
//     (PoolUsage records written with a failure, the pool's last report);
//   async slices "allocations": the kLargestAllocations largest allocations, from allocation to free (or
//     the end), with size, api, address and their stack (the frames people read) as arguments;
//   instant events: each failed allocation ("out of memory", or "failed cuMemAlloc"), with its evidence.
// Phase instances are complete slices ("X") on the thread that pushed them.
#include <algorithm>
#include <map>
#include <queue>
#include <vector>

#include "analyzer/render/json_writer.h"
#include "analyzer/export/exports.h"
#include "analyzer/render/text_parts.h"
#include "analyzer/replay/lifetimes.h"
#include "analyzer/report/stack_text.h"
#include "common/size_units.h"

namespace gpumemtrace::render {

namespace {

constexpr size_t kLargestAllocations = 1000;
constexpr int64_t kProgramPid = 1;

int64_t pid_of(replay::Category category, int32_t device) {
  if (category == replay::Category::Managed) return 2;
  if (category == replay::Category::HostPinned) return 3;
  return 10 + int64_t{device < 0 ? -1 : device};
}

int64_t pid_of(const replay::Account& account) { return pid_of(account.category, account.device); }

// The largest allocations seen, kept in a heap of bounded size (the smallest on top).
class LargestAllocations {
 public:
  struct Slice {
    replay::AllocationEvent allocation;
    std::optional<uint64_t> freed_ns;
  };

  LargestAllocations()
      : lifetimes_([this](const replay::AllocationEvent& a, std::optional<uint64_t> freed_ns) { keep(a, freed_ns); }) {}

  replay::Lifetimes& lifetimes() { return lifetimes_; }
  // Largest first.
  std::vector<Slice> take() {
    lifetimes_.finish();
    std::vector<Slice> out;
    while (!heap_.empty()) {
      out.push_back(heap_.top());
      heap_.pop();
    }
    std::reverse(out.begin(), out.end());
    return out;
  }

 private:
  struct Smaller {
    bool operator()(const Slice& a, const Slice& b) const {
      return a.allocation.size != b.allocation.size ? a.allocation.size > b.allocation.size
                                                    : a.allocation.time_ns < b.allocation.time_ns;
    }
  };

  void keep(const replay::AllocationEvent& allocation, std::optional<uint64_t> freed_ns) {
    heap_.push({allocation, freed_ns});
    if (heap_.size() > kLargestAllocations) heap_.pop();
    // Anything smaller than the smallest kept can never be kept: stop following it.
    if (heap_.size() == kLargestAllocations) lifetimes_.keep_from(heap_.top().allocation.size);
  }

  replay::Lifetimes lifetimes_;
  std::priority_queue<Slice, std::vector<Slice>, Smaller> heap_;
};

class PerfettoExport : public Exporter {
 public:
  explicit PerfettoExport(ExportSink& sink) : sink_(sink) {}

  replay::AllocationListener* listener() override { return &largest_.lifetimes(); }

  void finish(const analysis::Analysis& analysis, report::SymbolizeStack symbolize) override {
    const replay::Replay& replay = *analysis.replay;
    end_ns_ = replay.end_time_ns();
    JsonWriter json(out_);
    json.begin_object();
    json.begin_array("traceEvents");
    write_names(json, analysis);
    write_counters(json, replay);
    write_heaps(json, replay);
    write_pools(json, replay);
    write_allocations(json, symbolize);
    write_failures(json, replay, symbolize);
    write_phases(json, replay);
    json.end_array();
    json.string("displayTimeUnit", "ns");
    json.end_object();
    out_.push_back('\n');
    drain();
  }

 private:
  void drain() {
    sink_.write(std::string_view(out_.data(), out_.size()));
    out_.clear();
  }
  void drain_if_full() {
    if (out_.size() >= (size_t{1} << 20)) drain();
  }

  static void metadata(JsonWriter& json, std::string_view name, int64_t pid, std::optional<int64_t> tid,
                       std::string_view key, std::string_view text, std::optional<int64_t> number = {}) {
    json.begin_object();
    json.string("ph", "M");
    json.string("name", name);
    json.number("pid", pid);
    if (tid) json.number("tid", *tid);
    json.begin_object("args");
    if (number) json.number(key, *number);
    else json.string(key, text);
    json.end_object();
    json.end_object();
  }

  void write_names(JsonWriter& json, const analysis::Analysis& analysis) {
    const replay::Replay& replay = *analysis.replay;
    std::string program = analysis.trace.command.empty() ? "program" : analysis.trace.command;
    metadata(json, "process_name", kProgramPid, {}, "name", fmt::format("{} (phases)", program));
    metadata(json, "process_sort_index", kProgramPid, {}, "sort_index", {}, 0);
    for (replay::AccountId id = 0; id < replay.accounts().size(); ++id) {
      const replay::Account& account = replay.accounts()[id];
      if (account.allocations == 0 && account.failed_allocations == 0) continue;
      int64_t pid = pid_of(account);
      metadata(json, "process_name", pid, {}, "name",
               account_name(report::memory_of(account.category), report::device_of(account.device)));
      metadata(json, "process_sort_index", pid, {}, "sort_index", {}, pid);
    }
  }

  void counter(JsonWriter& json, int64_t pid, std::string_view name, uint64_t time_ns,
               std::initializer_list<std::pair<std::string_view, uint64_t>> values) {
    json.begin_object();
    json.string("ph", "C");
    json.string("name", name);
    json.number("pid", pid);
    json.thousandths("ts", time_ns);
    json.begin_object("args");
    for (const auto& [key, value] : values) json.number(key, value);
    json.end_object();
    json.end_object();
    drain_if_full();
  }

  // A series of the timeline clock as counter points: the value of each slice at its start, where it
  // changed, and the value at the end.
  template <typename Emit>
  static void for_each_point(const replay::Replay& replay, const std::vector<uint64_t>& series, uint64_t final_value,
                             Emit emit) {
    const replay::TimeSlices& clock = replay.timeline_clock();
    std::optional<uint64_t> last;
    for (size_t i = 0; i < series.size(); ++i) {
      if (last == series[i]) continue;
      emit(clock.origin_ns() + i * clock.width_ns(), series[i]);
      last = series[i];
    }
    emit(std::max(replay.end_time_ns(), clock.origin_ns()), final_value);
  }

  void write_counters(JsonWriter& json, const replay::Replay& replay) {
    if (!replay.timeline_clock().started()) return;
    for (replay::AccountId id = 0; id < replay.accounts().size(); ++id) {
      const replay::Account& account = replay.accounts()[id];
      if (account.allocations == 0) continue;
      for (size_t kind = 0; kind < replay::kMemoryKinds; ++kind) {
        auto memory_kind = static_cast<trace::MemoryKind>(kind);
        std::vector<uint64_t> series = replay.timeline(id, memory_kind);
        if (std::all_of(series.begin(), series.end(), [](uint64_t v) { return v == 0; })) continue;
        for_each_point(replay, series, account.kind_bytes[kind], [&](uint64_t time_ns, uint64_t bytes) {
          counter(json, pid_of(account), "live bytes", time_ns, {{format::memory_kind_name(memory_kind), bytes}});
        });
      }
    }
  }

  void write_heaps(JsonWriter& json, const replay::Replay& replay) {
    for (const replay::Heap& heap : replay.heaps().heaps()) {
      int64_t pid = pid_of(replay::Category::Device, heap.device);
      std::string name = fmt::format("heap {}", heap.name.empty() ? fmt::format("{:#x}", heap.id) : heap.name);
      std::vector<uint64_t> series = heap.allocated_series.windows(replay.timeline_clock().window());
      for_each_point(replay, series, heap.allocated_bytes, [&](uint64_t time_ns, uint64_t bytes) {
        counter(json, pid, name, std::max(time_ns, heap.created_ns), {{"reserved", heap.size}, {"allocated", bytes}});
      });
    }
  }

  void write_pools(JsonWriter& json, const replay::Replay& replay) {
    std::map<std::pair<uint64_t, uint64_t>, replay::PoolState> reports;  // (pool, time) -> state
    for (const replay::Failure& failure : replay.failures())
      for (const replay::PoolState& pool : failure.pools) reports.emplace(std::pair{pool.pool, pool.time_ns}, pool);
    for (const replay::PoolState& pool : replay.pools())
      if (pool.reported) reports.emplace(std::pair{pool.pool, pool.time_ns}, pool);
    for (const auto& [key, pool] : reports)
      counter(json, pid_of(replay::Category::Device, pool.device), fmt::format("pool {:#x}", pool.pool), pool.time_ns,
              {{"reserved", pool.reserved_bytes}, {"used", pool.used_bytes}});
  }

  static void write_stack(JsonWriter& json, const report::Frames& frames) {
    json.begin_array("stack");
    for (const symbolize::Frame& frame : report::user_frames(frames)) json.string({}, report::frame_text(frame));
    json.end_array();
  }

  void write_allocations(JsonWriter& json, const report::SymbolizeStack& symbolize) {
    uint64_t id = 0;
    for (const LargestAllocations::Slice& slice : largest_.take()) {
      const replay::AllocationEvent& a = slice.allocation;
      int64_t pid = pid_of(format::memory_category(a.kind), a.device);
      std::string name = fmt::format("{} {}", format_size(a.size), format::api_info(a.api).name);
      ++id;
      json.begin_object();
      json.string("ph", "b");
      json.string("cat", "allocations");
      json.string("name", name);
      json.number("id", id);
      json.number("pid", pid);
      json.thousandths("ts", a.time_ns);
      json.begin_object("args");
      json.number("size", a.size);
      json.string("api", format::api_info(a.api).name);
      json.string("kind", format::memory_kind_name(a.kind));
      json.string("address", fmt::format("{:#x}", a.address));
      json.boolean("freed", slice.freed_ns.has_value());
      write_stack(json, symbolize(a.stack));
      json.end_object();
      json.end_object();
      json.begin_object();
      json.string("ph", "e");
      json.string("cat", "allocations");
      json.string("name", name);
      json.number("id", id);
      json.number("pid", pid);
      json.thousandths("ts", slice.freed_ns.value_or(end_ns_));
      json.end_object();
      drain_if_full();
    }
  }

  void write_failures(JsonWriter& json, const replay::Replay& replay, const report::SymbolizeStack& symbolize) {
    for (const replay::Failure& failure : replay.failures()) {
      std::string_view api = format::api_info(failure.api).name;
      json.begin_object();
      json.string("ph", "i");
      json.string("s", "p");
      json.string("name", failure.out_of_memory() ? std::string("out of memory") : fmt::format("failed {}", api));
      json.number("pid", pid_of(replay.accounts()[failure.account]));
      json.thousandths("ts", failure.time_ns);
      json.begin_object("args");
      json.string("api", api);
      json.number("requested_bytes", failure.requested_bytes);
      json.number("error", failure.error);
      json.number("live_bytes", failure.live_bytes);
      json.number("free_bytes", failure.device_free);
      json.number("total_bytes", failure.device_total);
      write_stack(json, symbolize(failure.stack));
      json.end_object();
      json.end_object();
    }
  }

  void write_phases(JsonWriter& json, const replay::Replay& replay) {
    std::map<uint32_t, bool> threads;
    for (const replay::PhaseInstance& instance : replay.phase_instances().instances()) {
      threads[instance.thread] = true;
      json.begin_object();
      json.string("ph", "X");
      json.string("cat", "phases");
      // Slices nest by time on their thread's track: the innermost name is enough, the path is in args.
      json.string("name", replay.phases().name_text(replay.phases().name_of(instance.path)));
      json.number("pid", kProgramPid);
      json.number("tid", int64_t{instance.thread});
      json.thousandths("ts", instance.start_ns);
      json.thousandths("dur", instance.end_ns - std::min(instance.start_ns, instance.end_ns));
      json.begin_object("args");
      json.string("path", replay.phases().path_text(instance.path));
      json.number("instance", uint64_t{instance.number});
      json.boolean("ended", !instance.open);
      json.number("peak_bytes", instance.peak_bytes);
      json.number("allocated_bytes", instance.allocated_bytes);
      json.number("left_live_bytes", instance.left_bytes);
      json.end_object();
      json.end_object();
      drain_if_full();
    }
    for (const auto& [thread, seen] : threads)
      metadata(json, "thread_name", kProgramPid, int64_t{thread}, "name", fmt::format("thread {}", thread));
  }

  ExportSink& sink_;
  fmt::memory_buffer out_;
  LargestAllocations largest_;
  uint64_t end_ns_ = 0;
};

}  // namespace

std::unique_ptr<Exporter> start_perfetto(const ExportOptions&, ExportSink& sink) {
  return std::make_unique<PerfettoExport>(sink);
}

}  // namespace gpumemtrace::render
