"""Workloads for the allocator model's oracle (tests/pytorch/allocator_replay_test.cpp): PyTorch's history is on
from before the first allocation, and the workload named by argv[1] runs. The tracer's hook writes the snapshot at
exit; with argv[2] the snapshot is also written there. Prints {"check": "done", "value": true} at the end."""

import json
import pickle
import sys

import torch

MiB = 1 << 20
torch.cuda.memory._record_memory_history(enabled="all", context=None, stacks="python", max_entries=1_000_000)


def fragmenting_mix():
    """Sizes from 1 KiB to 40 MiB, freed out of order, with empty_cache between two rounds."""
    sizes = [1000, 3 * MiB, 700 * 1024, 25 * MiB, 5 * MiB + 1, 12 * MiB, 200, 9 * MiB, 40 * MiB, 1 * MiB, 2 * MiB + 3]
    for round_ in range(2):
        live = []
        for i in range(60):
            size = sizes[(i * 7 + round_) % len(sizes)]
            live.append(torch.empty(size, dtype=torch.uint8, device="cuda"))
            if i % 3 == 2:
                del live[(i * 5) % len(live)]
            if i % 11 == 10:
                del live[: len(live) // 2]
        del live
        torch.cuda.empty_cache()


def small_tensors():
    """Only small-pool requests (1 MiB or less) on two streams."""
    side = torch.cuda.Stream()
    live = []
    for i in range(400):
        size = 64 + (i * 7919) % (1 * MiB)
        if i % 5 == 0:
            with torch.cuda.stream(side):
                live.append(torch.empty(size, dtype=torch.uint8, device="cuda"))
        else:
            live.append(torch.empty(size, dtype=torch.uint8, device="cuda"))
        if i % 4 == 3:
            del live[(i * 3) % len(live)]
        if i % 97 == 96:
            del live[::2]
    del live


WORKLOADS = {"fragmenting_mix": fragmenting_mix, "small_tensors": small_tensors}
WORKLOADS[sys.argv[1]]()
torch.cuda.synchronize()
if len(sys.argv) > 2:
    with open(sys.argv[2], "wb") as out:
        pickle.dump(torch.cuda.memory._snapshot(), out)
print(json.dumps({"check": "done", "value": True}), flush=True)
