// Stands in for libgpumemtrace.so in `gpumemtrace run` tests: preloading it changes nothing.
extern "C" int gpumemtrace_stand_in_tracer() { return 0; }
