"""Workloads for the allocator model's oracle (tests/pytorch/allocator_replay_test.cpp): PyTorch's history is on
from before the first allocation, and the workload named by argv[1] runs. The tracer's hook writes the snapshot at
exit; with argv[2] the snapshot is also written there. Prints {"check": "max_reserved", "value": bytes} (PyTorch's
peak reserved) and {"check": "done", "value": true} at the end."""

import contextlib
import json
import os
import pickle
import sys

import torch

MiB = 1 << 20
# Stacks only when asked (ALLOCATOR_REPLAY_STACKS=1): recording them makes the longer workloads take minutes.
context = "alloc" if os.environ.get("ALLOCATOR_REPLAY_STACKS") == "1" else None
torch.cuda.memory._record_memory_history(enabled="all", context=context, stacks="python", max_entries=1_000_000)


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


def record_stream():
    """Tensors made on the default stream, used on two side streams (record_stream) and freed while those may
    still use them: their blocks go back to the cache only when the side streams' events complete."""
    sides = [torch.cuda.Stream(), torch.cuda.Stream()]
    sizes = [300 * 1024, 3 * MiB, 12 * MiB + 5, 700, 30 * MiB, 1 * MiB + 1]
    live = []
    for i in range(120):
        tensor = torch.empty(sizes[(i * 5) % len(sizes)], dtype=torch.uint8, device="cuda")
        side = sides[i % 2]
        if i % 3 != 0:
            with torch.cuda.stream(side):
                tensor.fill_(1)
            tensor.record_stream(side)
        live.append(tensor)
        if i % 2 == 1:
            del live[(i * 7) % len(live)]
        if i % 13 == 12:
            sides[(i // 13) % 2].synchronize()
            del live[: len(live) // 2]
    del live


def adam_training():
    """A training loop with Adam: an elementwise model (no matrix products, which the simulated device cannot
    run), its gradients and Adam's two moments per parameter, the batch and its activations per step."""
    torch.manual_seed(0)
    params = [torch.nn.Parameter(torch.randn(shape, device="cuda")) for shape in
              [(1024, 1024), (1024,), (4096, 512), (512,), (300, 700), (2 * 1024 * 1024,)]]
    optimizer = torch.optim.Adam(params, lr=1e-3)
    for step in range(6):
        batch = torch.randn(64 + 16 * step, 1024, device="cuda")
        x = batch * params[0][: batch.shape[0]] + params[1]
        x = torch.tanh(x).sum() * params[2].mean() + (params[3] * params[4].sum()).sum()
        loss = x + params[5].pow(2).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        del batch, x, loss


def memory_fraction_gc():
    """A memory fraction of 1/32 of the device (512 MiB of 16 GiB; ALLOCATOR_REPLAY_FRACTION sets another) with
    garbage_collection_threshold (set by the test in PYTORCH_CUDA_ALLOC_CONF): each round frees large tensors whose
    blocks no later request fits, so the cache grows past the threshold and garbage collection releases the older
    cached segments."""
    torch.cuda.set_per_process_memory_fraction(float(os.environ.get("ALLOCATOR_REPLAY_FRACTION", 1 / 32)))
    live = []
    for round_ in range(12):
        size = (22 + 6 * round_) * MiB
        for i in range(3):
            live.append(torch.empty(size + i * MiB, dtype=torch.uint8, device="cuda"))
        small = [torch.empty(4 * MiB + i, dtype=torch.uint8, device="cuda") for i in range(4)]
        del small
        del live[:3]
    del live


def tail_waste():
    """145 tensors of 6 MiB, in the phase "fill", 29 to a phase "batch" in it: three fill a 20 MiB segment and leave
    2 MiB no later request fits, so a device too small for the segments runs out of memory with that much cached;
    out of memory is caught and printed as {"check": "out_of_memory_at", "value": request}."""
    try:
        from gpumemtrace import phase
    except ImportError:  # the tool's module not on PYTHONPATH

        def phase(name):
            return contextlib.nullcontext()

    live = []
    with phase("fill"):
        try:
            for _ in range(5):
                with phase("batch"):
                    for _ in range(29):
                        live.append(torch.empty(6 * MiB, dtype=torch.uint8, device="cuda"))
        except torch.OutOfMemoryError:
            print(json.dumps({"check": "out_of_memory_at", "value": len(live)}), flush=True)
    del live


def two_devices():
    """fragmenting_mix on cuda:0, then tail_waste on cuda:1 (GPUMEMTRACE_SIM_DEVICES=2); prints each device's peak
    reserved as {"check": "max_reserved_<device>", "value": bytes}."""
    for device, workload in ((0, fragmenting_mix), (1, tail_waste)):
        with torch.cuda.device(device):
            workload()
            torch.cuda.synchronize()
        print(json.dumps({"check": f"max_reserved_{device}", "value": torch.cuda.max_memory_reserved(device)}),
              flush=True)


WORKLOADS = {"fragmenting_mix": fragmenting_mix, "small_tensors": small_tensors, "record_stream": record_stream,
             "adam_training": adam_training, "memory_fraction_gc": memory_fraction_gc,
             "tail_waste": tail_waste, "two_devices": two_devices}
WORKLOADS[sys.argv[1]]()
torch.cuda.synchronize()
if len(sys.argv) > 2:
    with open(sys.argv[2], "wb") as out:
        pickle.dump(torch.cuda.memory._snapshot(), out)
print(json.dumps({"check": "max_reserved", "value": torch.cuda.max_memory_reserved()}), flush=True)
print(json.dumps({"check": "done", "value": True}), flush=True)
