// The records a Reader returns (declared in include/gpumemtrace/trace_records.h), and help to handle
// every one of them:
//
//   std::visit(trace::Exhaustive{
//                  [&](const trace::Alloc& r) { ... },
//                  trace::handle<trace::AddressReserve, trace::AddressFree>([&](const auto& r) { ... }),
//                  trace::handle<trace::Process, trace::Fork>([](const auto&) {}),  // ignored on purpose
//                  ...},
//              record);
//
// does not compile while a record type has no handler of its own, so a new record type cannot be dropped
// silently (a handler for a base such as trace::Event does not count).
#pragma once

#include "gpumemtrace/trace_records.h"

namespace gpumemtrace::trace {

template <typename... Handlers>
struct Exhaustive : Handlers... {
  using Handlers::operator()...;
  // Chosen over a handler for a base class, so only a handler of the record's own type counts.
  template <typename R>
  void operator()(const R&) const {
    static_assert(sizeof(R) == 0, "this record type has no handler of its own in this visit");
  }
};
template <typename... Handlers>
Exhaustive(Handlers...) -> Exhaustive<Handlers...>;

// One handler `f` for the record types Rs, and no others.
template <typename F, typename R>
struct HandleOne {
  F f;
  void operator()(const R& record) const { f(record); }
};
template <typename F, typename... Rs>
struct Handle : HandleOne<F, Rs>... {
  using HandleOne<F, Rs>::operator()...;
};
template <typename... Rs, typename F>
Handle<F, Rs...> handle(F f) {
  return {HandleOne<F, Rs>{f}...};
}

}  // namespace gpumemtrace::trace
