// GPUMEMTRACE_DEBUG: what the tracer decided (hooks installed, files opened), for people debugging it.
#pragma once

namespace gpumemtrace::interpose {

void configure_debug_log(const char* destination);  // "1"/"stderr", a file path, or nullptr (off)
bool debug_enabled();
// printf-style; writes one line with a "gpumemtrace[pid]: " prefix. No allocation, safe in hooks.
void debug_log(const char* format, ...) __attribute__((format(printf, 1, 2)));
// Always printed on stderr (warnings the user must see).
void warn(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace gpumemtrace::interpose
