// std::visit with one lambda per alternative: std::visit(Overloaded{[](const A&) {...}, [](const B&) {...}}, v).
#pragma once

namespace gpumemtrace::render {

template <typename... Visitors>
struct Overloaded : Visitors... {
  using Visitors::operator()...;
};
// C++20 deduces this for aggregates; clang before 17 (the fuzz preset's clang 14) needs it written.
template <typename... Visitors>
Overloaded(Visitors...) -> Overloaded<Visitors...>;

}  // namespace gpumemtrace::render
