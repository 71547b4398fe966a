"""torch.cuda.memory: the history and snapshot functions, with the signatures of the version FAKE_TORCH_API
names (torch/cuda/memory.py)."""
import pickle
import sys

from torch import API
from torch.cuda._caching_allocator import ALLOCATOR, log_call


def _record_legacy(enabled, record_context=True, trace_alloc_max_entries=1, trace_alloc_record_context=False,
                   device=None, record_context_cpp=False):
    log_call("record_memory_history legacy enabled=%r trace_alloc_max_entries=%r trace_alloc_record_context=%r"
             % (enabled, trace_alloc_max_entries, trace_alloc_record_context))
    if not enabled:
        ALLOCATOR.record_history(0, None)
    else:
        context = "alloc" if trace_alloc_record_context else ("state" if record_context else None)
        ALLOCATOR.record_history(trace_alloc_max_entries, context)


def _record_modern(enabled="all", context="all", stacks="all", max_entries=sys.maxsize, device=None,
                   clear_history=False):
    log_call("record_memory_history enabled=%s context=%s stacks=%s max_entries=%d"
             % (enabled, context, stacks, max_entries))
    if enabled is None:
        ALLOCATOR.record_history(0, None)
    else:
        ALLOCATOR.record_history(max_entries if enabled == "all" else 0, context)


if API == "legacy":
    _record_memory_history = _record_legacy
elif API == "old":
    def _record_memory_history(enabled, device=None):
        log_call("record_memory_history old enabled=%r" % (enabled,))
        ALLOCATOR.record_history(0, "state" if enabled else None)
else:
    def _record_memory_history(enabled="all", *args, **kwargs):
        if isinstance(enabled, bool):  # as torch 2.1+ does: a bool means the legacy form
            return _record_legacy(enabled, *args, **kwargs)
        return _record_modern(enabled, *args, **kwargs)

    import inspect
    _record_memory_history.__signature__ = inspect.signature(_record_modern)
    del inspect


def _snapshot(device=None):
    log_call("snapshot")
    return ALLOCATOR.snapshot()


if API != "old":
    def _dump_snapshot(filename="dump_snapshot.pickle"):
        with open(filename, "wb") as out:
            pickle.dump(_snapshot(), out)
