#!/usr/bin/env bash
# The main job: build the tool, run the bundled training-loop examples under the tracer (on the real GPU
# when there is one, else on the simulated device) and print what their traces say: the C++ loop, its Python
# twin and, when PyTorch is in the project's venv, examples/pytorch/train.py with its bugs.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GPUMEMTRACE_BUILD_DIR:-$root/build}"

echo "demo: installing missing packages (scripts/setup.sh)"
"$root/scripts/setup.sh"
# Only what the demo runs: the analyzer, the tracer, the simulated device, the examples and the Python module
# (scripts/test.sh builds the rest, the tests and benchmarks, in the same build directory).
demo_targets=(gpumemtrace gpumemtrace_preload sim_cuda sim_cudart train_loop gpumemtrace_python_module)
build_start=$SECONDS
if [ ! -f "$build/bin/gpumemtrace" ]; then
  echo "demo: the first build compiles the analyzer, the tracer, the simulated device and the examples"
  echo "demo: (about 4 minutes on 2 cores, seconds once built or with a warm ccache; setup first installs PyTorch into .venv, about 1.5 minutes)"
fi
GPUMEMTRACE_BUILD_TARGETS="${demo_targets[*]}" "$root/scripts/build.sh"
echo "demo: the build took $((SECONDS - build_start)) s"

gpumemtrace="$build/bin/gpumemtrace"
example="$build/bin/train_loop"
out="$build/demo"
mkdir -p "$out"

device=(--sim --sim-memory 4GiB)
if [ -e /dev/nvidia0 ] && ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
  echo "demo: an NVIDIA GPU is present: tracing on the real device"
  device=()
else
  echo "demo: no GPU here: tracing on the simulated CUDA device (4 GiB, tests/sim)"
fi

echo
echo "demo: gpumemtrace run -o $out/train_loop.trace ${device[*]} -- train_loop --steps 20"
"$gpumemtrace" run -o "$out/train_loop.trace" "${device[@]}" -- "$example" --steps 20
echo
"$gpumemtrace" summary "$out/train_loop.trace"

echo
echo "demo: the loop marks its phases with NVTX ranges; five steps of it, by phase"
echo "demo: gpumemtrace run -o $out/train_loop_5.trace ${device[*]} -- train_loop --steps 5"
"$gpumemtrace" run -o "$out/train_loop_5.trace" "${device[@]}" -- "$example" --steps 5
echo
"$gpumemtrace" phases --top 1 "$out/train_loop_5.trace"

echo
echo "demo: the same loop with a batch too large for the device"
echo "demo: gpumemtrace run -o $out/train_loop_oom.trace ${device[*]} -- train_loop --batch 8192"
set +e
"$gpumemtrace" run -o "$out/train_loop_oom.trace" "${device[@]}" -- "$example" --steps 20 --batch 8192
status=$?
set -e
if [ "$status" -eq 0 ]; then
  echo "demo: expected the large batch to run out of memory, but it did not" >&2
  exit 1
fi
echo
"$gpumemtrace" oom "$out/train_loop_oom.trace"

echo
echo "demo: the loop with sequence lengths that change every step, keeping each step's output: its caching"
echo "demo: allocator fragments until a request fails although the cache holds enough free memory"
echo "demo: gpumemtrace run -o $out/train_loop_fragment.trace ${device[*]} -- train_loop --fragment"
set +e
"$gpumemtrace" run -o "$out/train_loop_fragment.trace" "${device[@]}" -- "$example" --fragment
status=$?
set -e
if [ "$status" -eq 0 ]; then
  echo "demo: expected the fragmenting loop to run out of memory, but it did not" >&2
  exit 1
fi
echo
"$gpumemtrace" oom "$out/train_loop_fragment.trace"

echo
if command -v python3 >/dev/null; then
  echo "demo: the loop in Python (examples/python/train_loop.py): its stacks name the Python code"
  echo "demo: PYTHONPATH=build/python gpumemtrace run -o $out/train_loop_py.trace ${device[*]} -- python3 examples/python/train_loop.py --steps 20"
  # On a real GPU, NVIDIA's runtime is found in the toolkit; --sim puts the simulated one first. The tool's
  # Python module on the path makes each step a phase.
  PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" \
  LD_LIBRARY_PATH="${CUDA_HOME:-/usr/local/cuda}/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$gpumemtrace" run -o "$out/train_loop_py.trace" "${device[@]}" -- python3 "$root/examples/python/train_loop.py" --steps 20
  echo
  "$gpumemtrace" summary "$out/train_loop_py.trace"
else
  echo "demo: no python3 here: skipping the Python example"
fi

echo
# PyTorch's own caching allocator under the tracer, when setup installed PyTorch into the project's venv.
venv="${GPUMEMTRACE_VENV:-$root/.venv}"
torch_python="$venv/bin/python"
if [ -x "$torch_python" ] && "$torch_python" -c 'import torch' 2>/dev/null; then
  train="$root/examples/pytorch/train.py"
  # 1 GiB makes --fragment run out of memory on the simulated device; a real GPU is what it is.
  torch_device=(--sim --sim-memory 1GiB)
  [ ${#device[@]} -eq 0 ] && torch_device=()
  torch_run() {  # torch_run NAME FLAGS...: train.py FLAGS under the tracer, the tool's module on the path (phases)
    local name=$1
    shift
    echo "demo: gpumemtrace run -o $out/$name.trace ${torch_device[*]} -- python examples/pytorch/train.py $*"
    PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" \
      "$gpumemtrace" run -o "$out/$name.trace" "${torch_device[@]}" -- "$torch_python" -W ignore "$train" "$@" | tail -n 1
  }
  echo "demo: a PyTorch training loop (examples/pytorch/train.py) whose total_loss += loss keeps every step's graph:"
  echo "demo: the report names the Python line that allocated what grows"
  torch_run torch_accumulate --accumulate
  echo
  "$gpumemtrace" summary --top 3 "$out/torch_accumulate.trace"
  echo
  "$gpumemtrace" growth "$out/torch_accumulate.trace"

  echo
  echo "demo: the loop with sequences 8 positions longer every step and a slice of each step's output kept:"
  echo "demo: PyTorch's cache fragments until it runs out of memory with half of what it reserved free"
  if torch_run torch_fragment --fragment && [ ${#torch_device[@]} -gt 0 ]; then
    echo "demo: expected the fragmenting loop to run out of memory, but it did not" >&2
    exit 1
  fi
  echo
  # PyTorch frees its idle segments after a failed cudaMalloc and tries again: the last failure is the one it raised.
  "$gpumemtrace" oom --top 3 "$out/torch_fragment.trace" |
    awk '/^out of memory #/ { last = ""; count++ } count == 0 { print; next } { last = last $0 "\n" }
         END { if (count > 1) printf "(the last of %d failed cudaMalloc calls; PyTorch retried after the others)\n", count
               printf "%s", last }'
  echo
  echo "demo: the same with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
  torch_run torch_fragment_expandable --fragment --expandable
else
  echo "demo: no PyTorch in $venv (scripts/setup_pytorch.sh installs it): skipping the PyTorch example"
fi
