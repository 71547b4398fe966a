// The CUPTI capture source inside libgpumemtrace.so: memory and memory-pool activity, with the stacks of
// the API calls that caused them, written into the same trace as the interposition hooks' events.
// Started by GPUMEMTRACE_CUPTI=1 (library constructor) or by CUDA_INJECTION64_PATH (InitializeInjection).
// Every failure (no libcupti, no driver, another CUPTI subscriber) is one line on stderr, and the program
// goes on as if CUPTI were not asked for.
#pragma once

namespace gpumemtrace::interpose::cupti {

enum class StartedBy { Environment, Injection };

// Makes the backend's state at load time. Made lazily by a hook instead, a fork while another thread is
// making it leaves the child waiting for that thread forever (at its first hook, or at _exit's flush).
void prepare();
// Subscribes to CUPTI and enables the activity kinds; once per process. False when CUPTI is not in use.
bool start(StartedBy how);
// Whether CUPTI is delivering activity to the trace.
bool active();
// Writes every activity record CUPTI holds (at exit, at fork, before an out-of-memory record).
void flush();

}  // namespace gpumemtrace::interpose::cupti
