"""The Python module gpumemtrace: a heap in one cudaMalloc segment, with blocks handed out and returned.
Run as: python3 annotate_heaps.py <path of the simulated libcudart.so.13>
Prints whether the tracer was found and what it did; the rest of the output is the same either way."""

import ctypes
import sys

import gpumemtrace

RT = ctypes.CDLL(sys.argv[1])
RT.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
RT.cudaFree.argtypes = [ctypes.c_void_p]

segment = ctypes.c_void_p()
assert RT.cudaMalloc(ctypes.byref(segment), 1 << 20) == 0
base = segment.value
heap = gpumemtrace.heap_create("python", device=0, base=base, size=1 << 20)
gpumemtrace.suballoc(heap, base, 700, reserved=1024)
gpumemtrace.suballoc_name(heap, base, "embedding")
gpumemtrace.suballoc(heap, base + 1024, 512)
gpumemtrace.subfree(heap, base)
gpumemtrace.heap_reset(heap)
gpumemtrace.heap_destroy(heap)
assert RT.cudaFree(segment) == 0
print("active" if gpumemtrace.active() else "inactive")
print("heap", "given" if heap else "none")
