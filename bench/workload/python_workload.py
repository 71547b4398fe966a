"""The capture benchmark's Python workload: cudaMalloc/cudaFree pairs called through ctypes, from a Python
stack `--depth` frames deep (plus the script's own two), on the simulated device (or a real one), plain and
under libgpumemtrace.so with and without Python frames (bench/runner/python_bench.cpp).

Run as:  python3.X python_workload.py LIBCUDART [--pairs N] [--depth D]
"""
import ctypes
import sys


def main():
    runtime = ctypes.CDLL(sys.argv[1])
    options = dict(zip(sys.argv[2::2], sys.argv[3::2]))
    pairs, depth = int(options.get("--pairs", 100000)), int(options.get("--depth", 20))
    runtime.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
    runtime.cudaMalloc.restype = ctypes.c_int
    runtime.cudaFree.argtypes = [ctypes.c_void_p]
    runtime.cudaFree.restype = ctypes.c_int
    if runtime.cudaFree(None) != 0:  # the context exists before the loop
        sys.exit("python_workload: no CUDA device")

    def loop():
        pointer = ctypes.c_void_p()
        malloc, free, out = runtime.cudaMalloc, runtime.cudaFree, ctypes.byref(pointer)
        for _ in range(pairs):
            if malloc(out, 4096) != 0 or free(pointer) != 0:
                sys.exit("python_workload: cudaMalloc/cudaFree failed")

    def at_depth(remaining):
        if remaining > 1:
            return at_depth(remaining - 1)
        return loop()

    at_depth(depth)


if __name__ == "__main__":
    main()
