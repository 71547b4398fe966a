// Shows a record's fields as its declaration lists them (include/gpumemtrace/trace_records.h), in order,
// for every output form: a `Fields` sink (text or JSON) decides how each kind of field looks.
#pragma once

#include <fmt/format.h>

#include <span>
#include <string_view>
#include <variant>

#include "trace/reader/records.h"

namespace gpumemtrace::render {

template <typename Fields>
class FieldShower {
 public:
  explicit FieldShower(Fields& f) : f_(f) {}

  void u(std::string_view name, uint64_t value, trace::As as = trace::As::Number) {
    switch (as) {
      case trace::As::Address:
        return f_.address(name, value);
      case trace::As::Size:
        return f_.size(name, value);
      case trace::As::Error:
        return f_.error(name, value);
      case trace::As::WallTime:
        return f_.wall_time(name, value);
      case trace::As::Frame:
        if (format::is_python_frame(value))
          return f_.text(name, fmt::format("python code {} line {}", format::python_code_of(value),
                                           format::python_line_of(value)));
        if (format::is_named_frame(value))
          return f_.text(name, fmt::format("native function {} line {}", format::native_function_of(value),
                                           format::named_line_of(value)));
        if (value == format::kTruncatedFrame) return f_.text(name, "truncated");
        return f_.address(name, value);
      default:
        return f_.number(name, value);
    }
  }
  void s(std::string_view name, int64_t value) { f_.signed_number(name, value); }
  void str(std::string_view name, std::string_view value, trace::As as = trace::As::Text) {
    if (as == trace::As::Bytes)
      f_.hex_bytes(name, value);
    else
      f_.text(name, value);
  }
  void strs(std::string_view name, std::span<const std::string_view> values) { f_.texts(name, values); }
  void device(std::string_view name, int32_t device) { f_.device(name, device); }
  void alloc_api(std::string_view, format::Api api) { f_.api(api); }
  void free_api(std::string_view, format::Api api) { f_.api(api); }
  void stack(std::string_view name, uint32_t id) { f_.number(name, id); }
  void implicit(std::string_view name, uint64_t value) { f_.number(name, value); }

 private:
  Fields& f_;
};

template <typename Fields>
void record_fields(const trace::Record& record, Fields& f) {
  std::visit([&](const auto& r) { std::decay_t<decltype(r)>::fields(r, FieldShower<Fields>(f)); }, record);
}

}  // namespace gpumemtrace::render
