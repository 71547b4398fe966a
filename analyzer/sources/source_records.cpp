#include "analyzer/sources/source_records.h"

#include <utility>
#include <variant>

namespace gpumemtrace::sources {

namespace {

bool is_event(const trace::Record& record) {
  return std::visit([](const auto& r) { return trace::kIsEvent<std::decay_t<decltype(r)>>; }, record);
}

}  // namespace

SourceRecords::SourceRecords(std::shared_ptr<trace::Reader> trace, uint64_t limit, std::span<const uint8_t> joined,
                             std::span<const uint64_t> positions)
    : trace_(std::move(trace)), limit_(limit), positions_(positions), from_(trace_.get()) {
  if (!joined.empty()) joined_ = std::make_unique<trace::Reader>(joined);
}

const trace::Record* SourceRecords::next_with_joined() {
  if (!waiting_) waiting_ = joined_->next();
  // A joined record goes when the trace's records before it have gone (the records an event needs, such as its
  // stack's nodes, go with it at once), and all of them once the trace has ended.
  if (waiting_ && (trace_done_ || !is_event(*waiting_) || joined_events_ >= positions_.size() ||
                   positions_[joined_events_] <= trace_->records())) {
    if (is_event(*waiting_)) ++joined_events_;
    from_ = joined_.get();
    return std::exchange(waiting_, nullptr);
  }
  if (!trace_done_ && trace_->records() < limit_) {
    if (const trace::Record* record = trace_->next()) {
      from_ = trace_.get();
      return record;
    }
  }
  trace_done_ = true;
  if (!waiting_) return nullptr;
  return next_with_joined();
}

}  // namespace gpumemtrace::sources
