"""gpumemtrace annotations for Python programs: phases, recorded when the program runs under
libgpumemtrace.so (``gpumemtrace run``, or LD_PRELOAD). Without the tracer nothing happens: the calls
find no entry point when the module is imported and do nothing after that.

    import gpumemtrace

    with gpumemtrace.phase("validation"):
        evaluate(model)           # allocations made here are in the phase "validation"

Phases nest per thread, like NVTX's push/pop ranges (docs/capture.md, "Phases").

A program's own allocator says which memory it sub-allocates and which blocks it hands out (addresses are
ints, as from ``ctypes.c_void_p(...).value`` or ``tensor.data_ptr()``):

    heap = gpumemtrace.heap_create("small", device=0, base=segment, size=2 << 20)   # 0 without the tracer
    gpumemtrace.suballoc(heap, block, 1000, reserved=1024)
    gpumemtrace.suballoc_name(heap, block, "activations")                       # what it holds
    gpumemtrace.subfree(heap, block)

Pure Python (ctypes).
"""

import contextlib
import ctypes

__all__ = ["active", "phase", "phase_push", "phase_pop", "heap_create", "heap_destroy", "heap_reset", "suballoc",
           "suballoc_name", "subfree"]


def _entry(name, argtypes, restype=None):
    """The tracer's entry point `name`, or None when the tracer is not loaded in this process."""
    try:
        entry = getattr(ctypes.CDLL(None), name)
    except (AttributeError, OSError):
        return None
    entry.argtypes = argtypes
    entry.restype = restype
    return entry


_phase_push = _entry("gpumemtrace_phase_push", [ctypes.c_char_p])
_phase_pop = _entry("gpumemtrace_phase_pop", [])
_heap_create = _entry("gpumemtrace_heap_create", [ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t],
                      ctypes.c_uint64)
_heap_destroy = _entry("gpumemtrace_heap_destroy", [ctypes.c_uint64])
_heap_reset = _entry("gpumemtrace_heap_reset", [ctypes.c_uint64])
_suballoc = _entry("gpumemtrace_suballoc", [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t])
_subfree = _entry("gpumemtrace_subfree", [ctypes.c_uint64, ctypes.c_void_p])
_suballoc_name = _entry("gpumemtrace_suballoc_name", [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_char_p])


def active():
    """Whether the tracer is loaded: whether the calls of this module are recorded."""
    return _phase_push is not None


def phase_push(name):
    """The calling thread enters the phase `name`, nested in the phases it is in."""
    if _phase_push is not None:
        _phase_push(str(name).encode("utf-8", "replace"))


def phase_pop():
    """The calling thread leaves its innermost phase."""
    if _phase_pop is not None:
        _phase_pop()


_NOTHING = contextlib.nullcontext()


@contextlib.contextmanager
def _traced_phase(name):
    phase_push(name)
    try:
        yield
    finally:
        phase_pop()


def phase(name):
    """A context manager: the code in its `with` block runs in the phase `name`."""
    return _NOTHING if _phase_push is None else _traced_phase(name)


def heap_create(name, device=-1, base=0, size=0):
    """A heap named `name` on `device` (-1: not said) that blocks are sub-allocated from: the memory
    [base, base+size) (size 0: not said). Returns its handle, 0 when the tracer is not loaded."""
    if _heap_create is None:
        return 0
    return _heap_create(str(name).encode("utf-8", "replace"), device, base or None, size)


def heap_destroy(heap):
    """The heap is gone, with its blocks."""
    if _heap_destroy is not None:
        _heap_destroy(heap)


def heap_reset(heap):
    """Every block of the heap is freed at once."""
    if _heap_reset is not None:
        _heap_reset(heap)


def suballoc(heap, block, size, reserved=0):
    """The block at address `block` is handed out from `heap` (0: from no heap) for a request of `size`
    bytes; `reserved` is what the allocator set aside for it (0: not said). Recorded with the caller's
    stack."""
    if _suballoc is not None:
        _suballoc(heap, block or None, size, reserved)


def suballoc_name(heap, block, name):
    """The live block at address `block` in `heap` holds `name` (what it is for), until it is freed or
    named again."""
    if _suballoc_name is not None:
        _suballoc_name(heap, block or None, str(name).encode("utf-8", "replace"))


def subfree(heap, block):
    """The block at address `block` goes back to `heap`."""
    if _subfree is not None:
        _subfree(heap, block or None)
