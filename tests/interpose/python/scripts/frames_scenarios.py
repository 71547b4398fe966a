# -*- coding: utf-8 -*-
"""Scenarios for the GIL-free Python frame walker (interpose/stacks/python).

Run as:  python3.X frames_scenarios.py <path of libpython_stack_probe.so> <scenario>

The probe is loaded with ctypes.CDLL, which releases the GIL around every call, as a native hook would
run. Each scenario asserts on the frames the probe reports (file, line, qualified name, entry flag) and
exits 0 when they are right. Python 3.10 code objects have no qualified name: the walker reports the
plain name there, and so the expectations below do.
"""
import asyncio
import ctypes
import multiprocessing
import os
import sys
import threading
import time

PROBE = ctypes.CDLL(sys.argv[1])
PROBE.gmt_probe_status.restype = ctypes.c_int
PROBE.gmt_probe_status.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
PROBE.gmt_probe_walk.restype = ctypes.c_long
PROBE.gmt_probe_walk.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_size_t]
PROBE.gmt_probe_walk_in_native_thread.restype = ctypes.c_long
PROBE.gmt_probe_identity_check.restype = ctypes.c_int
PROBE.gmt_probe_walk_loop.restype = ctypes.c_long
PROBE.gmt_probe_walk_loop.argtypes = [ctypes.c_double]
PROBE.gmt_probe_bench.restype = ctypes.c_int
PROBE.gmt_probe_bench.argtypes = [ctypes.c_size_t, ctypes.c_size_t, ctypes.POINTER(ctypes.c_double),
                                  ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_size_t)]
CALLBACK = ctypes.CFUNCTYPE(None)
PROBE.gmt_probe_call_back.argtypes = [CALLBACK]

THIS_FILE = os.path.realpath(__file__)
QUALNAMES = sys.version_info >= (3, 11)
EVERY_FRAME_IS_ENTRY = sys.version_info < (3, 11)


class Frame:
    def __init__(self, file, line, qualname, entry):
        self.file, self.line, self.qualname, self.entry = file, line, qualname, entry

    def __repr__(self):
        return "%s:%d in %s%s" % (self.file, self.line, self.qualname, " [entry]" if self.entry else "")


class Frames(list):
    truncated = False


def parse(text):
    frames = Frames()
    for line in text.splitlines():
        if line == "[truncated]":
            frames.truncated = True
            continue
        entry = line.endswith(" [entry]")
        if entry:
            line = line[: -len(" [entry]")]
        where, qualname = line.split(" in ", 1)
        file, number = where.rsplit(":", 1)
        frames.append(Frame(file, int(number), qualname, entry))
    return frames


def walk(max_frames=256):
    """The calling thread's frames as the probe sees them; frames[0] is this function."""
    buf = ctypes.create_string_buffer(1 << 20)
    count = PROBE.gmt_probe_walk(buf, len(buf), max_frames)  # <walk-call>
    check(count >= 0, "the probe cannot read frames")
    frames = parse(buf.value.decode("utf-8", "surrogateescape"))
    check(len(frames) == count, "count %d, %d lines" % (count, len(frames)))
    return frames


WALK_LINE = next(i for i, text in enumerate(open(__file__, encoding="utf-8"), 1)
                 if "# <walk-call>" in text and "WALK_LINE" not in text)


def this_line():
    return sys._getframe(1).f_lineno


def q(qualname):
    """The name the walker reports for `qualname` on this version."""
    return qualname if QUALNAMES else qualname.rsplit(".", 1)[-1]


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def expect_names(frames, names):
    got = [f.qualname for f in frames]
    check(got == [q(n) for n in names], "qualified names %r, expected %r" % (got, [q(n) for n in names]))


def expect_entries(frames, entries):
    """`entries`: the entry flags on 3.11+; on 3.10 every frame is its own evaluation."""
    want = [True] * len(entries) if EVERY_FRAME_IS_ENTRY else entries
    got = [f.entry for f in frames]
    check(got == want, "entry flags %r, expected %r" % (got, want))


def expect_frame(frame, qualname, line, file=THIS_FILE):
    check(frame.qualname == q(qualname), "qualname %r, expected %r" % (frame.qualname, q(qualname)))
    check(frame.line == line, "%s: line %d, expected %d" % (frame.qualname, frame.line, line))
    check(os.path.realpath(frame.file) == file if file == THIS_FILE else frame.file == file,
          "%s: file %r, expected %r" % (frame.qualname, frame.file, file))


# --- a known function ---------------------------------------------------------------------------------

def known_function():
    frames, here = walk(), this_line()
    return frames, here


