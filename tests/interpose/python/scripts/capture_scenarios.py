"""Python programs that allocate GPU memory, run under libgpumemtrace.so (interpose/) on the simulated device.

Run as:  python3.X capture_scenarios.py <path of the simulated libcudart.so.13> <scenario>

Each scenario allocates with cudaMalloc, called through ctypes, from known functions; a size of its own
tells its allocations apart. The test (python_capture_test.cpp) reads the trace and checks the Python frames
of each allocation against the lines marked `# <site:NAME>` here. Kept valid for Python 3.9, which the
tracer does not read frames of (the test checks that it says so and keeps native stacks).
"""
import asyncio
import ctypes
import multiprocessing
import sys
import threading

MiB = 1 << 20

RT = ctypes.CDLL(sys.argv[1])
RT.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
RT.cudaMalloc.restype = ctypes.c_int
RT.cudaFree.argtypes = [ctypes.c_void_p]
RT.cudaFree.restype = ctypes.c_int


def check(condition, message):
    if not condition:
        print("failed: " + message)
        sys.exit(2)


def freed(pointer):
    check(RT.cudaFree(pointer) == 0, "cudaFree failed")


# --- a known function -----------------------------------------------------------------------------------

def allocate_weights():
    weights = ctypes.c_void_p()
    check(RT.cudaMalloc(ctypes.byref(weights), 3 * MiB) == 0, "cudaMalloc failed")  # <site:weights>
    return weights


def scenario_known_function():
    freed(allocate_weights())  # <site:weights_call>


# --- a temporary per step and an accumulating list -------------------------------------------------------

HISTORY = []


def train_step():
    scratch = ctypes.c_void_p()
    RT.cudaMalloc(ctypes.byref(scratch), 1 * MiB)  # <site:scratch>
    freed(scratch)
    kept = ctypes.c_void_p()
    RT.cudaMalloc(ctypes.byref(kept), 2 * MiB)  # <site:history>
    HISTORY.append(kept)


def scenario_temp_and_history():
    for _ in range(5):
        train_step()


# --- methods ---------------------------------------------------------------------------------------------

class Model:
    def forward(self):
        activations = ctypes.c_void_p()
        RT.cudaMalloc(ctypes.byref(activations), 4 * MiB)  # <site:method>
        return activations

    @classmethod
    def build(cls):
        parameters = ctypes.c_void_p()
        RT.cudaMalloc(ctypes.byref(parameters), 10 * MiB)  # <site:classmethod>
        return parameters


def scenario_method():
    freed(Model().forward())  # <site:method_call>
    freed(Model.build())  # <site:classmethod_call>


# --- a generator -----------------------------------------------------------------------------------------

def buffers(count):
    for _ in range(count):
        buffer = ctypes.c_void_p()
        RT.cudaMalloc(ctypes.byref(buffer), 5 * MiB)  # <site:generator>
        yield buffer


def scenario_generator():
    for buffer in buffers(2):  # <site:generator_call>
        freed(buffer)


# --- async def under asyncio -----------------------------------------------------------------------------

async def load_layer():
    await asyncio.sleep(0)
    layer = ctypes.c_void_p()
    RT.cudaMalloc(ctypes.byref(layer), 6 * MiB)  # <site:async>
    return layer


async def load_model():
    return await load_layer()  # <site:async_call>


def scenario_async():
    freed(asyncio.run(load_model()))


# --- a threading.Thread ----------------------------------------------------------------------------------

def thread_body(out):
    pointer = ctypes.c_void_p()
    RT.cudaMalloc(ctypes.byref(pointer), 11 * MiB)  # <site:thread>
    out.append(pointer)


def scenario_thread():
    out = []
    thread = threading.Thread(target=thread_body, args=(out,))
    thread.start()
    thread.join()
    freed(out[0])


# --- recursion deeper than the stack depth (the test sets GPUMEMTRACE_STACK_DEPTH) ------------------------

def recurse(depth):
    if depth == 0:
        pointer = ctypes.c_void_p()
        RT.cudaMalloc(ctypes.byref(pointer), 7 * MiB)  # <site:recursion>
        return pointer
    return recurse(depth - 1)  # <site:recurse_call>


def scenario_deep_recursion():
    freed(recurse(100))


# --- Python -> native -> Python -> native: a ctypes callback that allocates, called by libc's qsort ------

CALLBACK_BUFFERS = []
COMPARE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))


def compare(a, b):
    if not CALLBACK_BUFFERS:
        pointer = ctypes.c_void_p()
        RT.cudaMalloc(ctypes.byref(pointer), 8 * MiB)  # <site:callback>
        CALLBACK_BUFFERS.append(pointer)
    return a[0] - b[0]


def sort_with_callback():
    libc = ctypes.CDLL("libc.so.6")
    values = (ctypes.c_int * 2)(2, 1)
    libc.qsort(values, 2, ctypes.sizeof(ctypes.c_int), COMPARE(compare))  # <site:qsort_call>
    check(list(values) == [1, 2], "qsort did not sort")


def scenario_callback():
    sort_with_callback()
    freed(CALLBACK_BUFFERS[0])


# --- a multiprocessing child started with fork -----------------------------------------------------------

def child_allocates():
    pointer = ctypes.c_void_p()
    RT.cudaMalloc(ctypes.byref(pointer), 9 * MiB)  # <site:child>
    freed(pointer)


def scenario_fork_child():
    context = multiprocessing.get_context("fork")
    process = context.Process(target=child_allocates)
    process.start()
    process.join(120)
    check(process.exitcode == 0, "child exit code %r" % process.exitcode)


# --- code objects freed and others born at their addresses ---------------------------------------------

def scenario_reborn_code():
    """16 functions compiled, called and freed one after another, each allocating (i + 1) KiB: CPython puts
    each code object and its line table where the last ones were. They have the same bytecode but start on
    different lines, so the allocation of (i + 1) KiB must be at line i + 2 of "<reborn>"."""
    import gc
    for i in range(16):
        source = "%sdef reborn(size):\n    return freed(allocated(size))\n" % ("\n" * i)
        namespace = {"freed": freed, "allocated": allocated}
        exec(compile(source, "<reborn>", "exec"), namespace)
        namespace["reborn"]((i + 1) * 1024)
        del namespace
        gc.collect()


def allocated(size):
    pointer = ctypes.c_void_p()
    check(RT.cudaMalloc(ctypes.byref(pointer), size) == 0, "cudaMalloc failed")  # <site:allocated>
    return pointer


if __name__ == "__main__":
    globals()["scenario_" + sys.argv[2]]()
    print("ok " + sys.argv[2])
