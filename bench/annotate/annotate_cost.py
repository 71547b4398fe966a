"""The cost of the Python module gpumemtrace without the tracer (docs/benchmarks.md, "Annotations without the
tracer"): microseconds per call, against the same statement with an empty context manager or function."""
import contextlib
import sys
import timeit

import gpumemtrace

assert not gpumemtrace.active(), "run this without the tracer"
number = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000


def nothing(*args):
    pass


cases = [
    ("with contextlib.nullcontext(): pass (the baseline)", "with contextlib.nullcontext(): pass"),
    ('with gpumemtrace.phase("step"): pass', 'with gpumemtrace.phase("step"): pass'),
    ("an empty function of 4 arguments (the baseline)", "nothing(1, 4096, 64, 64)"),
    ("gpumemtrace.suballoc(1, 4096, 64, 64)", "gpumemtrace.suballoc(1, 4096, 64, 64)"),
]
print(f"| Python {sys.version.split()[0]}: statement ({number} times) | ns per call |\n|---|---:|")
for label, statement in cases:
    seconds = min(timeit.repeat(statement, number=number, repeat=3, globals=globals()))
    print(f"| {label} | {seconds / number * 1e9:.0f} |")
