// The front end of the HTML report (analyzer/html), bundled by esbuild and turned into these constants at
// build time (analyzer/html/CMakeLists.txt). Both are empty in a build without node and npm.
#pragma once

#include <string_view>

namespace gpumemtrace::render {

extern const std::string_view kHtmlScript;  // inlined into <script>
extern const std::string_view kHtmlStyle;   // inlined into <style>

}  // namespace gpumemtrace::render
