"""A training loop in miniature, in Python, driving the CUDA runtime through ctypes.

Each step allocates a temporary (the activations, freed at the end of the step) and a loss that the loop
keeps in a list, the way `total_loss += loss` keeps every step's graph alive in PyTorch: that list is
what `gpumemtrace growth` finds, with this file's line. Every few steps a validation pass allocates and
frees its own buffers.

    gpumemtrace run --sim -- python3 examples/python/train_loop.py --steps 20
    gpumemtrace growth gpumemtrace-PID.trace

It loads libcudart.so.13: NVIDIA's on a machine with a GPU, the simulated device's under `gpumemtrace run
--sim` (which puts it first on LD_LIBRARY_PATH). With the tool's Python module on the path
(PYTHONPATH=build/python), each step and each validation pass is a phase, and growth's windows are the steps.
"""

import argparse
import contextlib
import ctypes
import sys
import time

try:
    from gpumemtrace import phase
except ImportError:

    @contextlib.contextmanager
    def phase(name):
        yield

MiB = 1 << 20


class Cuda:
    """The few runtime calls the loop needs."""

    def __init__(self):
        self.runtime = ctypes.CDLL("libcudart.so.13")
        self.runtime.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
        self.runtime.cudaFree.argtypes = [ctypes.c_void_p]

    def alloc(self, size):
        pointer = ctypes.c_void_p()
        error = self.runtime.cudaMalloc(ctypes.byref(pointer), size)
        if error != 0:
            raise MemoryError(f"cudaMalloc of {size} bytes failed with CUDA error {error}")
        return pointer.value

    def free(self, pointer):
        self.runtime.cudaFree(pointer)


class Model:
    def __init__(self, cuda, layers, width):
        self.cuda = cuda
        self.width = width
        self.weights = [cuda.alloc(width * MiB) for _ in range(layers)]

    def forward(self, batch):
        return self.cuda.alloc(batch * self.width * 16 * 1024)  # the step's activations

    def loss(self):
        return self.cuda.alloc(MiB)  # a small tensor that holds on to its step


def train_step(model, batch, losses):
    activations = model.forward(batch)
    loss = model.loss()
    losses.append(loss)  # the bug: keeps every step's loss (use loss.item() in PyTorch)
    time.sleep(0.002)  # stands for the step's kernels
    model.cuda.free(activations)


def validate(model, batch):
    activations = model.forward(batch)
    model.cuda.free(activations)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--validate-every", type=int, default=5)
    args = parser.parse_args()

    cuda = Cuda()
    model = Model(cuda, layers=4, width=8)
    losses = []
    for step in range(1, args.steps + 1):
        with phase("step"):
            train_step(model, args.batch, losses)
        if step % args.validate_every == 0:
            with phase("validation"):
                validate(model, args.batch)
    print(f"train_loop.py: {args.steps} steps, {len(losses)} losses kept")
    return 0


if __name__ == "__main__":
    sys.exit(main())