def scenario_known_function():
    call_line = this_line() + 1
    frames, here = known_function()
    expect_names(frames, ["walk", "known_function", "scenario_known_function", "main", "<module>"])
    expect_frame(frames[0], "walk", WALK_LINE)
    expect_frame(frames[1], "known_function", here)
    expect_frame(frames[2], "scenario_known_function", call_line)
    expect_entries(frames, [False, False, False, False, True])
    check(not frames.truncated, "truncated")


# --- under a tracer (sys.settrace) and, 3.12+, sys.monitoring -----------------------------------------

def tracer(frame, event, arg):
    return tracer


def scenario_traced():
    sys.settrace(tracer)
    try:
        call_line = this_line() + 1
        frames, here = known_function()
    finally:
        sys.settrace(None)
    expect_frame(frames[1], "known_function", here)
    expect_frame(frames[2], "scenario_traced", call_line)
    if sys.version_info >= (3, 12):
        # Instrumented bytecode: the instructions are rewritten in place, the line table is not.
        monitoring = sys.monitoring
        tool = monitoring.PROFILER_ID
        monitoring.use_tool_id(tool, "frames_scenarios")
        monitoring.set_events(tool, monitoring.events.LINE | monitoring.events.PY_START)
        monitoring.register_callback(tool, monitoring.events.LINE, lambda code, line: None)
        try:
            call_line = this_line() + 1
            frames, here = known_function()
        finally:
            monitoring.set_events(tool, 0)
            monitoring.free_tool_id(tool)
        expect_frame(frames[1], "known_function", here)
        expect_frame(frames[2], "scenario_traced", call_line)


# --- methods and nested functions ---------------------------------------------------------------------

class Widget:
    def method(self):
        return walk(), this_line()

    @classmethod
    def klass(cls):
        return walk(), this_line()

    @staticmethod
    def static():
        return walk(), this_line()

    @property
    def prop(self):
        return walk(), this_line()


def outer():
    def inner():
        return walk(), this_line()
    return inner()


class Made:
    def __init__(self):
        self.frames, self.here = walk(), this_line()


def make_many():
    call_line = this_line() + 2
    for _ in range(300):  # enough for 3.13+ to specialize the call: __init__ then runs above a shim frame
        made = Made()
    return made, call_line


def scenario_method():
    for call, qualname in ((lambda: Widget().method(), "Widget.method"),
                           (lambda: Widget.klass(), "Widget.klass"),
                           (lambda: Widget.static(), "Widget.static"),
                           (lambda: Widget().prop, "Widget.prop"),
                           (outer, "outer.<locals>.inner")):
        frames, here = call()
        expect_frame(frames[1], qualname, here)
    frames, _ = outer()
    expect_names(frames[:3], ["walk", "outer.<locals>.inner", "outer"])
    made, call_line = make_many()
    expect_names(made.frames[:4], ["walk", "Made.__init__", "make_many", "scenario_method"])
    expect_frame(made.frames[1], "Made.__init__", made.here)
    expect_frame(made.frames[2], "make_many", call_line)


# --- generators ---------------------------------------------------------------------------------------

def generator():
    yield walk(), this_line()
    yield walk(), this_line()


def scenario_generator():
    gen = generator()
    call_line = this_line() + 1
    frames, here = next(gen)
    expect_names(frames, ["walk", "generator", "scenario_generator", "main", "<module>"])
    expect_frame(frames[1], "generator", here)
    expect_frame(frames[2], "scenario_generator", call_line)
    # next() is a C call: the generator's frame begins an evaluation of its own.
    expect_entries(frames, [False, True, False, False, True])
    frames, here = next(gen)
    expect_frame(frames[1], "generator", here)
    for frames, here in generator():
        expect_names(frames[:3], ["walk", "generator", "scenario_generator"])
        expect_frame(frames[1], "generator", here)
    frames = list(walk() for _ in range(1))[0]
    expect_names(frames[:3], ["walk", "scenario_generator.<locals>.<genexpr>", "scenario_generator"])


# --- async def under asyncio --------------------------------------------------------------------------

async def leaf():
    await asyncio.sleep(0)
    return walk(), this_line()


async def coroutine():
    return await leaf()


def scenario_async():
    frames, here = asyncio.run(coroutine())
    names = [f.qualname for f in frames]
    expect_names(frames[:3], ["walk", "leaf", "coroutine"])
    expect_frame(frames[1], "leaf", here)
    # The task steps the coroutine with coro.send() from C: a new evaluation.
    check(frames[2].entry, "the task's coroutine is not marked as an entry: %r" % frames)
    check(names[-3:] == [q("scenario_async"), "main", "<module>"], "outer frames %r" % names)
    check(any("base_events.py" in f.file for f in frames), "no asyncio frames in %r" % frames)


