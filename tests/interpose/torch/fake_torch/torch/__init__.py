"""A test double of PyTorch: the functions gpumemtrace's PyTorch hook (python/gpumemtrace/torch_hook.py) uses,
with PyTorch's signatures and behaviour, over a small caching allocator on the simulated device
(cuda/_caching_allocator.py). Real PyTorch 2.14.1 runs in tests/pytorch (CPython 3.11 only); the double covers
the PyTorch versions and CPythons that cannot be installed there (docs/capture.md, "PyTorch").

FAKE_TORCH_API says which PyTorch it pretends to be:
  modern (default)  2.6: _record_memory_history(enabled="all", context="all", stacks="all", max_entries=...)
  legacy            2.0: _record_memory_history(enabled: bool, record_context, trace_alloc_max_entries,
                    trace_alloc_record_context, device, record_context_cpp)
  old               1.13: _record_memory_history(enabled: bool, device=None), no out-of-memory observers
  cpu               a build without CUDA: torch.cuda.is_available() is False, torch._C has no _cuda_* functions
The snapshot has the modern format in every mode. FAKE_TORCH_LOG names a file that gets one line per call of
the functions the hook uses (torch.cuda._caching_allocator.log_call).
"""
import os

API = os.environ.get("FAKE_TORCH_API", "modern")
__version__ = {"modern": "2.6.0", "legacy": "2.0.1", "old": "1.13.1", "cpu": "2.6.0+cpu"}[API]

from . import _C  # noqa: E402
from . import cuda  # noqa: E402
