// Debug information in a separate file (analyzer/symbolize/symbolizer.cpp): found through the library's
// .gnu_debuglink beside it; and a library with none anywhere is symbolized from its symbol table without
// libdwfl's last resort, a debuginfod server, whose client library (and libcurl's) is never loaded.
#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "analyzer/symbolize/symbolizer.h"

namespace gpumemtrace::test {
namespace {

using replay::FrameRef;
using symbolize::Frame;

// The function's offset in the library: the same in both files, which differ in debug sections only.
uint64_t function_offset() {
  void* library = dlopen(DEBUG_LINKED_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (!library) return 0;
  void* function = dlsym(library, "gpumemtrace_debug_linked_function");
  Dl_info info{};
  uint64_t offset = function && dladdr(function, &info) != 0
                        ? reinterpret_cast<uintptr_t>(function) - reinterpret_cast<uintptr_t>(info.dli_fbase)
                        : 0;
  dlclose(library);
  return offset;
}

std::vector<Frame> symbolize(const std::string& library, std::vector<std::string>& warnings) {
  uint64_t offset = function_offset();
  EXPECT_NE(offset, 0u);
  const std::vector<replay::ModuleRef> modules = {{library, "", 0x7f0000000000}};
  symbolize::Symbolizer symbolizer(modules, [&](std::string_view message) { warnings.emplace_back(message); });
  return symbolizer.frames(FrameRef{0, offset});
}

TEST(SeparateDebugInfo, TheFileADebugLinkNamesBesideTheLibraryGivesTheLine) {
  std::vector<std::string> warnings;
  std::vector<Frame> frames = symbolize(DEBUG_LINKED_LIBRARY, warnings);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].function, "gpumemtrace_debug_linked_function");
  EXPECT_TRUE(frames[0].file.ends_with("symbolize/debug_linked.cpp")) << frames[0].file;
  // The function's lines (3-5): its entry is its first line under ASan's instrumentation, the body's else.
  EXPECT_GE(frames[0].line, 3u);
  EXPECT_LE(frames[0].line, 5u);
  EXPECT_TRUE(warnings.empty());
}

TEST(SeparateDebugInfo, ALibraryWithoutDebugInformationIsNamedFromItsSymbolsWithoutADebuginfodClient) {
  std::vector<std::string> warnings;
  std::vector<Frame> frames = symbolize(NO_DEBUG_LIBRARY, warnings);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].function, "gpumemtrace_debug_linked_function");
  EXPECT_TRUE(frames[0].file.empty()) << frames[0].file;
  EXPECT_EQ(frames[0].line, 0u);
  EXPECT_TRUE(warnings.empty());
  bool client_loaded = dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_NOLOAD) != nullptr;
  // libdwfl loads the client from beside itself. Where it is not installed, libdwfl cannot have loaded it
  // either: nothing is shown. (Loading it here to see would run libcurl's initialization in the test.)
  Dl_info libdw{};
  if (!client_loaded && dladdr(reinterpret_cast<void*>(&dwfl_begin), &libdw) != 0 && libdw.dli_fname &&
      !std::filesystem::exists(std::filesystem::path(libdw.dli_fname).parent_path() / "libdebuginfod.so.1"))
    GTEST_SKIP() << "libdebuginfod.so.1 is not installed: whether the symbolizer would load it is not shown here";
  EXPECT_FALSE(client_loaded) << "symbolizing loaded libdwfl's debuginfod client";
}

}  // namespace
}  // namespace gpumemtrace::test