# --- a threading.Thread while the main thread runs bytecode -----------------------------------------------

def thread_target(result):
    result.append((walk(), this_line()))


def scenario_thread():
    result = []
    thread = threading.Thread(target=thread_target, args=(result,))
    thread.start()
    spins = 0
    while thread.is_alive():
        spins += sum(range(100))
    thread.join()
    frames, here = result[0]
    names = [f.qualname for f in frames]
    expect_names(frames[:3], ["walk", "thread_target", "Thread.run"])
    expect_frame(frames[1], "thread_target", here)
    check(names[-1] == q("Thread._bootstrap"), "outermost frame %r" % names[-1])
    check(frames[-1].entry, "the thread's first frame is not an entry")
    check("<module>" not in names and "scenario_thread" not in names, "main thread frames in %r" % names)


# --- a multiprocessing child started with fork --------------------------------------------------------

def child_body(queue):
    frames, here = walk(), this_line()
    queue.put(([(f.file, f.line, f.qualname, f.entry) for f in frames], here))


def scenario_fork_child():
    walk()  # the walker is set up in the parent before the fork
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    process = context.Process(target=child_body, args=(queue,))
    process.start()
    rows, here = queue.get(timeout=120)
    process.join(120)
    check(process.exitcode == 0, "child exit code %r" % process.exitcode)
    frames = [Frame(*row) for row in rows]
    names = [f.qualname for f in frames]
    expect_names(frames[:3], ["walk", "child_body", "BaseProcess.run"])
    expect_frame(frames[1], "child_body", here)
    check(q("BaseProcess._bootstrap") in names, "no BaseProcess._bootstrap in %r" % names)
    # The child goes on from the parent's os.fork(): the parent's frames are below.
    check(names[-3:] == [q("scenario_fork_child"), "main", "<module>"], "outer frames %r" % names)


# --- recursion deeper than the maximum ----------------------------------------------------------------

def recurse(depth, max_frames):
    if depth == 0:
        return walk(max_frames), this_line()
    return recurse(depth - 1, max_frames)  # <recurse-call>


RECURSE_LINE = next(i for i, text in enumerate(open(__file__, encoding="utf-8"), 1)
                    if "# <recurse-call>" in text and "RECURSE_LINE" not in text)


def scenario_deep_recursion():
    full, _ = recurse(100, 1024)
    check(not full.truncated, "the full walk is truncated")
    total = len(full)
    check(total == 1 + 101 + 3, "%d frames" % total)
    frames, here = recurse(100, 32)
    check(len(frames) == 32 and frames.truncated, "%d frames, truncated %r" % (len(frames), frames.truncated))
    expect_frame(frames[0], "walk", WALK_LINE)
    expect_frame(frames[1], "recurse", here)
    for frame in frames[2:]:
        expect_frame(frame, "recurse", RECURSE_LINE)
    # Exactly as many frames as exist: complete. One fewer: truncated, the outermost dropped.
    exact, _ = recurse(100, total)
    check(len(exact) == total and not exact.truncated, "max = total: %d, truncated %r" % (len(exact), exact.truncated))
    short, _ = recurse(100, total - 1)
    check(len(short) == total - 1 and short.truncated, "max = total - 1: %d" % len(short))
    check([f.entry for f in short] == [f.entry for f in full[:-1]], "entry flags differ when truncated")


# --- Python -> native -> Python through a ctypes callback ---------------------------------------------

RESULTS = []


def on_callback():
    RESULTS.append((walk(), this_line(), walk(2)))


def outer_caller():
    PROBE.gmt_probe_call_back(CALLBACK(on_callback))  # <callback-call>


CALLBACK_LINE = next(i for i, text in enumerate(open(__file__, encoding="utf-8"), 1)
                     if "# <callback-call>" in text and "CALLBACK_LINE" not in text)


def scenario_callback():
    outer_caller()
    frames, here, short = RESULTS[0]
    expect_names(frames, ["walk", "on_callback", "outer_caller", "scenario_callback", "main", "<module>"])
    expect_frame(frames[1], "on_callback", here)
    expect_frame(frames[2], "outer_caller", CALLBACK_LINE)
    # Two evaluations: the callback's (entered from C) and the script's.
    expect_entries(frames, [False, True, False, False, False, True])
    # Cut right after the callback's frame: its entry flag is still seen.
    check(short.truncated and len(short) == 2, "walk(2): %r" % short)
    expect_entries(short, [False, True])


