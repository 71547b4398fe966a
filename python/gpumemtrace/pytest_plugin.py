"""GPU memory budgets for pytest tests, checked on the trace gpumemtrace writes while the tests run.

Run pytest under the tracer with this plugin:

    gpumemtrace run -o tests.trace -- python -m pytest -p gpumemtrace.pytest_plugin tests/

(or put ``pytest_plugins = ["gpumemtrace.pytest_plugin"]`` in a conftest.py), and mark the tests:

    @pytest.mark.limit_gpu_memory("512MiB")  # the peak, on each device, of the memory the test allocated
    @pytest.mark.limit_gpu_leaks("0B")       # what the test allocated and had not freed when it ended

Each test runs in a phase named by its node id (``gpumemtrace phases`` lists them afterwards). After a
marked test the plugin reads the trace that is being written: ``gpumemtrace phases --json`` gives the
test's window of time and ``gpumemtrace check --from --to`` holds the allocations made in that window
against the limits, to the byte. A test over its budget fails with check's figures and the stacks that
held the memory (``gpumemtrace peak`` or ``leaks`` of the window). Sizes are read as check reads them:
512MiB, 1.5GB (binary units), 4096.

Without the tracer the marked tests are skipped, with the reason; with --gpumemtrace-require they fail.
The analyzer is $GPUMEMTRACE, else the gpumemtrace beside the loaded libgpumemtrace.so (../bin), else
the one on PATH. Plain Python: it needs nothing but pytest.
"""

import ctypes
import json
import os
import shutil
import subprocess

import pytest

import gpumemtrace

# marker -> the option of `gpumemtrace check` that holds it
_LIMITS = {"limit_gpu_memory": "--max-peak", "limit_gpu_leaks": "--max-leak"}
# check's name of a failed limit -> the report whose stacks explain it, and what they are
_EXPLAINED_BY = {"max-peak": ("peak", "the largest stacks at that peak:"),
                 "max-leak": ("leaks", "the stacks of what it still held at its end:")}
_STACKS_SHOWN = 5
_FRAME_INDENT = "      "  # a frame's line in the stacks of `gpumemtrace peak` and `leaks`

_trace_path_entry = gpumemtrace._entry("gpumemtrace_trace_path", [ctypes.c_char_p, ctypes.c_size_t], ctypes.c_size_t)


def _trace_path():
    """The trace this process writes, or None without the tracer."""
    if _trace_path_entry is None:
        return None
    size = _trace_path_entry(None, 0)
    if size == 0:
        return None
    buffer = ctypes.create_string_buffer(size + 1)
    _trace_path_entry(buffer, size + 1)
    return os.fsdecode(buffer.value)


def _analyzer():
    """The gpumemtrace command: $GPUMEMTRACE, else beside the tracer library (lib/ -> bin/), else on PATH."""
    explicit = os.environ.get("GPUMEMTRACE")
    if explicit:
        return explicit
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                path = line.rstrip("\n").split(None, 5)[-1]
                if os.path.basename(path) == "libgpumemtrace.so":
                    beside = os.path.join(os.path.dirname(os.path.dirname(path)), "bin", "gpumemtrace")
                    if os.access(beside, os.X_OK):
                        return beside
    except OSError:
        pass
    return shutil.which("gpumemtrace")


def _untraced_environment():
    """This process's environment without the tracer in LD_PRELOAD: the analyzer is not to be traced."""
    env = dict(os.environ)
    kept = [lib for lib in env.get("LD_PRELOAD", "").replace(" ", ":").split(":")
            if lib and os.path.basename(lib) != "libgpumemtrace.so"]
    if kept:
        env["LD_PRELOAD"] = ":".join(kept)
    else:
        env.pop("LD_PRELOAD", None)
    return env


