#include "trace/reader/records.h"

namespace gpumemtrace::trace {

namespace {
// In the order of the Record alternatives.
constexpr std::string_view kRecordNames[] = {"process",     "modules-begin", "module",          "stacks-reset",
                                             "stack-node",  "thread-new",    "thread-switch",   "fork",
                                             "alloc",       "free",          "alloc-failed",    "free-failed",
                                             "mem-map",     "mem-unmap",     "address-reserve", "address-free",
                                             "pool-create", "pool-destroy",  "pool-trim",       "pool-usage",
                                             "mem-info",    "end"};
static_assert(std::size(kRecordNames) == std::variant_size_v<Record>);
}  // namespace

std::string_view record_name(const Record& record) { return kRecordNames[record.index()]; }

}  // namespace gpumemtrace::trace
