"""Runs PyTorch out of memory on the simulated device (tests/pytorch/pytorch_test.cpp). usage: out_of_memory.py
[--fraction F]. Allocates 400 MiB tensors until PyTorch raises torch.OutOfMemoryError, then prints one JSON object:
the error's type and message, how many tensors it got, the allocator's figures after the error, and whether the
tracer's out-of-memory snapshot was already written when the error reached Python."""

import json
import os
import sys

import torch

MiB = 1 << 20
if "--fraction" in sys.argv:
    torch.cuda.set_per_process_memory_fraction(float(sys.argv[sys.argv.index("--fraction") + 1]))
tensors = []
try:
    while True:
        tensors.append(torch.empty(400 * MiB, dtype=torch.uint8, device="cuda"))
except torch.OutOfMemoryError as error:
    root = os.environ.get("GPUMEMTRACE_OUTPUT_ROOT")
    snapshot_first = root is not None and os.path.exists(root + ".torch-oom-1.pickle")
    free, total = torch.cuda.mem_get_info()
    print(json.dumps({"error": type(error).__name__, "message": str(error), "tensors": len(tensors),
                      "allocated": torch.cuda.memory_allocated(), "reserved": torch.cuda.memory_reserved(),
                      "free": free, "total": total,
                      "ooms": torch.cuda.memory_stats()["num_ooms"], "snapshot_before_error": snapshot_first}),
          flush=True)
