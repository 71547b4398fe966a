// Where the benchmark finds the build's programs: beside its own executable (build/bin), the tracer in
// build/lib and the simulated device in build/lib/sim.
#pragma once

#include <string>

namespace gpumemtrace::bench {

struct BuildLayout {
  std::string bin_dir;
  std::string lib_dir;
  std::string sim_dir;
  std::string tracer_override;  // another libgpumemtrace.so to measure (an older build, for before/after)

  std::string program(const std::string& name) const { return bin_dir + "/" + name; }
  std::string tracer() const { return tracer_override.empty() ? lib_dir + "/libgpumemtrace.so" : tracer_override; }
};

BuildLayout this_build();

// The full path of a program on PATH, or empty.
std::string find_on_path(const std::string& name);

}  // namespace gpumemtrace::bench
