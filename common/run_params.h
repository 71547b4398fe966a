// Named parameters of a run (`gpumemtrace run --param batch=32`): the tracer reads them from GPUMEMTRACE_PARAMS and
// writes one Param record each (docs/trace-format.md), which `fit` reads the batch size from.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpumemtrace {

inline constexpr const char* kParamsVariable = "GPUMEMTRACE_PARAMS";

struct RunParam {
  std::string name;
  std::string value;
  bool operator==(const RunParam&) const = default;
};

// One "name=value": a name of letters, digits, '_', '.' or '-', and a value without ','; the error says why not.
std::optional<RunParam> parse_param(std::string_view text, std::string* error);

// GPUMEMTRACE_PARAMS's form: "name=value,name=value"; a later value of the same name replaces the earlier one.
// nullopt (with the error) when one item is not name=value.
std::optional<std::vector<RunParam>> parse_params(std::string_view list, std::string* error);

// The list form again, for the variable.
std::string join_params(const std::vector<RunParam>& params);

}  // namespace gpumemtrace
