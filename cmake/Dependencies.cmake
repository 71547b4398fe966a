# Every external dependency, found once. scripts/setup.sh installs the Debian packages behind them.

find_package(CUDAToolkit 13 QUIET)
if(NOT CUDAToolkit_FOUND OR NOT EXISTS "${CUDAToolkit_INCLUDE_DIRS}/cuda.h")
  message(FATAL_ERROR
    "CUDA 13 toolkit headers not found (looked for cuda.h via CMake's CUDAToolkit). "
    "Install the CUDA 13 toolkit (on these machines it lives in /usr/local/cuda) or pass "
    "-DCUDAToolkit_ROOT=/path/to/cuda.")
endif()
if(NOT EXISTS "${CUDAToolkit_INCLUDE_DIRS}/cupti.h")
  message(FATAL_ERROR "CUPTI headers (cupti.h) not found in ${CUDAToolkit_INCLUDE_DIRS}; the CUDA toolkit is incomplete.")
endif()
find_library(GPUMEMTRACE_CUPTI_LIBRARY NAMES cupti HINTS ${CUDAToolkit_LIBRARY_DIR} PATH_SUFFIXES lib64 lib extras/CUPTI/lib64)
if(NOT GPUMEMTRACE_CUPTI_LIBRARY)
  message(FATAL_ERROR "libcupti not found next to the CUDA toolkit in ${CUDAToolkit_LIBRARY_DIR}.")
endif()
# Only headers are used from the toolkit at build time: everything runs against tests/sim or a real driver.
add_library(gpumemtrace_cuda_headers INTERFACE)
target_include_directories(gpumemtrace_cuda_headers SYSTEM INTERFACE ${CUDAToolkit_INCLUDE_DIRS})

find_package(PkgConfig REQUIRED)
function(gpumemtrace_require_pkg target module hint)
  pkg_check_modules(${target} IMPORTED_TARGET ${module})
  if(NOT ${target}_FOUND)
    message(FATAL_ERROR "${module} not found: run scripts/setup.sh (Debian package ${hint}).")
  endif()
endfunction()
gpumemtrace_require_pkg(LIBUNWIND libunwind libunwind-dev)
gpumemtrace_require_pkg(LIBDW libdw libdw-dev)
gpumemtrace_require_pkg(ZSTD libzstd libzstd-dev)

find_package(fmt QUIET)
if(NOT fmt_FOUND)
  message(FATAL_ERROR "fmt not found: run scripts/setup.sh (Debian package libfmt-dev).")
endif()
find_package(GTest QUIET)
if(NOT GTest_FOUND)
  message(FATAL_ERROR "GoogleTest not found: run scripts/setup.sh (Debian package libgtest-dev).")
endif()
find_package(Threads REQUIRED)
include(GoogleTest)
