"""A PyTorch program in miniature, run under libgpumemtrace.so with the test double of torch (fake_torch/) on the
simulated device: the PyTorch hook (python/gpumemtrace/torch_hook.py) must start in it, record, write its
snapshots and change nothing else.

Run as:  python3 torch_workload.py <scenario> [<path of the gpumemtrace command>]
Its output is the same with and without the tracer, except where a scenario prints what the tracer did.
"""
import ctypes
import faulthandler
import os
import signal
import subprocess
import sys
import threading
import time

KiB, MiB = 1 << 10, 1 << 20

# A deadlock ends the run with every thread's stack instead of hanging the test.
faulthandler.dump_traceback_later(120, exit=True)


def runtime():
    lib = ctypes.CDLL("libcudart.so.13")
    lib.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
    lib.cudaFree.argtypes = [ctypes.c_void_p]
    return lib


def cuda_malloc_directly(size):
    """For a process without torch's CUDA: the tracer's hook starts at any first GPU allocation."""
    lib = runtime()
    pointer = ctypes.c_void_p()
    assert lib.cudaMalloc(ctypes.byref(pointer), size) == 0
    assert lib.cudaFree(pointer) == 0


def train(torch):
    """Tensors in the small and the large pool; some freed. Returns those still held."""
    alloc, delete = torch.cuda.caching_allocator_alloc, torch.cuda.caching_allocator_delete
    alloc(1000)  # the first GPU allocation: the tracer schedules the hook, which runs before the next call
    held = [alloc(size) for size in (300 * KiB, 300 * KiB, 700 * KiB, 3 * MiB, 5 * MiB, 12 * MiB, 25 * MiB)]
    for index in (1, 4):
        delete(held[index])
    print("allocated %d reserved %d" % (torch.cuda.memory_allocated(), torch.cuda.memory_reserved()))
    return held


def scenario_train():
    import torch
    if not torch.cuda.is_available():
        cuda_malloc_directly(4 * MiB)
        print("no CUDA in torch %s" % torch.__version__)
        return
    train(torch)


def scenario_no_torch():
    cuda_malloc_directly(4 * MiB)
    print("torch imported: %s" % ("torch" in sys.modules))


def scenario_oom():
    import torch
    train(torch)
    held = []
    try:
        while True:
            held.append(torch.cuda.caching_allocator_alloc(30 * MiB))
    except torch.cuda.OutOfMemoryError:
        print("out of memory after %d tensors of 30 MiB" % len(held))
    for pointer in held:
        torch.cuda.caching_allocator_delete(pointer)


def ask_for_snapshot(gpumemtrace):
    """Runs `gpumemtrace snapshot` on this process and keeps running Python (where signal handlers run) until
    it ends; prints what it said."""
    env = {name: value for name, value in os.environ.items() if name != "LD_PRELOAD"}
    command = subprocess.Popen([gpumemtrace, "snapshot", str(os.getpid())], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    while command.poll() is None:
        time.sleep(0.01)
    out, err = command.communicate()
    print("snapshot command exit %d" % command.returncode)
    print("snapshot command stdout: %s" % out.strip())
    print("snapshot command stderr: %s" % err.strip())


def scenario_usr1():
    import torch
    train(torch)
    ask_for_snapshot(sys.argv[2])


def scenario_usr1_chained():
    signal.signal(signal.SIGUSR1, lambda signum, frame: print("the program's SIGUSR1 handler ran"))
    scenario_usr1()


def scenario_usr1_untaken():
    """The hook is off (GPUMEMTRACE_TORCH=0, or no torch): the command must refuse, or this process would die."""
    cuda_malloc_directly(4 * MiB)
    ask_for_snapshot(sys.argv[2])
    print("still running")


def scenario_threads():
    """Threads allocate while the hook starts on the main thread, snapshots are taken on SIGUSR1 and one thread
    runs out of memory: the tracer's hooks run under the allocator's lock without the GIL, the hook's calls
    take that lock with the GIL."""
    import torch
    alloc, delete = torch.cuda.caching_allocator_alloc, torch.cuda.caching_allocator_delete
    trace = os.environ["GPUMEMTRACE_OUTPUT_ROOT"]
    started = threading.Barrier(4)

    def worker():
        started.wait()
        for _ in range(100):
            delete(alloc(3 * MiB))
            torch.cuda.empty_cache()  # the next one is a cudaMalloc again

    workers = [threading.Thread(target=worker) for _ in range(3)]
    for thread in workers:
        thread.start()
    started.wait()
    while signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL:  # a worker's allocation starts the hook, here
        time.sleep(0.001)
    for n in range(1, 4):
        os.kill(os.getpid(), signal.SIGUSR1)
        while not os.path.exists("%s.torch-usr1-%d.pickle" % (trace, n)):
            delete(alloc(1000))
    for thread in workers:
        thread.join()

    def too_large():
        try:
            alloc(64 << 30)
        except torch.cuda.OutOfMemoryError:
            print("out of memory in a thread")

    failing = threading.Thread(target=too_large)
    failing.start()
    failing.join()
    print("threads done")


if __name__ == "__main__":
    globals()["scenario_" + sys.argv[1]]()
