#include "interpose/hooks/hook_state.h"

namespace gpumemtrace::interpose {

namespace {
// initial-exec: the hooks read it on every call, and the library is preloaded, so the static TLS block has it.
thread_local HookState t_hook_state __attribute__((tls_model("initial-exec")));
}  // namespace

HookState& hook_state() { return t_hook_state; }

}  // namespace gpumemtrace::interpose
