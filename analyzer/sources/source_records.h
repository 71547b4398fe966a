// The records of a source in order (trace_source.h): a trace's own, or a trace's with the PyTorch history joined
// to it (snapshot_join.h) in their places among them. Each record comes with the reader that decoded it, whose
// stacks, Python codes and time it refers to: the trace's, or the joined records' own.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "trace/reader/reader.h"

namespace gpumemtrace::sources {

class SourceRecords {
 public:
  // The trace's records, at most `limit` of them; with the joined records (their positions: how many of the
  // trace's records go before each of their events), when there are some.
  SourceRecords(std::shared_ptr<trace::Reader> trace, uint64_t limit, std::span<const uint8_t> joined = {},
                std::span<const uint64_t> positions = {});

  // The next record, or nullptr at the end. Valid until the next call.
  const trace::Record* next() {
    if (joined_) return next_with_joined();
    // A trace alone: its reader's records, inline (one call less per record).
    const trace::Record* record = trace_done_ || trace_->records() >= limit_ ? nullptr : trace_->next();
    trace_done_ = !record;
    return record;
  }
  // The reader of the record next() returned.
  const trace::Reader& reader() const { return *from_; }
  // The trace's own reader: its status, offsets, process.
  trace::Reader& trace() const { return *trace_; }

 private:
  const trace::Record* next_with_joined();

  std::shared_ptr<trace::Reader> trace_;
  uint64_t limit_;
  std::unique_ptr<trace::Reader> joined_;
  std::span<const uint64_t> positions_;
  size_t joined_events_ = 0;  // the joined events returned
  const trace::Record* waiting_ = nullptr;  // the joined record read and not returned yet
  bool trace_done_ = false;
  const trace::Reader* from_ = nullptr;
};

}  // namespace gpumemtrace::sources
