"""A scripted sequence on PyTorch's caching allocator (tests/pytorch/pytorch_test.cpp): two streams, record_stream,
events, elementwise operations, a reduction, autograd and optimizer steps, empty_cache. Prints one JSON object per
line: {"step": name, "allocated": ..., "reserved": ..., "max_reserved": ..., "free": ..., "total": ...} and a few
{"check": name, "value": ...} lines. The simulated device runs no kernels: only copies and memsets have values."""

import json
import sys

import torch

MiB = 1 << 20


def figures(step):
    free, total = torch.cuda.mem_get_info()
    print(json.dumps({"step": step, "allocated": torch.cuda.memory_allocated(),
                      "reserved": torch.cuda.memory_reserved(), "max_reserved": torch.cuda.max_memory_reserved(),
                      "free": free, "total": total}), flush=True)


def check(name, value):
    print(json.dumps({"check": name, "value": value}), flush=True)


def floats(n_bytes):
    return n_bytes // 4


check("is_available", torch.cuda.is_available())
check("device_count", torch.cuda.device_count())
check("device_name", torch.cuda.get_device_name(0))
figures("start")

a = torch.empty(1000, device="cuda")  # 4000 bytes: small pool, a 2 MiB segment
figures("small")
b = torch.zeros(floats(3 * MiB), device="cuda")  # large pool, a 20 MiB segment
figures("large")

side = torch.cuda.Stream()
with torch.cuda.stream(side):
    c = torch.ones(floats(4 * MiB), device="cuda")  # another stream: its own 20 MiB segment
    b.record_stream(side)
figures("side_stream")
done = torch.cuda.Event(enable_timing=True)
done.record(side)
done.synchronize()
check("event_query", done.query())
del b  # in use on `side` until its event completes
figures("record_stream_free")

d = torch.empty(floats(12 * MiB), device="cuda")  # b's block, back after the event: split from the 20 MiB segment
figures("reuse")
e = torch.empty(floats(25 * MiB), device="cuda")  # a 26 MiB segment, the 1 MiB left over not split off
figures("unsplit_remainder")
del e
figures("cached")
torch.cuda.empty_cache()  # returns e's whole segment; the others hold live blocks
figures("empty_cache")

# Values travel through copies, which the simulated device does perform.
host = torch.arange(1000, dtype=torch.float32)
check("round_trip", bool(torch.equal(host.to("cuda").cpu(), host)))
pinned = torch.arange(256, dtype=torch.int64).pin_memory()
check("pinned_round_trip", bool(torch.equal(pinned.to("cuda", non_blocking=True).cpu(), pinned)))
del host, pinned
figures("copies")

x = torch.full((1000,), 2.0, device="cuda")
y = x * 2 + 1  # the temporary of x * 2 is freed at once
s = y.sum()
figures("elementwise")
del x, y, s

weight = torch.nn.Parameter(torch.zeros(floats(MiB), device="cuda"))
model = torch.nn.Sequential(torch.nn.Tanh(), torch.nn.ReLU())
optimizer = torch.optim.Adam([weight])
figures("model")
loss = model(weight * 3).sum()
loss.backward()
figures("backward")
optimizer.step()
figures("adam_step")
optimizer.zero_grad(set_to_none=True)
del loss
figures("zero_grad")
torch.optim.SGD([weight], lr=0.1, momentum=0.9).step()  # no gradient: nothing to do
figures("sgd_without_grad")

torch.cuda.synchronize()
stats = torch.cuda.memory_stats()
check("num_alloc_retries", stats["num_alloc_retries"])
check("segment_count", stats["segment.all.current"])
check("summary_has_title", "PyTorch CUDA memory summary" in torch.cuda.memory_summary())

del a, c, d, weight, optimizer, model
torch.cuda.empty_cache()
figures("end")
sys.exit(0)
