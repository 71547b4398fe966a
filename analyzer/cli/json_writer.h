// The JSON writer of analyzer/render/, under the name `dump`'s record output uses.
#pragma once

#include "analyzer/render/json_writer.h"

namespace gpumemtrace::cli {

using render::append_json_string;
using render::JsonObject;

}  // namespace gpumemtrace::cli
