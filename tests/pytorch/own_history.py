"""A program that records PyTorch's allocation history itself (tests/pytorch/pytorch_test.cpp): the tracer's hook
must leave its settings alone. Prints one JSON object: the history's length after three allocations."""

import json

import torch

torch.cuda.memory._record_memory_history(max_entries=3)
tensors = [torch.empty(1 << 20, device="cuda") for _ in range(5)]
print(json.dumps({"history": len(torch.cuda.memory._snapshot()["device_traces"][0])}), flush=True)
