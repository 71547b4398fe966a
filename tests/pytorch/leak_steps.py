# The forecast's loop in PyTorch (pytorch/forecast_test.cpp): every step, phase "step", keeps a tensor of
# KEEP_MIB (the leak) and uses a small one; with SETTLE only the last SETTLE steps' tensors are kept.
#   leak_steps.py STEPS KEEP_MIB [SETTLE]
# A request above 10 MiB gets a segment of its own size from cudaMalloc, so the device holds 2 MiB (the small
# tensor's segment) + N x KEEP_MIB in step N. On a 2 GiB device with 12 MiB kept, step 171 is the first that
# does not fit (12 x 171 = 2052 MiB > 2048 MiB even without the small segment): it prints {"oom_step": 171}.
import json
import sys

import gpumemtrace
import torch

MiB = 1 << 20
steps, keep_mib = int(sys.argv[1]), int(sys.argv[2])
settle = int(sys.argv[3]) if len(sys.argv) > 3 else 0
kept = []


def train_step():
    kept.append(torch.empty(keep_mib * MiB, dtype=torch.uint8, device="cuda"))  # the line that keeps memory
    if settle and len(kept) > settle:
        kept.pop(0)
    work = torch.empty(256 * 1024, dtype=torch.uint8, device="cuda")
    del work


step = 0
try:
    for step in range(1, steps + 1):
        with gpumemtrace.phase("step"):
            train_step()
except torch.OutOfMemoryError:
    print(json.dumps({"oom_step": step}), flush=True)
    sys.exit(3)
print(json.dumps({"steps": steps}), flush=True)
