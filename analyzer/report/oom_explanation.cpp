#include "analyzer/report/oom_explanation.h"

#include <fmt/format.h>

#include "common/size_units.h"

namespace gpumemtrace::report {

namespace {

// Where PyTorch's cache was at the failure, and what to do about it.
OomExplanation explain_cache(const replay::Failure& failure, const OomDiagnosis& d) {
  const replay::HeapsAtFailure& heaps = failure.heaps;
  std::string finding = fmt::format(
      "PyTorch's cache would have held it: {} free + {} cached >= {}; its {} segments reserved {}, {} of it allocated; "
      "the cache is {} free blocks, the largest {}",
      format_exact_size(failure.device_free), format_exact_size(heaps.free_bytes),
      format_exact_size(failure.requested_bytes), heaps.heaps, format_exact_size(heaps.reserved_bytes),
      format_exact_size(heaps.allocated_bytes), heaps.free_blocks, format_exact_size(heaps.largest_free_bytes));
  if (heaps.pending_bytes)
    finding += fmt::format(", and {} of tensors freed but waiting for the GPU (record_stream)",
                           format_exact_size(heaps.pending_bytes));
  std::string remedy;
  switch (*d.cache_remedy) {
    case CacheRemedy::EmptyCache:
      finding += fmt::format("; {} of it is {} segments with nothing in them", format_exact_size(heaps.idle_bytes),
                             heaps.idle_heaps);
      remedy = "give the idle segments back to the device before the large allocation: torch.cuda.empty_cache() "
               "(PyTorch frees them itself only after a cudaMalloc failed, then tries again; what it cached for "
               "another stream or a CUDA graph's private pool stays)";
      break;
    case CacheRemedy::ExpandableSegments:
    case CacheRemedy::MaxSplitSize:
      finding += heaps.idle_bytes ? fmt::format(" ({} in {} segments with nothing in them, not enough)",
                                                format_exact_size(heaps.idle_bytes), heaps.idle_heaps)
                                  : std::string(", none of it a whole idle segment");
      finding += heaps.largest_free_bytes < failure.requested_bytes
                     ? ": it is split between the tensors in use"
                     : ": in blocks PyTorch did not use for this request (another stream or pool)";
      if (*d.cache_remedy == CacheRemedy::ExpandableSegments)
        remedy = fmt::format(
            "set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (it was {} in this run): a segment then grows by "
            "mapping pages, and the pages of free blocks between tensors can be given back and mapped where they are "
            "needed instead of staying split",
            d.expandable_segments ? "off" : "not said to be on");
      else
        remedy = "expandable segments are on already: set PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:N (blocks "
                 "larger than N MiB are never split, so large requests find whole blocks) and "
                 "garbage_collection_threshold:0.6 (cached blocks are given back before the cache fills the device)";
      break;
  }
  return {std::move(finding), std::move(remedy)};
}

}  // namespace

OomExplanation explain(const replay::Failure& failure, const OomDiagnosis& d, std::string_view growing_stack) {
  const uint64_t total = failure.device_total;
  switch (d.verdict) {
    case Verdict::TooLarge:
      return {fmt::format("the request alone ({}) is more than the device's whole memory ({})",
                          format_size(failure.requested_bytes), format_size(total)),
              "split the work: a smaller batch or chunk, tensor or pipeline parallelism across devices, or "
              "offloading to host memory"};
    case Verdict::PytorchCache:
      return explain_cache(failure, d);
    case Verdict::Fragmentation:
      return {fmt::format("the allocator's heaps had {} free, and with it the request would have fit ({} free + "
                          "{} cached >= {}), but their largest free block was {}: the free memory is in pieces",
                          format_size(d.heap_free_bytes), format_size(failure.device_free),
                          format_size(d.heap_free_bytes), format_size(failure.requested_bytes),
                          format_size(d.heap_largest_free_bytes)),
              "let the allocator give back or merge its free blocks: release cached segments before the large "
              "request (torch.cuda.empty_cache()), allocate long-lived and large buffers first and from their "
              "own pool, keep sizes uniform (bucket or pad them); under PyTorch set "
              "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, or max_split_size_mb to stop large blocks being "
              "split"};
    case Verdict::PoolCache:
      return {fmt::format("memory pools held {} reserved but unused; with it the request would have fit "
                          "({} free + {} unused >= {})",
                          format_size(d.pool_unused_bytes), format_size(failure.device_free),
                          format_size(d.pool_unused_bytes), format_size(failure.requested_bytes)),
              "give the pools' unused memory back before large allocations: cudaMemPoolTrimTo(pool, 0), or a lower "
              "release threshold (cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, ...)); under "
              "PyTorch set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (or call torch.cuda.empty_cache())"};
    case Verdict::OtherProcesses:
      return {fmt::format("other processes held {} of the device's {} ({:.0f}%), more than this process's {}; "
                          "without them the request would have fit",
                          format_size(d.others_bytes), format_size(total),
                          100.0 * static_cast<double>(d.others_bytes) / static_cast<double>(total),
                          format_size(d.held_bytes)),
              "find the other processes on the device (nvidia-smi) and end a stale one, or run on another device "
              "(CUDA_VISIBLE_DEVICES)"};
    case Verdict::Growth:
      return {fmt::format("a stack kept growing (rose in {} of {} time slices) and held {} at the failure, more "
                          "than the {} missing: {}",
                          d.growth->rises, d.growth->floors.size() - 1, format_size(d.growth_live_bytes),
                          format_size(d.shortfall_bytes), growing_stack),
              "memory accumulates across iterations there (the `total_loss += loss` pattern): keep a number, not "
              "the tensor (loss.item(), .detach()), or free what each iteration no longer needs"};
    default:
      return {fmt::format("the process's own live memory ({}) plus the request is more than the device could give",
                          format_size(failure.live_bytes)),
              "shrink the largest live stacks below: a smaller batch, activation checkpointing, lower precision "
              "(fp16/bf16), or freeing what is no longer needed sooner"};
  }
}

}  // namespace gpumemtrace::report
