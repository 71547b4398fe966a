#include "common/run_params.h"

#include <algorithm>

namespace gpumemtrace {

namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

}  // namespace

std::optional<RunParam> parse_param(std::string_view text, std::string* error) {
  size_t equals = text.find('=');
  std::string_view name = text.substr(0, equals);
  if (equals == std::string_view::npos || name.empty()) {
    *error = "'" + std::string(text) + "' is not name=value";
    return std::nullopt;
  }
  if (!std::all_of(name.begin(), name.end(), is_name_char)) {
    *error = "'" + std::string(name) + "': a name has only letters, digits, '_', '.' and '-'";
    return std::nullopt;
  }
  std::string_view value = text.substr(equals + 1);
  if (value.find(',') != std::string_view::npos) {
    *error = "'" + std::string(text) + "': a value cannot hold ','";
    return std::nullopt;
  }
  return RunParam{std::string(name), std::string(value)};
}

std::optional<std::vector<RunParam>> parse_params(std::string_view list, std::string* error) {
  std::vector<RunParam> out;
  if (list.empty()) return out;
  for (size_t begin = 0;;) {
    size_t comma = list.find(',', begin);
    std::string_view item = list.substr(begin, comma == std::string_view::npos ? std::string_view::npos : comma - begin);
    std::optional<RunParam> param = parse_param(item, error);
    if (!param) return std::nullopt;
    auto same = std::find_if(out.begin(), out.end(), [&](const RunParam& p) { return p.name == param->name; });
    if (same != out.end())
      same->value = param->value;
    else
      out.push_back(std::move(*param));
    if (comma == std::string_view::npos) return out;
    begin = comma + 1;
  }
}

std::string join_params(const std::vector<RunParam>& params) {
  std::string out;
  for (const RunParam& p : params) out += (out.empty() ? "" : ",") + p.name + "=" + p.value;
  return out;
}

}  // namespace gpumemtrace
