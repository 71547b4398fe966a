"""Tests with GPU memory budgets, for the pytest plugin's own test (pytest_plugin_test.cpp): pytest runs them
under the tracer on the simulated device. Each allocates known sizes through ctypes."""

import ctypes

import pytest

MiB = 1 << 20

_cudart = ctypes.CDLL("libcudart.so.13")
_cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
_cudart.cudaFree.argtypes = [ctypes.c_void_p]


def malloc(size):
    pointer = ctypes.c_void_p()
    assert _cudart.cudaMalloc(ctypes.byref(pointer), size) == 0
    return pointer.value


def free(pointer):
    assert _cudart.cudaFree(pointer) == 0


@pytest.mark.limit_gpu_memory("8MiB")
def test_within_budget():
    first = malloc(4 * MiB)
    second = malloc(4 * MiB)  # 8 MiB at once: exactly the budget
    free(first)
    free(second)


@pytest.mark.limit_gpu_memory("8MiB")
def test_over_budget():
    weights = malloc(8 * MiB)
    extra = malloc(4096)  # 8 MiB + 4096 B at once
    free(extra)
    free(weights)


@pytest.mark.limit_gpu_leaks("0B")
def test_leaves_memory_allocated():
    malloc(MiB)


@pytest.mark.limit_gpu_memory("lots")
def test_with_a_bad_budget():
    free(malloc(MiB))


def test_without_budget():
    free(malloc(64 * MiB))
