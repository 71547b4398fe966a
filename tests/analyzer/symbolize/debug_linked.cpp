// The function the symbolizer's tests look up in a library whose debug information was split off into a
// separate file (tests/analyzer/CMakeLists.txt makes both). Its line is what only that file can tell.
extern "C" __attribute__((noinline, visibility("default"))) int gpumemtrace_debug_linked_function(int x) {
  return x * 3 + 1;  // line 4
}
