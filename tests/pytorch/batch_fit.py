"""A training-like loop whose memory grows with the batch, for `gpumemtrace fit` (tests/pytorch/fit_test.cpp):
argv[1] is the batch size. Elementwise only (the simulated device has no cuBLAS): 16 MiB of weights that stay,
and per step an input of batch x 1 MiB, four layers' activations of the same size kept until the step ends, and
their temporaries. The tracer's PyTorch hook records the history and writes the snapshot at exit. Prints
{"check": "max_reserved", "value": bytes} and {"check": "done", "value": true} when the loop ran to the end; a
batch that does not fit ends in torch.OutOfMemoryError (exit 1)."""

import json
import sys

import torch

batch = int(sys.argv[1])
torch.manual_seed(0)
weights = [torch.randn(1024, 1024, device="cuda") for _ in range(4)]
for step in range(3):
    x = torch.randn(batch, 256 * 1024, device="cuda")
    activations = []
    for layer, w in enumerate(weights):
        x = torch.tanh(x * w[layer, 0] + w[0, layer])
        activations.append(x)
    loss = torch.stack([a.sum() for a in activations]).sum()
    del x, activations, loss
torch.cuda.synchronize()
print(json.dumps({"check": "max_reserved", "value": torch.cuda.max_memory_reserved()}), flush=True)
print(json.dumps({"check": "done", "value": True}), flush=True)
