"""The PyTorch hook: PyTorch's caching allocator seen from a traced run (docs/capture.md, "PyTorch").

libgpumemtrace.so calls ``enable(trace, entries)`` once, on the main thread, in a process that has imported
torch when it makes its first GPU allocation. If this torch has what it needs (2.0 or later, with CUDA), the
hook

- turns on PyTorch's allocation history with Python stacks, keeping the last ``entries`` events
  (``GPUMEMTRACE_TORCH_ENTRIES``), unless the program records its history itself;
- writes a snapshot of the allocator (``torch.cuda.memory._snapshot()``, pickled as ``_dump_snapshot`` writes
  it) next to the trace when PyTorch runs out of memory, at exit and on SIGUSR1 (``gpumemtrace snapshot PID``):
  ``<trace>.torch-oom-<n>.pickle``, ``<trace>.torch-exit.pickle``, ``<trace>.torch-usr1-<n>.pickle``, each
  written to a temporary file and renamed into place;
- tells the trace that it is on (a TorchHook record) and about each snapshot (a TorchSnapshot record: its file,
  why and when it was taken), so that the analyzer finds them from the trace alone.

Anything else (an older torch, torch without CUDA, an exception) is one line on stderr and changes nothing.
"""

import atexit
import ctypes
import inspect
import os
import pickle
import signal
import sys
import threading
import time

from . import _entry

__all__ = ["enable"]

_log_entry = _entry("gpumemtrace_log", [ctypes.c_int, ctypes.c_char_p])
_hook_entry = _entry("gpumemtrace_torch_hook", [ctypes.c_char_p, ctypes.c_uint64, ctypes.c_int])
_snapshot_entry = _entry("gpumemtrace_torch_snapshot",
                         [ctypes.c_int, ctypes.c_uint64, ctypes.c_char_p, ctypes.c_uint64, ctypes.c_uint64,
                          ctypes.c_int, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64])

# format::TorchSnapshotReason, with the names in the file names, and format::TorchSignal
# (include/gpumemtrace/trace_format.h).
EXIT, OUT_OF_MEMORY, SIGNAL = 0, 1, 2
_REASON_NAMES = ("exit", "oom", "usr1")
USR1_NOT_TAKEN, USR1_TAKEN, USR1_CHAINED = 0, 1, 2

# A program that catches out-of-memory errors and retries (batch-size finders) would otherwise write one
# snapshot per attempt, each as large as the history.
MAX_OOM_SNAPSHOTS = 8

_MODERN_HISTORY = {"enabled", "context", "stacks", "max_entries"}  # torch 2.1 and later
_LEGACY_HISTORY = {"enabled", "trace_alloc_max_entries", "trace_alloc_record_context"}  # torch 2.0

_hook = None


def _log(warning, message):
    if _log_entry is not None:
        _log_entry(1 if warning else 0, message.encode("utf-8", "replace"))


def snapshot_name(trace_name, reason, sequence):
    """The file name of a snapshot beside the trace file `trace_name`."""
    suffix = "" if reason == EXIT else "-%d" % sequence
    return "%s.torch-%s%s.pickle" % (trace_name, _REASON_NAMES[reason], suffix)