class _Budgets:
    def __init__(self, config):
        self.require = config.getoption("gpumemtrace_require")
        self.trace = _trace_path()
        self.analyzer = _analyzer() if self.trace else None
        self.verdicts = {}  # node id -> the failure message of a test over its budget

    def missing(self):
        """Why the budgets cannot be checked here, or None."""
        if self.trace is None:
            return ("gpumemtrace: the tracer is not loaded, so the GPU memory budget cannot be checked: "
                    "run pytest under it (gpumemtrace run -- python -m pytest -p gpumemtrace.pytest_plugin ...)")
        if self.analyzer is None:
            return "gpumemtrace: the gpumemtrace command was not found: set GPUMEMTRACE to its path"
        return None

    def _run(self, *args):
        return subprocess.run([self.analyzer, *args], env=_untraced_environment(), capture_output=True, text=True,
                              check=False)

    def _window(self, phase):
        """The trace times (ns) at which the test's phase began and ended."""
        result = self._run("phases", "--json", "--top", "0", self.trace)
        if result.returncode != 0:
            raise RuntimeError(result.stderr.strip())
        instances = [phase_json["instances"] for phase_json in json.loads(result.stdout)["phases"]
                     if phase_json["phase"] == phase]
        if not instances:
            raise RuntimeError("gpumemtrace: the test's phase is not in the trace " + self.trace)
        last = instances[-1][-1]
        return last["start_ns"], last["end_ns"]

    def _stacks(self, report, window, device, test):
        """The stacks of `gpumemtrace peak` (or leaks) of the window, each cut after the test's own frame
        (pytest's frames follow it)."""
        result = self._run(report, "--from", str(window[0]), "--to", str(window[1]), "--device", str(device),
                           "--top", str(_STACKS_SHOWN), self.trace)
        if result.returncode != 0:
            return result.stderr.rstrip()
        lines = result.stdout.split("\n\n", 1)[-1].rstrip().split("\n")[1:]  # past the header and the heading
        kept, cut = [], False
        for line in lines:
            frame = line.startswith(_FRAME_INDENT)
            if not (frame and cut):
                kept.append(line)
            cut = frame and (cut or line.endswith(" in " + test))
        return "\n".join(kept)

    def check(self, item, limits):
        """Holds the test's allocations against `limits` (marker -> size); the message when over budget."""
        window = self._window(item.nodeid)
        arguments = ["check", "--json", "--from", str(window[0]), "--to", str(window[1])]
        for marker, size in limits.items():
            arguments += [_LIMITS[marker], str(size)]
        result = self._run(*arguments, self.trace)
        if result.returncode not in (0, 1):
            raise RuntimeError(result.stderr.strip())
        checks = json.loads(result.stdout)["checks"]
        for check in checks:
            item.user_properties.append((f"gpumemtrace {check['check']} device {check['device']}", check["measured"]))
        failed = [check for check in checks if not check["passed"]]
        if not failed:
            return None
        lines = [f"GPU memory over budget (gpumemtrace, trace {self.trace}):"]
        for check in failed:
            report, heading = _EXPLAINED_BY[check["check"]]
            lines += [check["message"], heading, self._stacks(report, window, check["device"], _test_function(item))]
        return "\n".join(lines)

    def verdict(self, item, limits):
        """check(), or what kept it from checking: a budget that cannot be checked never passes."""
        try:
            return self.check(item, limits)
        except (RuntimeError, OSError, ValueError, KeyError) as error:
            return f"gpumemtrace could not check the GPU memory budget of {item.nodeid}: {error}"


_BUDGETS = pytest.StashKey()


def _test_function(item):
    """How the test's own frame is named in a stack: its qualified name."""
    return getattr(getattr(item, "obj", None), "__qualname__", item.name)


def _limits(item):
    """marker -> the size it allows, for the budget markers of the test."""
    return {marker: item.get_closest_marker(marker).args[0] for marker in _LIMITS
            if item.get_closest_marker(marker) is not None}


def pytest_addoption(parser):
    parser.addoption("--gpumemtrace-require", action="store_true", dest="gpumemtrace_require",
                     help="fail the tests marked limit_gpu_memory or limit_gpu_leaks when pytest does not run under "
                          "the gpumemtrace tracer (default: skip them)")


def pytest_configure(config):
    config.addinivalue_line("markers", "limit_gpu_memory(size): fail when the device memory the test allocated "
                                       "reached more than size on a device at once (gpumemtrace)")
    config.addinivalue_line("markers", "limit_gpu_leaks(size): fail when the test left more than size of the device "
                                       "memory it allocated still allocated on a device (gpumemtrace)")
    config.stash[_BUDGETS] = _Budgets(config)


def pytest_runtest_setup(item):
    budgets = item.config.stash[_BUDGETS]
    if not _limits(item):
        return
    reason = budgets.missing()
    if reason is not None:
        if budgets.require:
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    budgets = item.config.stash[_BUDGETS]
    gpumemtrace.phase_push(item.nodeid)
    try:
        yield
    finally:
        gpumemtrace.phase_pop()
    limits = _limits(item)
    if limits and budgets.missing() is None:
        budgets.verdicts[item.nodeid] = budgets.verdict(item, limits)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.when != "call":
        return
    verdict = item.config.stash[_BUDGETS].verdicts.pop(item.nodeid, None)
    if verdict is not None and report.passed:
        report.outcome = "failed"
        report.longrepr = verdict
