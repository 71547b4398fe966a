"""Real PyTorch's garbage collection of its cache, and a CUDA graph capture, on the simulated device.

    gc_and_graphs.py gc      a 300 MiB block cached, then a 400 MiB request it cannot serve, under a memory
                             fraction of 0.5 (512 MiB of 1 GiB): with garbage_collection_threshold set
                             (PYTORCH_CUDA_ALLOC_CONF), PyTorch frees the cached block before it asks for the
                             new one; without, it asks, is refused by the fraction, and retries.
    gc_and_graphs.py graph   torch.cuda.graph capture: the simulated runtime captures nothing; PyTorch's own
                             error is caught and printed.

Prints one JSON line per step: reserved, allocated and PyTorch's retries.
"""

import json
import sys

import torch

MiB = 1 << 20


def figures(step):
    stats = torch.cuda.memory_stats()
    print(json.dumps({"step": step, "reserved": torch.cuda.memory_reserved(),
                      "allocated": torch.cuda.memory_allocated(),
                      "retries": stats.get("num_alloc_retries", 0)}), flush=True)


if sys.argv[1] == "gc":
    torch.cuda.set_per_process_memory_fraction(0.5)
    block = torch.empty(300 * MiB, dtype=torch.uint8, device="cuda")
    del block
    figures("cached")
    bigger = torch.empty(400 * MiB, dtype=torch.uint8, device="cuda")
    figures("bigger")
else:
    static = torch.zeros(MiB, device="cuda")
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            static.add_(1)
        print(json.dumps({"step": "captured"}), flush=True)
    except RuntimeError as error:
        print(json.dumps({"step": "refused", "error": str(error).splitlines()[0]}), flush=True)
