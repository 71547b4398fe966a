#!/usr/bin/env bash
# Installs every Debian package the build and the tests need, the CUDA toolkit's headers where they are
# missing, and PyTorch in the project's venv (scripts/setup_pytorch.sh; not with --without-pytorch, for a
# caller that installs it beside its build: scripts/test.sh). Idempotent; quiet when all is there.
set -euo pipefail
with_pytorch=true
[ "${1:-}" = --without-pytorch ] && with_pytorch=false

packages=(
  build-essential cmake ninja-build pkg-config ccache
  libunwind-dev libfmt-dev libdw-dev libelf-dev libcli11-dev nlohmann-json3-dev
  libncurses-dev  # gpumemtrace top's screen
  libzstd-dev  # packed traces (trace/packed)
  libgtest-dev libgmock-dev
  heaptrack zstd  # bench/run.sh measures gpumemtrace against heaptrack
  libprotobuf-dev protobuf-compiler golang-github-google-pprof-dev  # export --format pprof: profile.proto
  golang-go  # the pprof export is read back by `go tool pprof` in the tests
  libxml2-utils  # xmllint: the tests validate `check --junit` against tests/analyzer/junit.xsd
  python3  # Python stacks are tested on every CPython present (pyenv's 3.10-3.13 where the image has them)
  python3-pytest  # the pytest plugin (python/gpumemtrace/pytest_plugin.py) is tested under Debian's python3
  nodejs  # `gpumemtrace html`: npm ci and esbuild bundle the page's front end (analyzer/html) at build time
  chromium  # the HTML report's browser test, scripts/screenshot.sh and its benchmark (driven by playwright-core)
  clang libclang-rt-dev  # scripts/fuzz.sh: clang and its libFuzzer and sanitizer runtimes (libclang_rt.*, a recommends of clang)
  time  # /usr/bin/time: the analyzer's peak RSS in scripts/load.sh and bench/export.sh
)
# npm comes with some builds of nodejs (NodeSource's) and is its own package in Debian's.
command -v npm >/dev/null || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The CUDA toolkit is not a Debian package. A machine may have it in /usr/local/cuda (or CUDAToolkit_ROOT);
# where it does not, the same files come from NVIDIA's wheels on PyPI, laid out as a toolkit (lib64, the
# unversioned library names) in $gpumemtrace_cuda_wheels_dir. Only headers are compiled against; NVIDIA's
# runtime and CUPTI are what the tests compare with and load at run time.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/cuda_toolkit.sh"
cuda_root="${CUDAToolkit_ROOT:-/usr/local/cuda}"
if [ ! -f "$cuda_root/include/cuda.h" ] && [ -z "${CUDAToolkit_ROOT:-}" ]; then
  echo "setup: no CUDA 13 toolkit in $cuda_root: installing NVIDIA's wheels into $gpumemtrace_cuda_wheels_dir"
  rm -rf "$gpumemtrace_cuda_wheels_dir"
  mkdir -p "$gpumemtrace_cuda_wheels_dir"
  python3 -m pip install --quiet --disable-pip-version-check --no-warn-script-location --root-user-action=ignore \
    --target "$gpumemtrace_cuda_wheels_dir/packages" \
    nvidia-cuda-runtime==13.0.96 nvidia-cuda-crt==13.0.88 nvidia-cuda-cupti==13.0.85 nvidia-nvtx==13.0.85 \
    nvidia-cuda-nvcc==13.0.88 nvidia-cuda-profiler-api==13.0.85
  ln -sfn lib "$gpumemtrace_cuda_wheels_root/lib64"
  ln -sfn libcudart.so.13 "$gpumemtrace_cuda_wheels_root/lib/libcudart.so"
  ln -sfn libcupti.so.13 "$gpumemtrace_cuda_wheels_root/lib/libcupti.so"
  source "$root/scripts/cuda_toolkit.sh"
  cuda_root="${CUDAToolkit_ROOT:-/usr/local/cuda}"
fi
for header in cuda.h cupti.h cudaTypedefs.h cudaProfiler.h nvtx3/nvToolsExt.h; do
  if [ ! -f "$cuda_root/include/$header" ]; then
    echo "setup: $header is missing from the CUDA 13 toolkit in $cuda_root." >&2
    echo "setup: install NVIDIA's CUDA 13 toolkit there, or set CUDAToolkit_ROOT to where it is." >&2
    exit 1
  fi
done

# PyTorch for the real-PyTorch tests (tests/pytorch), in the project's venv.
if $with_pytorch; then bash "$root/scripts/setup_pytorch.sh"; fi
