# Every external dependency, found once. scripts/setup.sh installs the Debian packages behind them.

find_package(CUDAToolkit 13 QUIET)
if(NOT CUDAToolkit_FOUND OR NOT EXISTS "${CUDAToolkit_INCLUDE_DIRS}/cuda.h")
  message(FATAL_ERROR
    "CUDA 13 toolkit headers not found (looked for cuda.h via CMake's CUDAToolkit). "
    "Install the CUDA 13 toolkit (on these machines it lives in /usr/local/cuda) or pass "
    "-DCUDAToolkit_ROOT=/path/to/cuda.")
endif()
# cupti.h: the layouts of CUPTI's activity records and callback data, which interpose/cupti reads (the
# library itself is loaded at run time, never linked). Some installations keep it in extras/CUPTI.
find_path(GPUMEMTRACE_CUPTI_INCLUDE_DIR cupti.h
          HINTS ${CUDAToolkit_INCLUDE_DIRS} "${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/include" NO_DEFAULT_PATH)
if(NOT GPUMEMTRACE_CUPTI_INCLUDE_DIR)
  message(FATAL_ERROR
    "cupti.h not found in ${CUDAToolkit_INCLUDE_DIRS} or ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/include: the CUPTI "
    "backend (interpose/cupti) reads its record layouts. Install the toolkit's CUPTI component (cuda-cupti-dev-13-*).")
endif()
# Only headers are used from the toolkit at build time: everything runs against tests/sim or a real driver.
add_library(gpumemtrace_cuda_headers INTERFACE)
target_include_directories(gpumemtrace_cuda_headers SYSTEM INTERFACE ${CUDAToolkit_INCLUDE_DIRS}
                           ${GPUMEMTRACE_CUPTI_INCLUDE_DIR})

# Programs that link the driver (soname libcuda.so.1) link NVIDIA's stub libcuda.so where the toolkit has it.
# A toolkit assembled from NVIDIA's pip wheels (nvidia-cuda-runtime, -nvcc, ...) has no stubs/: those programs
# then link the simulated driver, which has the same soname; at run time the simulated driver answers either way.
set(GPUMEMTRACE_NVIDIA_DRIVER_STUB "${CUDAToolkit_LIBRARY_DIR}/stubs/libcuda.so")
add_library(gpumemtrace_link_driver INTERFACE)
if(EXISTS "${GPUMEMTRACE_NVIDIA_DRIVER_STUB}")
  target_link_libraries(gpumemtrace_link_driver INTERFACE "${GPUMEMTRACE_NVIDIA_DRIVER_STUB}")
else()
  message(STATUS "No NVIDIA stub driver at ${GPUMEMTRACE_NVIDIA_DRIVER_STUB}: driver-linked programs link the simulated driver")
  target_link_libraries(gpumemtrace_link_driver INTERFACE sim_cuda)
endif()

find_package(PkgConfig REQUIRED)
function(gpumemtrace_require_pkg target module hint)
  pkg_check_modules(${target} IMPORTED_TARGET ${module})
  if(NOT ${target}_FOUND)
    message(FATAL_ERROR "${module} not found: run scripts/setup.sh (Debian package ${hint}).")
  endif()
endfunction()
gpumemtrace_require_pkg(LIBUNWIND libunwind libunwind-dev)
gpumemtrace_require_pkg(LIBDW libdw libdw-dev)
gpumemtrace_require_pkg(ZSTD libzstd libzstd-dev)  # packed traces (trace/packed)

find_package(fmt QUIET)
if(NOT fmt_FOUND)
  message(FATAL_ERROR "fmt not found: run scripts/setup.sh (Debian package libfmt-dev).")
endif()
find_package(CLI11 QUIET)
if(NOT CLI11_FOUND)
  message(FATAL_ERROR "CLI11 not found: run scripts/setup.sh (Debian package libcli11-dev).")
endif()
find_package(nlohmann_json 3 QUIET)
if(NOT nlohmann_json_FOUND)
  message(FATAL_ERROR "nlohmann-json not found: run scripts/setup.sh (Debian package nlohmann-json3-dev).")
endif()
find_package(GTest QUIET)
if(NOT GTest_FOUND)
  message(FATAL_ERROR "GoogleTest not found: run scripts/setup.sh (Debian package libgtest-dev).")
endif()
find_package(Threads REQUIRED)
include(GoogleTest)
# `gpumemtrace top`'s screen (analyzer/cli/top_screen.cpp): ncurses, wide characters for UTF-8 names.
set(CURSES_NEED_NCURSES TRUE)
set(CURSES_NEED_WIDE TRUE)
find_package(Curses QUIET)
if(NOT CURSES_FOUND)
  message(FATAL_ERROR "ncurses not found: run scripts/setup.sh (Debian package libncurses-dev).")
endif()

# pprof export (analyzer/render/pprof_format.cpp): profile.proto of github.com/google/pprof, as Debian's
# golang-github-google-pprof-dev ships it (licence header and all), compiled with protoc at build time.
find_package(Protobuf QUIET)
if(NOT Protobuf_FOUND OR NOT Protobuf_PROTOC_EXECUTABLE)
  message(FATAL_ERROR "protobuf not found: run scripts/setup.sh (Debian packages libprotobuf-dev, protobuf-compiler).")
endif()
find_file(GPUMEMTRACE_PPROF_PROTO profile.proto
  PATHS /usr/share/gocode/src/github.com/google/pprof/proto NO_DEFAULT_PATH)
if(NOT GPUMEMTRACE_PPROF_PROTO)
  message(FATAL_ERROR "pprof's profile.proto not found: run scripts/setup.sh (Debian package golang-github-google-pprof-dev).")
endif()
