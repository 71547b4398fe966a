// Trace paths from a pattern: %p the pid, %h the host name, %r the rank, %% a percent sign. The tracer
// expands GPUMEMTRACE_OUTPUT with it in every traced process, `gpumemtrace run -o` for the top process.
#pragma once

#include <string>

namespace gpumemtrace {

// The first of RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID that is set, else -1.
int current_rank();

// %r is the rank, 0 when none is set; an unknown %x stays as it is.
std::string expand_output_pattern(const std::string& pattern, long pid);

}  // namespace gpumemtrace
