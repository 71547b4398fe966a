"""PYTORCH_CUDA_ALLOC_CONF's rounding and splitting settings at work (tests/pytorch/pytorch_test.cpp). Prints one
JSON object per step: {"step", "allocated", "reserved"}."""

import json

import torch

MiB = 1 << 20


def figures(step):
    print(json.dumps({"step": step, "allocated": torch.cuda.memory_allocated(),
                      "reserved": torch.cuda.memory_reserved()}), flush=True)


odd = torch.empty(5 * MiB + 1, dtype=torch.uint8, device="cuda")  # roundup_power2_divisions rounds it up
figures("odd_size")
del odd
torch.cuda.empty_cache()
large = torch.empty(25 * MiB, dtype=torch.uint8, device="cuda")  # a 26 MiB segment
del large
smaller = torch.empty(12 * MiB, dtype=torch.uint8, device="cuda")  # the cached 26 MiB block, unless oversize
figures("after_oversize")
