#include "analyzer/report/oom_model.h"

#include <algorithm>

#include <fmt/format.h>

#include "analyzer/report/growth.h"
#include "analyzer/report/oom_explanation.h"
#include "analyzer/report/stack_text.h"
#include "common/size_units.h"
#include "trace/reader/cuda_error_name.h"

namespace gpumemtrace::report {

namespace {

// The other-processes verdict with the processes NVML listed: who they are, and the command that frees them.
void name_other_processes(OomFailure& out, const DeviceBreakdown& breakdown) {
  std::string who;
  std::string kills;
  for (const DeviceProcessBytes& process : breakdown.others) {
    who += fmt::format("{}pid {} ({}) {}", who.empty() ? "" : ", ", process.pid,
                       process.command.empty() ? "name unknown" : process.command, format_size(process.bytes));
    kills += fmt::format("{}{}", kills.empty() ? "" : " ", process.pid);
  }
  if (breakdown.unlisted_used_bytes)
    who += fmt::format(", and {} used by no process NVML lists", format_size(breakdown.unlisted_used_bytes));
  out.finding += "; they are " + who;
  out.remedy = fmt::format("end the other processes if they are stale (an earlier run, a zombie worker: `kill {}`; "
                           "`gpumemtrace info` lists them with their parents), or run on a device they do not use "
                           "(CUDA_VISIBLE_DEVICES)",
                           kills);
}

OomFailure failure_model(ModelInput& input, const replay::Failure& failure, const std::vector<Growth>& growth,
                         const std::optional<PytorchAllocator>& pytorch) {
  const replay::Replay& replay = input.reserved_replay();
  OomFailure out;
  out.device = device_of(failure.device);
  out.time_ns = failure.time_ns;
  out.api = format::api_info(failure.api).name;
  out.error = trace::cuda_error_name(failure.error);
  out.requested_bytes = failure.requested_bytes;
  out.free_bytes = failure.device_free;
  out.total_bytes = failure.device_total;
  out.live_bytes = failure.live_bytes;
  out.live_count = failure.live_count;
  out.stack = input.stack(failure.stack);

  OomDiagnosis d = diagnose(replay, failure, growth, pytorch);
  out.breakdown = device_breakdown(input, failure, d.pool_unused_bytes);
  if (out.breakdown && out.breakdown->others_known)
    d = diagnose(replay, failure, growth, pytorch, out.breakdown->others_bytes());
  std::string growing_stack;
  if (d.growth) growing_stack = compact_stack(input.frames(replay.sites()[d.growth->site].stack));
  OomExplanation why = explain(failure, d, growing_stack);
  out.verdict = d.verdict;
  out.finding = std::move(why.finding);
  out.remedy = std::move(why.remedy);
  if (d.verdict == Verdict::OtherProcesses && out.breakdown && !out.breakdown->others.empty())
    name_other_processes(out, *out.breakdown);
  out.held_bytes = d.held_bytes;
  if (d.device_known) out.others_bytes = d.others_bytes;
  out.pool_reserved_bytes = d.pool_reserved_bytes;
  out.pool_used_bytes = d.pool_used_bytes;
  out.pool_unused_bytes = d.pool_unused_bytes;
  for (const replay::PoolState& pool : failure.pools)
    out.pools.push_back({pool.pool, pool.reserved_bytes, pool.used_bytes});
  if (failure.heaps.known()) out.heaps = failure.heaps;
  out.heaps_are_pytorch = pytorch.has_value();
  out.cache_remedy = d.cache_remedy;

  out.has_detail = failure.has_detail;
  for (const replay::SiteShare& share : failure.live_set) {
    if (share.bytes < input.selection().min_size) break;
    out.live_set.push_back({share.bytes, share.count, input.stack(replay.sites()[share.site].stack)});
  }
  return out;
}

// PyTorch's history, read when a failure first asks for it: nullptr (with why) when it cannot be.
class HistoryOnDemand {
 public:
  HistoryOnDemand(const analysis::TraceInfo& trace, analysis::PassCounts& passes) : trace_(trace), passes_(passes) {}

  const RecordedHistory* get(std::string& why) {
    if (!tried_) {
      tried_ = true;
      std::vector<sources::NamedSnapshot> named;
      if (trace_.snapshot)
        named = RecordedHistory::snapshot_itself(trace_.path);
      else if (trace_.joined)
        for (const sources::JoinedSnapshot& s : trace_.joined->snapshots) named.push_back(s.named);
      if (named.empty()) {
        why_ = "PyTorch's history is not joined to this trace";
      } else {
        try {
          history_.emplace(trace_.path, named, passes_);
        } catch (const WhatifError& error) {
          why_ = error.what();
        }
      }
    }
    why = why_;
    return history_ ? &*history_ : nullptr;
  }

 private:
  const analysis::TraceInfo& trace_;
  analysis::PassCounts& passes_;
  bool tried_ = false;
  std::optional<RecordedHistory> history_;
  std::string why_;
};

void add_whatif(OomFailure& out, HistoryOnDemand& history, bool snapshot_alone) {
  if (!out.heaps_are_pytorch || (out.verdict != Verdict::PytorchCache && out.verdict != Verdict::Fragmentation)) return;
  uint64_t pytorch_reserved = out.heaps ? out.heaps->reserved_bytes : out.held_bytes;
  // A snapshot does not say the device's memory: PyTorch's segments and the free memory its oom entry gives, the
  // others' memory taken as none.
  uint64_t total = out.total_bytes == 0 && snapshot_alone && out.free_bytes + pytorch_reserved > 0
                       ? out.free_bytes + pytorch_reserved
                       : out.total_bytes;
  if (!out.device || total == 0) {
    out.whatif_missing = "the device's memory at the failure is not in the trace";
    return;
  }
  const RecordedHistory* recorded = history.get(out.whatif_missing);
  if (!recorded) return;
  // Everything on the device but free memory and PyTorch's segments, taken as constant.
  uint64_t others = total - std::min(total, out.free_bytes + pytorch_reserved);
  out.whatif = oom_whatif(*recorded, *out.device, out.time_ns, total, others);
  if (!out.whatif) out.whatif_missing = "PyTorch's history has no oom entry for this failure";
}

}  // namespace

OomModel oom_model(ModelInput& input) {
  const replay::Replay& replay = input.reserved_replay();
  SiteFilter filter = input.filter(false);
  std::vector<Growth> growth = find_growth(replay);
  std::optional<PytorchAllocator> pytorch;
  if (input.trace().heaps_are_pytorch()) pytorch = PytorchAllocator{input.trace().expandable_segments()};
  OomModel model;
  model.top = input.selection().top;
  model.failures_without_detail = replay.failures_without_detail();
  model.placement = device_placement(replay);
  HistoryOnDemand history(input.trace(), input.analysis().passes);
  for (const replay::Failure& failure : replay.failures()) {
    if (!failure.out_of_memory()) {
      ++model.other_failures;
    } else if (wanted_account(replay.accounts()[failure.account], filter)) {
      model.failures.push_back(failure_model(input, failure, growth, pytorch));
      add_whatif(model.failures.back(), history, input.trace().snapshot.has_value());
    }
  }
  return model;
}

}  // namespace gpumemtrace::report
