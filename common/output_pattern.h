// Trace paths from a pattern: %p the pid, %h the host name, %r the rank, %% a percent sign. The tracer
// expands GPUMEMTRACE_OUTPUT with it in every traced process, `gpumemtrace run -o` for the top process.
#pragma once

#include <string>
#include <vector>

namespace gpumemtrace {

// The first of RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID that is set, else -1.
int current_rank();
// The first of LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID that is set, else -1.
int current_local_rank();

// %r is the rank, 0 when none is set; an unknown %x stays as it is. %h never leaves its directory: a '/' in
// the host name becomes '_', and a name of dots alone is "_".
std::string expand_output_pattern(const std::string& pattern, long pid);

// Where process `pid`'s trace goes when `path` is taken (another live process writes it, or it is a symbolic
// link): path, then path.PID, path.PID.2 ... path.PID.kTraceNameChoices. The tracer takes the first it can;
// `gpumemtrace run` looks for the trace it started among the same names.
inline constexpr int kTraceNameChoices = 8;
std::vector<std::string> trace_path_choices(const std::string& path, long pid);

}  // namespace gpumemtrace