def _parameters(function):
    try:
        return set(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return set()


def _history_form(memory):
    """How this torch's torch.cuda.memory._record_memory_history is called: "modern", "legacy", or None (too
    old). Since 2.1 it takes (enabled, *args, **kwargs) and shows the signature of _record_memory_history_impl,
    which is looked at too in case a version does not."""
    parameters = _parameters(memory._record_memory_history)
    if _MODERN_HISTORY <= parameters or _MODERN_HISTORY <= _parameters(getattr(memory, "_record_memory_history_impl",
                                                                               None)):
        return "modern"
    if _LEGACY_HISTORY <= parameters:
        return "legacy"
    return None


def _why_not(torch):
    """Why the hook cannot work with this torch, or None."""
    version = getattr(torch, "__version__", "(unknown version)")
    cuda = getattr(torch, "cuda", None)
    if cuda is None or not cuda.is_available():
        return "PyTorch %s has no CUDA device" % version
    memory = getattr(cuda, "memory", None)
    wanted = {"torch.cuda.memory._record_memory_history": getattr(memory, "_record_memory_history", None),
              "torch.cuda.memory._snapshot": getattr(memory, "_snapshot", None),
              "torch._C._cuda_attach_out_of_memory_observer":
                  getattr(getattr(torch, "_C", None), "_cuda_attach_out_of_memory_observer", None)}
    missing = [name for name, found in wanted.items() if found is None]
    if missing:
        return "PyTorch %s has no %s (2.0 or later is needed)" % (version, ", ".join(missing))
    if _history_form(memory) is None:
        return ("PyTorch %s: _record_memory_history%s takes no history length (2.0 or later is needed)"
                % (version, inspect.signature(memory._record_memory_history)))
    if not cuda.is_initialized():
        return "PyTorch %s has not initialized CUDA at the process's first GPU allocation" % version
    return None


class _Hook:
    def __init__(self, torch, trace):
        self.torch = torch
        self.directory, self.trace_name = os.path.split(os.path.abspath(trace))
        self.pid = os.getpid()
        self.written = [0, 0, 0]  # by reason
        self.writing = threading.Lock()
        self.on = False
        self.program_usr1 = None  # the program's own Python handler, called after ours

    def start_history(self, entries):
        """Turns PyTorch's history on; returns the entries it keeps (0: the program's own setting is kept)."""
        is_enabled = getattr(self.torch._C, "_cuda_isHistoryEnabled", None)
        if is_enabled is not None and is_enabled():
            _log(False, "the program records PyTorch's allocation history itself: its settings are kept")
            return 0
        memory = self.torch.cuda.memory
        if _history_form(memory) == "modern":
            memory._record_memory_history(enabled="all", context="alloc", stacks="python", max_entries=entries)
        else:
            memory._record_memory_history(True, trace_alloc_max_entries=entries, trace_alloc_record_context=True)
        return entries

    def stop_history(self):
        memory = self.torch.cuda.memory
        if _history_form(memory) == "modern":
            memory._record_memory_history(enabled=None)
        else:
            memory._record_memory_history(False)

    def take_usr1(self):
        """Installs the SIGUSR1 handler where the program lets it; returns a USR1_* value."""
        previous = signal.getsignal(signal.SIGUSR1)
        if previous is None:
            _log(False, "SIGUSR1 has a handler set outside Python: it is left alone, and `gpumemtrace snapshot` "
                        "cannot ask this process for snapshots")
            return USR1_NOT_TAKEN
        signal.signal(signal.SIGUSR1, self.on_usr1)
        if callable(previous):
            self.program_usr1 = previous
            _log(False, "SIGUSR1 writes a PyTorch snapshot, then runs the program's handler %r" % (previous,))
            return USR1_CHAINED
        return USR1_TAKEN

    def write(self, reason, oom=(-1, 0, 0, 0), wait=True):
        """Writes a snapshot beside the trace and tells the trace. Never raises an Exception."""
        if not self.on or os.getpid() != self.pid:
            return  # off, or a forked child: the snapshots are its parent's
        if not self.writing.acquire(wait):
            _log(False, "SIGUSR1 while a PyTorch snapshot is being written: no second one")
            return
        try:
            if reason == OUT_OF_MEMORY and self.written[reason] == MAX_OOM_SNAPSHOTS:
                _log(False, "%d out-of-memory snapshots written: no more" % MAX_OOM_SNAPSHOTS)
                return
            sequence = self.written[reason] + 1
            name = snapshot_name(self.trace_name, reason, sequence)
            path = os.path.join(self.directory, name)
            taken_ns, taken_wall_ns = time.monotonic_ns(), time.time_ns()
            snapshot = self.torch.cuda.memory._snapshot()
            temporary = "%s.%d.tmp" % (path, self.pid)
            try:
                with open(temporary, "wb") as out:
                    pickle.dump(snapshot, out)
                os.replace(temporary, path)
            except BaseException:
                if os.path.exists(temporary):
                    os.unlink(temporary)
                raise
            self.written[reason] = sequence
            if _snapshot_entry is not None:
                _snapshot_entry(reason, sequence, os.fsencode(name), taken_ns, taken_wall_ns, *oom)
            _log(False, "PyTorch snapshot written: %s" % path)
        except Exception as error:
            _log(True, "no PyTorch snapshot (%s): %s: %s" % (_REASON_NAMES[reason], type(error).__name__, error))
        finally:
            self.writing.release()

    def on_out_of_memory(self, device, alloc, device_total, device_free):
        # PyTorch calls it with the GIL, after releasing its allocator's lock, before raising the error.
        self.write(OUT_OF_MEMORY, (device, alloc, device_total, device_free))

    def on_exit(self):
        self.write(EXIT)

    def on_usr1(self, signum, frame):
        self.write(SIGNAL, wait=False)  # the main thread may be writing one already
        if self.program_usr1 is not None:
            self.program_usr1(signum, frame)


def enable(trace, entries):
    """Turns the hook on for the trace at path `trace` (once per process), keeping `entries` events of
    PyTorch's history. Logs one line when it cannot."""
    global _hook
    if _hook is not None:
        return
    torch = sys.modules.get("torch")
    if torch is None:
        _log(False, "torch is not imported: no PyTorch snapshots")
        return
    why = _why_not(torch)
    if why is not None:
        _log(True, why + ": no PyTorch snapshots")
        return
    hook = _Hook(torch, trace)
    undo = []
    try:
        history = hook.start_history(entries)
        if history:
            undo.append(hook.stop_history)
        atexit.register(hook.on_exit)
        undo.append(lambda: atexit.unregister(hook.on_exit))
        previous_usr1 = signal.getsignal(signal.SIGUSR1)
        usr1 = hook.take_usr1()
        if usr1 != USR1_NOT_TAKEN:
            undo.append(lambda: signal.signal(signal.SIGUSR1, previous_usr1))
        torch._C._cuda_attach_out_of_memory_observer(hook.on_out_of_memory)  # cannot be undone: the last step
    except Exception as error:
        for step in reversed(undo):
            step()
        _log(True, "the PyTorch hook is off: %s: %s" % (type(error).__name__, error))
        return
    hook.on = True
    _hook = hook
    if _hook_entry is not None:
        _hook_entry(str(torch.__version__).encode("utf-8", "replace"), history, usr1)
    _log(False, "the PyTorch hook is on (PyTorch %s): snapshots go to %s" %
         (torch.__version__, os.path.join(hook.directory, hook.trace_name + ".torch-*.pickle")))
