// std::visit with one lambda per alternative: std::visit(Overloaded{[](const A&) {...}, [](const B&) {...}}, v).
#pragma once

namespace gpumemtrace::render {

template <typename... Visitors>
struct Overloaded : Visitors... {
  using Visitors::operator()...;
};

}  // namespace gpumemtrace::render
