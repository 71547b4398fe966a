// Finding the interpreter: absent, supported, and refused (unknown version, _Py_DebugOffsets that
// disagree, a free-threaded build), with symbols handed in by a fake lookup. And this test program,
// which has no Python, must find none.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "interpose/stacks/python/python_frames.h"
#include "interpose/stacks/python/python_runtime.h"
#include "tests/interpose/python/fake_type_objects.h"

namespace gpumemtrace::interpose::python {
namespace {

std::map<std::string, void*> g_symbols;
void* fake_lookup(const char* name) {
  auto it = g_symbols.find(name);
  return it == g_symbols.end() ? nullptr : it->second;
}

void* no_thread_state() { return nullptr; }
int no_line(void*, int) { return -1; }
const char* version_310() { return "3.10.13 (main, May  9 2026, 07:34:36) [GCC 12.2.0]"; }

class ProbeRuntime : public testing::Test {
 protected:
  void SetUp() override {
    g_symbols = {{"PyGILState_GetThisThreadState", reinterpret_cast<void*>(&no_thread_state)},
                 {"PyCode_Addr2Line", reinterpret_cast<void*>(&no_line)},
                 {"PyCode_Type", &g_code_type},
                 {"PyUnicode_Type", &g_str_type}};
  }
  void set_version(unsigned long hex) {
    version_ = hex;
    g_symbols["Py_Version"] = &version_;
  }
  // A _PyRuntime that starts with the _Py_DebugOffsets CPython 3.<minor> would have if its layout is the
  // table's.
  void set_debug_offsets(unsigned minor, unsigned long hex) {
    const PythonLayout& l = *layout_for_minor(minor);
    const DebugOffsetsLayout& d = *debug_offsets_layout_for_minor(minor);
    runtime_.assign(1024, 0);
    std::memcpy(runtime_.data(), "xdebugpy", 8);
    put(d.version, hex);
    put(d.free_threaded, 0);
    put(d.runtime_finalizing, l.runtime_finalizing != kNoField ? l.runtime_finalizing : 600);
    put(d.tstate_current_frame, l.tstate_frame);
    put(d.frame_previous, l.frame_previous);
    put(d.frame_executable, l.frame_code);
    put(d.frame_instr_ptr, l.frame_instr);
    put(d.frame_owner, l.frame_owner);
    put(d.code_filename, l.code_filename);
    put(d.code_name, l.code_name);
    put(d.code_qualname, l.code_qualname);
    put(d.code_linetable, l.code_linetable);
    put(d.code_firstlineno, l.code_firstlineno);
    put(d.code_adaptive, l.code_adaptive);
    put(d.unicode_state, l.unicode_state);
    put(d.unicode_length, l.unicode_length);
    put(d.unicode_ascii_size, l.unicode_ascii_size);
    g_symbols["_PyRuntime"] = runtime_.data();
  }
  void put(size_t offset, uint64_t value) { std::memcpy(runtime_.data() + offset, &value, sizeof value); }

