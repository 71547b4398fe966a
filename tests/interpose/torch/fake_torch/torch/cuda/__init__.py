"""torch.cuda: device memory through the caching allocator (device 0 only)."""
from torch import API
from torch.cuda._caching_allocator import ALLOCATOR, OutOfMemoryError

from . import memory  # noqa: F401


def _check():
    if API == "cpu":
        raise AssertionError("Torch not compiled with CUDA enabled")


def is_available():
    return API != "cpu"


def is_initialized():
    return API != "cpu" and ALLOCATOR.initialized


def caching_allocator_alloc(size, device=None, stream=None):
    _check()
    return ALLOCATOR.malloc(size)


def caching_allocator_delete(mem_ptr):
    _check()
    ALLOCATOR.free(mem_ptr)


def empty_cache():
    if is_initialized():
        ALLOCATOR.empty_cache()


def memory_allocated(device=None):
    return ALLOCATOR.allocated_bytes() if is_initialized() else 0


def memory_reserved(device=None):
    return ALLOCATOR.reserved_bytes() if is_initialized() else 0
