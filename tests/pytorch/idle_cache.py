"""Another allocator runs out of memory while PyTorch's cache holds a whole idle segment (tests/pytorch/
pytorch_test.cpp): a 600 MiB tensor freed into the cache, then a cudaMalloc of 600 MiB of the program's own on a
1 GiB device. Prints one JSON object: what cudaMalloc returned and PyTorch's figures."""

import ctypes
import json

import torch

MiB = 1 << 20
tensor = torch.empty(600 * MiB, dtype=torch.uint8, device="cuda")
del tensor  # the segment stays in PyTorch's cache, with nothing in it
runtime = ctypes.CDLL("libcudart.so.13")
runtime.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
pointer = ctypes.c_void_p()
result = runtime.cudaMalloc(ctypes.byref(pointer), 600 * MiB)
print(json.dumps({"cudaMalloc": result, "allocated": torch.cuda.memory_allocated(),
                  "reserved": torch.cuda.memory_reserved()}), flush=True)
