// The recorder: turns what the hooks saw into trace records. One per process; thread-safe.
// Hooks call it only after the real allocation succeeded and before the real free runs.
#pragma once

#include <cstdint>
#include <string>

#include "gpumemtrace/trace_records.h"
#include "interpose/hooks/hook_state.h"
#include "interpose/recording/call_origin.h"
#include "interpose/base/function_ref.h"
#include "trace/writer/trace_writer.h"

namespace gpumemtrace::interpose {

struct Config;
// The tracer's settings (GPUMEMTRACE_*), read once.
const Config& tracer_config();

// False when this process is not traced (not followed, or the trace could not be written).
bool recording_enabled();
// Whether a hook should record: the process is traced and the tracer itself is not the caller.
inline bool tracing_active() { return !hook_state().busy && recording_enabled(); }

// Writes one trace record with the recorder's stack, thread and time attribution. Called through record().
using EventWriter = FunctionRef<void(writer::TraceWriter&, uint64_t stack)>;
void record_event(const EventWriter& write, bool with_stack);

// Records an event (a trace record: include/gpumemtrace/trace_records.h). A record with a `stack` field
// gets the calling thread's stack, interned; the others are written as they are.
template <typename R>
void record(R event) {
  constexpr bool with_stack = requires { event.stack; };
  record_event(
      [&](writer::TraceWriter& writer, uint64_t stack) {
        if constexpr (with_stack) event.stack = static_cast<uint32_t>(stack);
        writer.write(event);
      },
      with_stack);
}

// The calling thread and its stack, interned now: for a record that another thread writes later (the
// CUPTI backend takes it in its API callbacks). Empty when the process is not traced.
CallOrigin capture_call_origin();

// Writes a record that `source` saw, on behalf of the call at `origin` (its thread and stack; the writing
// thread and no stack when the origin is empty or from a trie or trace that has since restarted), at
// `time_ns` (CLOCK_MONOTONIC as writer::monotonic_ns; 0: now). A Source record goes first when the source
// changes.
void record_event_from(format::CaptureSource source, const CallOrigin& origin, uint64_t time_ns,
                       const EventWriter& write);
template <typename R>
void record_from(format::CaptureSource source, const CallOrigin& origin, R event) {
  record_event_from(source, origin, event.time_ns, [&](writer::TraceWriter& writer, uint64_t stack) {
    if constexpr (requires { event.stack; }) event.stack = static_cast<uint32_t>(stack);
    writer.write(event);
  });
}

// The absolute path of this process's trace; empty while it has none (not traced, or nothing recorded yet).
std::string trace_path();

// Pushes what was written to the disk: after an out-of-memory failure, the process may be about to die.
void sync_trace();

// Starts the recorder early (library constructor); everything else starts it on first use too.
void start_recorder();
// Writes the End record (library destructor).
void finish_recorder();

}  // namespace gpumemtrace::interpose
