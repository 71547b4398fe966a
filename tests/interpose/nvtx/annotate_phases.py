"""The Python module gpumemtrace: phases around cudaMalloc calls made through ctypes.
Run as: python3 annotate_phases.py <path of the simulated libcudart.so.13>
Prints whether the tracer was found and what it did; the rest of the output is the same either way."""

import ctypes
import sys

import gpumemtrace

RT = ctypes.CDLL(sys.argv[1])
RT.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
RT.cudaFree.argtypes = [ctypes.c_void_p]
kept = []


def allocate(size):
    ptr = ctypes.c_void_p()
    assert RT.cudaMalloc(ctypes.byref(ptr), size) == 0
    kept.append(ptr)


with gpumemtrace.phase("train"):
    allocate(401)
    with gpumemtrace.phase("validation"):
        allocate(402)
    allocate(403)
allocate(404)
for ptr in kept:
    assert RT.cudaFree(ptr) == 0
print("active" if gpumemtrace.active() else "inactive")
print("done", len(kept))
