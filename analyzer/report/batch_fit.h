// `gpumemtrace fit`: runs of one program at different batch sizes, each stack's bytes at the run's peak modelled as
// constant or as an affine function of the batch, and the largest batch that fits a device's memory: on raw bytes
// from the fit, and where PyTorch's history is there, through the allocator model's replay of the history with
// the batch-dependent requests scaled (docs/reports.md "fit").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "analyzer/analysis/analysis.h"
#include "analyzer/report/run_profile.h"

namespace gpumemtrace::report {

// Runs that cannot be fitted: of different programs, without a batch, fewer than two batch sizes.
class FitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One process of a run (a run is a trace, or a directory of per-rank traces).
struct FitTrace {
  RunProfile profile;
  std::map<int32_t, uint64_t> device_totals;  // the devices' memory as the trace says it (device_total_of)
};

struct FitRun {
  std::string path;      // as given
  uint64_t batch = 0;
  std::string batch_from;  // "param batch" (recorded by run --param) or "--batch"
  std::string program;     // program_of()
  std::vector<FitTrace> traces;
};

struct FitRequest {
  std::optional<uint64_t> memory;  // --memory; else the traced device's
  uint64_t margin = 0;             // --margin: bytes kept free
  bool replay = true;              // false: raw bytes even with PyTorch's history (--raw)
};

struct StackFit {
  std::string stack;             // its signature (run_profile.h)
  bool proportional = false;     // grows with the batch; else constant
  double constant_bytes = 0;     // the fit's bytes at batch 0 (the largest measured, for a constant stack)
  double per_sample_bytes = 0;   // 0 for a constant stack
  std::vector<uint64_t> measured;  // its bytes at each run's peak, in the order of BatchFit::runs
};

// The allocator model's replay of PyTorch's history with the batch-dependent requests scaled.
struct AllocatorCheck {
  uint64_t requests = 0;               // the history's allocations, each fitted like a stack
  uint64_t proportional_requests = 0;  // those whose size grows with the batch
  std::optional<uint64_t> largest_batch;  // none: not even batch 1 fits
  uint64_t peak_reserved = 0;          // at the largest batch
  uint64_t next_failed_request = 0;    // at the next batch: the first request that does not fit (counted from 0)
  uint64_t next_failed_size = 0;       // its size
};

// One process and device of the runs (one per rank with a directory).
struct FitGroup {
  std::string rank;  // rank_labels(): "" for a lone process
  int32_t device = 0;
  uint64_t memory = 0;        // the device's memory the fit is held against
  std::string memory_from;    // "--memory", "the traced device"
  std::vector<StackFit> stacks;  // proportional first (most bytes per sample first), then constant (most first)
  double constant_bytes = 0;     // Σ of the stacks'
  double per_sample_bytes = 0;
  std::vector<uint64_t> peaks;    // each run's peak
  uint64_t largest_error = 0;     // the largest |fitted - measured| of the runs' peaks
  std::optional<uint64_t> raw_batch;  // the largest batch whose fitted bytes fit; none: not even batch 1
  bool unbounded = false;         // the bytes do not grow with the batch: every batch fits as well as one
  uint64_t raw_bytes_at_batch = 0;  // fitted bytes at raw_batch
  std::optional<AllocatorCheck> allocator;  // PyTorch's history replayed
  std::string allocator_skipped;  // why the history was not replayed, when the trace has one
  // The answer: the allocator's when it ran, else the raw bytes'.
  std::optional<uint64_t> largest_batch() const {
    return allocator ? allocator->largest_batch : raw_batch;
  }
};

struct FitRunSummary {
  std::string path;
  uint64_t batch = 0;
  std::string batch_from;
};

struct BatchFit {
  std::string program;
  std::vector<FitRunSummary> runs;  // by batch
  uint64_t margin = 0;
  std::vector<FitGroup> groups;
  std::optional<uint64_t> largest_batch;  // the smallest of the groups' answers; none when one has none
  bool unbounded = false;                 // no group grows with the batch
  analysis::PassCounts passes;            // the runs' recorded requests and histories, for the allocator's replay
};

// What names the program of a trace: the executable, and its script for an interpreter (the first argument ending
// in .py).
std::string program_of(const analysis::TraceInfo& trace);
// The memory of each device the trace allocated on: from its Context records (NVML's total), else the program's
// cuMemGetInfo.
std::map<int32_t, uint64_t> device_totals_of(const analysis::Analysis& analysis);

// Throws FitError.
BatchFit fit_batch(std::vector<FitRun> runs, const FitRequest& request);

}  // namespace gpumemtrace::report