  unsigned long version_ = 0;
  std::vector<char> runtime_;
};

TEST_F(ProbeRuntime, NoInterpreter) {
  g_symbols.clear();
  EXPECT_EQ(probe_runtime(fake_lookup).status, RuntimeStatus::kAbsent);
}

TEST_F(ProbeRuntime, Python310FromVersionText) {
  g_symbols["Py_GetVersion"] = reinterpret_cast<void*>(&version_310);
  RuntimeProbe probe = probe_runtime(fake_lookup);
  ASSERT_EQ(probe.status, RuntimeStatus::kSupported) << probe.reason;
  EXPECT_EQ(probe.runtime.version_hex, 0x030A0DF0u);
  EXPECT_EQ(probe.runtime.layout->minor, 10u);
}

TEST_F(ProbeRuntime, Python312NeedsNoDebugOffsets) {
  set_version(0x030C01F0);
  std::vector<char> runtime(1024);
  g_symbols["_PyRuntime"] = runtime.data();
  RuntimeProbe probe = probe_runtime(fake_lookup);
  ASSERT_EQ(probe.status, RuntimeStatus::kSupported) << probe.reason;
  EXPECT_EQ(probe.runtime.layout->minor, 12u);
  EXPECT_EQ(probe.runtime.finalizing, runtime.data() + 24);
}

TEST_F(ProbeRuntime, TooOldAndTooNew) {
  set_version(0x030912F0);
  RuntimeProbe probe = probe_runtime(fake_lookup);
  EXPECT_EQ(probe.status, RuntimeStatus::kUnsupported);
  EXPECT_STREQ(probe.reason, "CPython 3.9.18: older than 3.10");
  set_version(0x030F00A1);
  probe = probe_runtime(fake_lookup);
  EXPECT_EQ(probe.status, RuntimeStatus::kUnsupported);
  EXPECT_NE(std::string(probe.reason).find("newer than 3.14"), std::string::npos) << probe.reason;
}

TEST_F(ProbeRuntime, Python313And314CheckedAgainstDebugOffsets) {
  for (unsigned minor : {13u, 14u}) {
    unsigned long hex = 0x03000000ul | minor << 16 | 0x02F0;
    set_version(hex);
    set_debug_offsets(minor, hex);
    RuntimeProbe probe = probe_runtime(fake_lookup);
    ASSERT_EQ(probe.status, RuntimeStatus::kSupported) << minor << ": " << probe.reason;
    EXPECT_EQ(probe.runtime.layout->minor, minor);
    // 3.13: the table's offset of _PyRuntimeState._finalizing; 3.14: the interpreter's own.
    EXPECT_EQ(probe.runtime.finalizing, runtime_.data() + (minor == 13 ? 608 : 600));
  }
}

TEST_F(ProbeRuntime, DebugOffsetsThatDisagreeAreRefused) {
  const unsigned long hex = 0x030D00F0;
  set_version(hex);
  const DebugOffsetsLayout& d = *debug_offsets_layout_for_minor(13);

  set_debug_offsets(13, hex);
  put(d.frame_owner, 74);  // as if 3.13 had 3.14's frame
  RuntimeProbe probe = probe_runtime(fake_lookup);
  EXPECT_EQ(probe.status, RuntimeStatus::kUnsupported);
  EXPECT_NE(std::string(probe.reason).find("interpreter_frame.owner"), std::string::npos) << probe.reason;

  set_debug_offsets(13, hex);
  put(d.runtime_finalizing, 616);
  probe = probe_runtime(fake_lookup);
  EXPECT_EQ(probe.status, RuntimeStatus::kUnsupported);
  EXPECT_NE(std::string(probe.reason).find("runtime_state.finalizing"), std::string::npos) << probe.reason;

  set_debug_offsets(13, hex);
  put(d.free_threaded, 1);
  probe = probe_runtime(fake_lookup);
  EXPECT_EQ(probe.status, RuntimeStatus::kUnsupported);
  EXPECT_NE(std::string(probe.reason).find("free-threaded"), std::string::npos) << probe.reason;

  set_debug_offsets(13, hex);
  put(d.version, 0x030D01F0);
  probe = probe_runtime(fake_lookup);
  EXPECT_EQ(probe.status, RuntimeStatus::kUnsupported);
  EXPECT_NE(std::string(probe.reason).find("version"), std::string::npos) << probe.reason;

  set_debug_offsets(13, hex);
  std::memcpy(runtime_.data(), "nodebug!", 8);
  probe = probe_runtime(fake_lookup);
  EXPECT_EQ(probe.status, RuntimeStatus::kUnsupported);
  EXPECT_NE(std::string(probe.reason).find("cookie"), std::string::npos) << probe.reason;

  g_symbols.erase("_PyRuntime");
  EXPECT_EQ(probe_runtime(fake_lookup).status, RuntimeStatus::kUnsupported);

  // 3.14 read with 3.13's positions: the values land elsewhere and disagree.
  set_version(0x030E00F0);
  set_debug_offsets(13, 0x030E00F0);
  EXPECT_EQ(probe_runtime(fake_lookup).status, RuntimeStatus::kUnsupported);
}

TEST(ParseVersionText, Forms) {
  EXPECT_EQ(parse_version_text("3.10.13 (main, ...)"), 0x030A0DF0u);
  EXPECT_EQ(parse_version_text("3.10.0rc1 (main)"), 0x030A00F0u);
  EXPECT_EQ(parse_version_text("3.10"), 0x030A0000u | 0xF0u);
  EXPECT_EQ(parse_version_text("3"), 0u);
  EXPECT_EQ(parse_version_text("PyPy"), 0u);
  EXPECT_EQ(parse_version_text(nullptr), 0u);
}

// This test program does not link libpython: find() sees no interpreter and has nothing to report.
TEST(PythonStacksFind, NullWithoutPython) {
  EXPECT_EQ(PythonStacks::find(), nullptr);
  EXPECT_EQ(PythonStacks::find(), nullptr);
  EXPECT_EQ(PythonStacks::unsupported_reason(), nullptr);
}

}  // namespace
}  // namespace gpumemtrace::interpose::python
