"""A PyTorch training loop with the classic memory bugs a flag away.

An elementwise model (no matrix products: it runs on the simulated device, where cuBLAS cannot), autograd, Adam,
a data loader that moves host batches to the GPU, and a validation pass. Each training step is an instance of
the phase "train" (growth's windows), validation is the phase "validation".

    gpumemtrace run --sim --sim-memory 2GiB -o train.trace -- python examples/pytorch/train.py --accumulate
    gpumemtrace growth train.trace

    --accumulate        total_loss += loss: each step's graph stays alive (and the activations it holds)
    --no-grad-missing   validation without torch.no_grad(): its activations are kept for a graph nobody uses
    --fragment          sequence lengths that change every step, a slice of each step's output kept: the cache
                        fragments until PyTorch runs out of memory with free memory in its segments
    --expandable        PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (set before torch touches CUDA)

On the simulated device kernels do not run: the values are meaningless, the memory is PyTorch's own.
"""

import argparse
import contextlib
import os


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, help="training steps (12; 30 with --fragment)")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--length", type=int, default=128, help="positions per sample (--fragment: the first step's)")
    parser.add_argument("--features", type=int, default=1024)
    parser.add_argument("--validation-batches", type=int, default=4)
    parser.add_argument("--accumulate", action="store_true")
    parser.add_argument("--no-grad-missing", action="store_true")
    parser.add_argument("--fragment", action="store_true")
    parser.add_argument("--expandable", action="store_true")
    args = parser.parse_args()
    if args.steps is None:
        args.steps = 30 if args.fragment else 12
    return args


args = parse_args()
if args.expandable:
    # PyTorch reads it once, when its allocator starts: before the first CUDA call.
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"

import torch  # noqa: E402

try:
    from gpumemtrace import phase
except ImportError:  # not traced, or the tool's module not on PYTHONPATH

    def phase(name):
        return contextlib.nullcontext()


class Swish(torch.autograd.Function):
    """x * sigmoid(x), written by hand. Like many hand-written Functions it keeps its input on ctx instead of
    ctx.save_for_backward, so backward() cannot free it: the input lives as long as the graph does."""

    @staticmethod
    def forward(ctx, x):
        ctx.x = x
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad):
        s = torch.sigmoid(ctx.x)
        return grad * s * (1 + ctx.x * (1 - s))


class Model(torch.nn.Module):
    """Two elementwise layers: a scale and a shift per feature, Swish between them."""

    def __init__(self, features):
        super().__init__()
        self.scale1 = torch.nn.Parameter(torch.ones(features))
        self.shift1 = torch.nn.Parameter(torch.zeros(features))
        self.scale2 = torch.nn.Parameter(torch.ones(features))

    def forward(self, x):
        hidden = Swish.apply(x * self.scale1 + self.shift1)
        return hidden * self.scale2


def lengths(args):
    """The sequence length of each step: fixed, or with --fragment a curriculum, 8 positions longer every step."""
    if not args.fragment:
        return [args.length] * args.steps
    return [args.length + 8 * step for step in range(args.steps)]


def dataset(samples, length, features):
    """Inputs and targets on the host, made once."""
    generator = torch.Generator().manual_seed(0)
    return (torch.randn((samples, length, features), generator=generator),
            torch.randn((samples, length, features), generator=generator))


def batches(data, batch, step_lengths):
    """The data loader: host batches (inputs, targets) cut to each step's length, as a DataLoader gives them."""
    inputs, targets = data
    for step, length in enumerate(step_lengths):
        start = step * batch % len(inputs)
        yield inputs[start:start + batch, :length], targets[start:start + batch, :length]


def validate(model, data, args):
    total = 0.0
    loader = batches(data, args.batch, [args.length] * args.validation_batches)
    grad_mode = contextlib.nullcontext() if args.no_grad_missing else torch.no_grad()
    with grad_mode:
        for inputs, targets in loader:
            inputs, targets = inputs.to("cuda"), targets.to("cuda")
            loss = ((model(inputs) - targets) ** 2).mean()
            total += loss.item()
    return total / args.validation_batches


def main():
    model = Model(args.features).to("cuda")
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    step_lengths = lengths(args)
    data = dataset(2 * args.batch, max(step_lengths), args.features)
    loader = batches(data, args.batch, step_lengths)
    total_loss = 0.0
    kept = []
    for step, (inputs, targets) in enumerate(loader):
        with phase("train"):
            inputs, targets = inputs.to("cuda"), targets.to("cuda")
            outputs = model(inputs)
            loss = ((outputs - targets) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if args.accumulate:
                total_loss += loss  # the bug: keeps the step's graph; total_loss += loss.item() keeps a number
            else:
                total_loss += loss.item()
            if args.fragment:
                kept.append(outputs[:8].detach().clone())  # a slice of each step's output, kept for a report
        print(f"step {step} length {step_lengths[step]} allocated {torch.cuda.memory_allocated()} "
              f"reserved {torch.cuda.memory_reserved()}", flush=True)
    with phase("validation"):
        validation_loss = validate(model, data, args)
    print(f"trained {args.steps} steps, loss {float(total_loss) / args.steps:.3f}, validation {validation_loss:.3f}; "
          f"peak allocated {torch.cuda.max_memory_allocated()} reserved {torch.cuda.max_memory_reserved()}",
          flush=True)


if __name__ == "__main__":
    main()
