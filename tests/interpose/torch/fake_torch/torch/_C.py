"""The few bindings of torch._C the hook uses (torch/csrc/cuda/Module.cpp), absent as they are in the versions
and builds that lack them."""
from torch import API
from torch.cuda._caching_allocator import ALLOCATOR, OutOfMemoryError, log_call

if API != "cpu":
    _OutOfMemoryError = OutOfMemoryError

if API == "modern":
    def _cuda_isHistoryEnabled():
        return ALLOCATOR.history_enabled()

if API in ("modern", "legacy"):
    def _cuda_attach_out_of_memory_observer(observer):
        """observer(device, alloc, device_allocated, device_free), called after the allocator's lock is released,
        before the out-of-memory error is raised."""
        log_call("attach_out_of_memory_observer")
        ALLOCATOR.observers.append(observer)
