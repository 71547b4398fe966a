// Frames and stacks as people read them (analyzer/report/stack_text.h), table by table: which frames of a stack
// users see first (user_frames), each frame's text, function names made short, and the compact stack of the
// text reports' one-line form.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzer/report/stack_text.h"

namespace gpumemtrace::test {
namespace {

using symbolize::Frame;
using symbolize::FrameKind;

Frame native(std::string function, std::string module, std::string file = "", uint32_t line = 0) {
  Frame frame;
  frame.function = std::move(function);
  frame.module = std::move(module);
  frame.file = std::move(file);
  frame.line = line;
  return frame;
}
// A frame of a PyTorch snapshot's C++ stack: a name and a file, no module.
Frame named(std::string function, std::string file) { return native(std::move(function), "", std::move(file)); }
Frame python(std::string function, std::string file, uint32_t line) {
  Frame frame = native(std::move(function), "", std::move(file), line);
  frame.kind = FrameKind::Python;
  return frame;
}

std::vector<std::string> functions(const report::Frames& frames) {
  std::vector<std::string> out;
  for (const Frame& frame : frames) out.push_back(frame.function);
  return out;
}

struct UserFramesCase {
  std::string name;
  std::vector<Frame> stack;  // innermost first
  std::vector<std::string> shown;
};

TEST(StackText, UserFramesShowTheProgramsOwnCodeFirst) {
  const std::string kCuda = "/usr/lib/libcuda.so.1", kCudart = "/usr/lib/libcudart.so.13", kApp = "/app/train",
                    kPython = "/usr/lib/libpython3.12.so.1.0";
  const std::vector<UserFramesCase> cases = {
      {"the driver and runtime at the innermost end",
       {native("cuMemAlloc_v2", kCuda), native("cudaMalloc", kCudart), native("alloc_buffer", kApp, "train.cpp", 20),
        native("main", kApp, "train.cpp", 50)},
       {"alloc_buffer", "main"}},
      {"Python: ctypes and libffi glue, the interpreter between frames and its start-up beyond the outermost",
       {native("cudaMalloc", kCudart), native("ffi_call", "/usr/lib/libffi.so.8"),
        native("_ctypes_callproc", "/usr/lib/python3.12/_ctypes.cpython-312-x86_64-linux-gnu.so"),
        python("train_step", "/w/train.py", 57), native("_PyEval_EvalFrameDefault", kPython),
        python("<module>", "/w/train.py", 90), native("Py_RunMain", kPython), native("main", "/usr/bin/python3.12"),
        native("_start", "/usr/bin/python3.12")},
       {"train_step", "<module>"}},
      {"an extension's native frame between Python frames stays",
       {native("cudaMalloc", kCudart), native("forward_kernel", "/w/ext/my_ext.cpython-312-x86_64-linux-gnu.so"),
        python("forward", "/w/model.py", 10), native("_PyEval_EvalFrameDefault", kPython),
        native("torch::autograd::THPVariable_apply", "/site-packages/torch/lib/libtorch_python.so"),
        python("run", "/w/train.py", 3)},
       {"forward_kernel", "forward", "torch::autograd::THPVariable_apply", "run"}},
      {"PyTorch's own frames, Python and native, at the innermost end of a stack with the program's Python frames",
       {native("cudaMalloc", kCudart),
        native("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc",
               "/site-packages/torch/lib/libc10_cuda.so"),
        native("at::native::empty_cuda", "/site-packages/torch/lib/libtorch_cuda.so"),
        native("torch::autograd::THPVariable_empty", "/site-packages/torch/lib/libtorch_python.so"),
        python("caching_allocator_alloc", "/venv/lib/python3.11/site-packages/torch/cuda/memory.py", 136),
        python("forward", "/w/model.py", 10), native("_PyEval_EvalFrameDefault", kPython),
        python("_call_impl", "/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", 1794),
        native("torch::autograd::THPVariable_apply", "/venv/lib/python3.11/site-packages/torch/lib/libtorch_python.so"),
        python("run", "/w/train.py", 3)},
       {"forward", "_call_impl", "torch::autograd::THPVariable_apply", "run"}},
      {"a thread's stack ends at its function; PyTorch's caching allocator is how the memory was got",
       {native("cudaMalloc", kCudart),
        native("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::alloc_block",
               "/site-packages/torch/lib/libc10_cuda.so"),
        native("at::native::structured_sum_out::impl", "/site-packages/torch/lib/libtorch_cpu.so"),
        native("torch::autograd::Engine::thread_main", "/site-packages/torch/lib/libtorch_cpu.so"),
        native("", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"), native("start_thread", "/usr/lib/libc.so.6"),
        native("__clone3", "/usr/lib/libc.so.6")},
       {"at::native::structured_sum_out::impl", "torch::autograd::Engine::thread_main"}},
      {"a C++ program built on libtorch: its frames are the program's",
       {native("cudaMalloc", kCudart), native("at::native::empty_cuda", "/opt/libtorch/lib/libtorch_cuda.so"),
        native("main", "/app/infer", "infer.cpp", 12)},
       {"at::native::empty_cuda", "main"}},
      {"the code that reports to the tracer (NVTX's headers) at the innermost end",
       {native("nvtxRangePushA", kApp, "/usr/include/nvtx3/nvToolsExt.h", 1), native("step", kApp, "main.cpp", 7),
        native("main", kApp, "main.cpp", 9)},
       {"step", "main"}},
      {"a stack of machinery only is kept whole",
       {native("cuMemAlloc_v2", kCuda), native("cudaMalloc", kCudart)},
       {"cuMemAlloc_v2", "cudaMalloc"}},
      {"a PyTorch snapshot: the caching allocator, frames without a source file, the dispatcher, CPython's C",
       {named("c10::cuda::CUDACachingAllocator::malloc", "CUDACachingAllocator.cpp"), named("at::native::empty", "??"),
        named("at::wrapper_CUDA_empty", "RegisterCUDA.cpp"), python("forward", "model.py", 10),
        named("_PyEval_EvalFrameDefault", "Python/ceval.c"), python("train", "train.py", 4)},
       {"forward", "train"}},
      {"a named frame without a source file is left out wherever it is",
       {named("alloc", "a.cpp"), named("inner", ""), named("main", "main.cpp")},
       {"alloc", "main"}},
  };
  for (const UserFramesCase& c : cases) EXPECT_EQ(functions(report::user_frames(c.stack)), c.shown) << c.name;
}

TEST(StackText, FrameTextNamesEachKindOfFrame) {
  Frame truncated;
  truncated.kind = FrameKind::Truncated;
  Frame address;
  address.offset = 0x7f00001234;
  Frame in_module = native("cudaMalloc", "/usr/lib/libcudart.so.13");
  in_module.offset = 0x1a719;
  const std::vector<std::pair<Frame, std::string>> cases = {
      {truncated, "… (truncated)"},
      {python("train_step", "/w/train.py", 57), "train.py:57 in train_step"},
      {native("void ns::f<int>(int) const [clone .constprop.0]", "/app/a", "/src/a.cpp", 88), "ns::f<…> (a.cpp:88)"},
      {in_module, "cudaMalloc (libcudart.so.13+0x1a719)"},
      {address, "0x7f00001234"},
      {native("", "", "/src/a.cpp"), "a.cpp"},
      {named("forward", "D:\\work\\model.py"), "forward (model.py)"},
  };
  for (const auto& [frame, text] : cases) EXPECT_EQ(report::frame_text(frame), text);
}

TEST(StackText, UserFramesOfANativeStackEndAtMain) {
  const std::vector<Frame> stack = {native("cudaMalloc", "/usr/lib/libcudart.so.13"),
                                    native("step", "/app/train", "/src/train.cpp", 40),
                                    native("main", "/app/train", "/src/train.cpp", 50),
                                    native("__libc_start_call_main", "/usr/lib/libc.so.6", "libc_start_call_main.h", 58),
                                    native("_start", "/app/train", "", 0)};
  std::vector<Frame> shown = report::user_frames(stack);
  ASSERT_EQ(shown.size(), 2u);
  EXPECT_EQ(shown[0].function, "step");
  EXPECT_EQ(shown[1].function, "main");
}

TEST(StackText, ShortFunctionNamesDropWhatTheTextDoesNotNeed) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"void ns::f<int>(int) const [clone .constprop.0]", "ns::f<…>"},
      {"(anonymous namespace)::helper(int)", "helper"},
      {"operator new(unsigned long)", "operator new"},
      {"std::vector<int, std::allocator<int> >::push_back(int&&) &&", "std::vector<…>::push_back"},
      {"main", "main"},
  };
  for (const auto& [name, short_name] : cases) EXPECT_EQ(report::short_function_name(name), short_name) << name;
}

TEST(StackText, CompactStackShowsSourceFramesUpToMain) {
  const std::vector<Frame> stack = {native("cudaMalloc", "/usr/lib/libcudart.so.13"),
                                    native("alloc_buffer", "/app/train", "/src/train.cpp", 20),
                                    native("step", "/app/train", "/src/train.cpp", 40),
                                    native("main", "/app/train", "/src/train.cpp", 50),
                                    native("__libc_start_main", "/usr/lib/libc.so.6")};
  EXPECT_EQ(report::compact_stack(stack), "alloc_buffer (train.cpp:20) ← step (train.cpp:40) ← main (train.cpp:50)");
  EXPECT_EQ(report::compact_stack(stack, 2), "alloc_buffer (train.cpp:20) ← step (train.cpp:40) ← …");
  Frame a, b, c;
  a.offset = 0x1234;
  b.offset = 0x5678;
  c.offset = 0x9abc;
  EXPECT_EQ(report::compact_stack(std::vector<Frame>{a, b, c}), "0x1234 ← 0x5678");
  EXPECT_EQ(report::compact_stack(std::vector<Frame>{}), "(no stack recorded)");
}

}  // namespace
}  // namespace gpumemtrace::test