# --- names and file names that are not ASCII ----------------------------------------------------------

def grüße():  # latin-1 (1 byte per code point, not ASCII)
    return walk(), this_line()


class Ünï:
    def 関数(self):  # 2 bytes per code point
        return walk(), this_line()


def 𠀀():  # 4 bytes per code point (U+20000)
    return walk(), this_line()


def scenario_unicode():
    for call, qualname in ((grüße, "grüße"), (lambda: Ünï().関数(), "Ünï.関数"), (𠀀, "𠀀")):
        frames, here = call()
        expect_frame(frames[1], qualname, here)
    for file in ("/tmp/café.py", "/tmp/ファイル_😀.py", "/tmp/bad_\udcff.py"):
        namespace = {"walk": walk}
        exec(compile("\n\ndef compiled():\n    return walk()\n", file, "exec"), namespace)
        frames = namespace["compiled"]()
        expect_frame(frames[1], "compiled", 4, file=file)


# --- identity, threads Python never saw, status -------------------------------------------------------

def scenario_identity():
    def nested():
        return PROBE.gmt_probe_identity_check()
    result = nested()
    check(result == 0, "identity check failed at frame %d" % result)


def scenario_native_thread():
    count = PROBE.gmt_probe_walk_in_native_thread()
    check(count == 0, "a thread Python never saw has %d frames" % count)


# --- code objects freed and others born at their addresses --------------------------------------------

def scenario_reborn_code():
    """16 functions, each compiled, called and freed before the next: CPython's allocator puts the next code
    object (and its line table) where the last one was, so a line cached for the old object must not be
    taken for the new one. The functions have the same bytecode (the walk is at the same instruction) but
    start on different lines, so only the line tells them apart."""
    import gc
    for i in range(16):
        source = "%sdef reborn():\n    return walk()\n" % ("\n" * i)
        namespace = {"walk": walk}
        exec(compile(source, "<reborn>", "exec"), namespace)
        frames = namespace["reborn"]()
        expect_frame(frames[1], "reborn", i + 2, file="<reborn>")
        del namespace, frames
        gc.collect()


# --- interpreter finalization while a daemon thread walks ----------------------------------------------

def daemon_body(started):
    started.set()
    PROBE.gmt_probe_walk_loop(30.0)  # still walking, without the GIL, when the interpreter goes away


def scenario_finalize_daemon():
    started = threading.Event()
    threading.Thread(target=daemon_body, args=(started,), daemon=True).start()
    started.wait()
    time.sleep(0.05)
    # Returning ends the script: the interpreter is finalized (the daemon's thread state deleted) while
    # the daemon thread is inside the probe. The process must exit normally.


# --- cost ---------------------------------------------------------------------------------------------

def bench_at(depth, iterations):
    if depth > 0:
        return bench_at(depth - 1, iterations)
    walk_ns, resolve_ns, frames = ctypes.c_double(), ctypes.c_double(), ctypes.c_size_t()
    rc = PROBE.gmt_probe_bench(iterations, 1024, ctypes.byref(walk_ns), ctypes.byref(resolve_ns),
                               ctypes.byref(frames))
    check(rc == 0, "bench failed: %d" % rc)
    return frames.value, walk_ns.value, resolve_ns.value


def scenario_bench():
    outside = len(walk()) - 1  # frames below bench_at: scenario_bench, main, <module>
    for target in (4, 10, 50):
        frames, walk_ns, resolve_ns = bench_at(target - outside - 1, 200000 if target < 50 else 50000)
        print("bench python=%d.%d frames=%d walk_ns=%.1f per_frame_ns=%.1f addr2line_every_frame_ns=%.1f"
              % (sys.version_info[0], sys.version_info[1], frames, walk_ns, walk_ns / frames, resolve_ns))
        check(walk_ns < 20000, "a walk of %d frames took %.0f ns" % (frames, walk_ns))


def main():
    buf = ctypes.create_string_buffer(512)
    status = PROBE.gmt_probe_status(buf, len(buf))
    text = buf.value.decode()
    if status != 1:
        print("probe status %d: %s" % (status, text))
        sys.exit(3)
    version = "%d.%d.%d" % sys.version_info[:3]
    check(text == version, "probe says %s, sys.version_info %s" % (text, version))
    print("CPython %s at %s" % (version, sys.executable))
    globals()["scenario_" + sys.argv[2]]()
    print("ok %s" % sys.argv[2])


if __name__ == "__main__":
    main()
