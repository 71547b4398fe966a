// The function the symbolizer's tests look up in a library whose debug information was split off into a
// separate file (tests/analyzer/CMakeLists.txt makes both). Its line is what only that file can tell.
extern "C" __attribute__((noinline, visibility("default"))) int gpumemtrace_debug_linked_function(int x) {
  return x * 3 + 1;  // lines 3-5: what only the separate file can tell
}

// Symbols as hand-written assembly makes them, for the symbol index's test (symbol_index_test.cpp): a local
// symbol with a size inside a global one (libdwfl names the global, which binds better, though the local
// starts nearer); a global label without a size inside a local symbol with one (at the label libdwfl never
// looks at the locals); and a global label after the last symbol with a size (only libdwfl's rules for
// labels name the addresses after it).
asm(R"(
  .text
  .globl gpumemtrace_outer
  .type gpumemtrace_outer, %function
gpumemtrace_outer:
  nop
  nop
gpumemtrace_inner:
  nop
  nop
  ret
  .size gpumemtrace_outer, .-gpumemtrace_outer
  .type gpumemtrace_inner, %function
  .size gpumemtrace_inner, .-gpumemtrace_inner
  .type gpumemtrace_around_label, %function
gpumemtrace_around_label:
  nop
  nop
  .globl gpumemtrace_label_inside
gpumemtrace_label_inside:
  nop
  ret
  .size gpumemtrace_around_label, .-gpumemtrace_around_label
  .globl gpumemtrace_sizeless_label
gpumemtrace_sizeless_label:
  nop
  ret
)");
