# Sourced by the scripts that configure a build: where the CUDA 13 toolkit is. /usr/local/cuda (or
# $CUDAToolkit_ROOT) when it has cuda.h; else the toolkit that scripts/setup.sh lays out from NVIDIA's wheels on
# PyPI (headers, NVIDIA's runtime and CUPTI, nvcc) in $GPUMEMTRACE_CUDA_WHEELS_DIR. CMake's FindCUDAToolkit reads
# the exported CUDAToolkit_ROOT, so the presets of CMakePresets.json find it too.
gpumemtrace_cuda_wheels_dir="${GPUMEMTRACE_CUDA_WHEELS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gpumemtrace/cuda-13}"
gpumemtrace_cuda_wheels_root="$gpumemtrace_cuda_wheels_dir/packages/nvidia/cu13"
if [ -z "${CUDAToolkit_ROOT:-}" ] && [ ! -f /usr/local/cuda/include/cuda.h ] &&
  [ -f "$gpumemtrace_cuda_wheels_root/include/cuda.h" ]; then
  export CUDAToolkit_ROOT="$gpumemtrace_cuda_wheels_root"
fi
