// The layout table (interpose/stacks/python/python_layout.cpp) against the headers it was measured from:
// layout_probe.c, compiled against each installed CPython's internal headers, prints the offsets, and
// every one must equal the table's. A version whose headers were not found at configure time is skipped.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>

#include "interpose/stacks/python/python_layout.h"
#include "tests/support/subprocess.h"

namespace gpumemtrace::interpose::python {
namespace {

const char* layout_probe(unsigned minor) {
  switch (minor) {
#ifdef GMT_LAYOUT_PROBE_3_10
    case 10: return GMT_LAYOUT_PROBE_3_10;
#endif
#ifdef GMT_LAYOUT_PROBE_3_11
    case 11: return GMT_LAYOUT_PROBE_3_11;
#endif
#ifdef GMT_LAYOUT_PROBE_3_12
    case 12: return GMT_LAYOUT_PROBE_3_12;
#endif
#ifdef GMT_LAYOUT_PROBE_3_13
    case 13: return GMT_LAYOUT_PROBE_3_13;
#endif
#ifdef GMT_LAYOUT_PROBE_3_14
    case 14: return GMT_LAYOUT_PROBE_3_14;
#endif
    default: return nullptr;
  }
}

class LayoutMatchesHeaders : public testing::TestWithParam<unsigned> {};

TEST_P(LayoutMatchesHeaders, EveryOffset) {
  unsigned minor = GetParam();
  const char* probe = layout_probe(minor);
  if (!probe)
    GTEST_SKIP() << "no CPython 3." << minor
                 << " with internal headers (include/python3.X/internal) was found under pyenv, /usr or /usr/local"
                    " when the build was configured";
  auto result = test::run_process({probe});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::map<std::string, long> measured;
  std::istringstream lines(result.out);
  for (std::string line; std::getline(lines, line);) {
    auto eq = line.find('=');
    ASSERT_NE(eq, std::string::npos) << line;
    measured[line.substr(0, eq)] = std::stol(line.substr(eq + 1));
  }
  const PythonLayout* layout = layout_for_minor(minor);
  ASSERT_NE(layout, nullptr);
  auto expect = [&](const char* key, long table_value) {
    ASSERT_TRUE(measured.count(key)) << key << " not printed by " << probe;
    EXPECT_EQ(table_value, measured[key]) << "3." << minor << " " << key;
  };
  expect("minor", layout->minor);
  expect("ob_type", layout->ob_type);
  if (layout->runtime_finalizing != kNoField) expect("runtime_finalizing", layout->runtime_finalizing);
  expect("tstate_frame", layout->tstate_frame);
  expect("cframe_current_frame", layout->cframe_current_frame);
  expect("frame_previous", layout->frame_previous);
  expect("frame_code", layout->frame_code);
  expect("frame_instr", layout->frame_instr);
  expect("frame_is_entry", layout->frame_is_entry);
  expect("frame_owner", layout->frame_owner);
  expect("owner_generator", layout->owner_generator);
  expect("owner_first_skipped", layout->owner_first_skipped);
  expect("owner_entry", layout->owner_entry);
  expect("code_units", layout->code_units);
  expect("code_filename", layout->code_filename);
  expect("code_name", layout->code_name);
  expect("code_qualname", layout->code_qualname);
  expect("code_linetable", layout->code_linetable);
  expect("code_firstlineno", layout->code_firstlineno);
  expect("code_firsttraceable", layout->code_firsttraceable);
  expect("code_adaptive", layout->code_adaptive);
  expect("unicode_length", layout->unicode_length);
  expect("unicode_state", layout->unicode_state);
  expect("unicode_ascii_size", layout->unicode_ascii_size);
  expect("unicode_compact_size", layout->unicode_compact_size);
  expect("state_kind_shift", layout->state_kind_shift);
  expect("state_compact_shift", layout->state_compact_shift);
  expect("state_ascii_shift", layout->state_ascii_shift);
  expect("state_ready_shift", layout->state_ready_shift);
  if (layout->chain == FrameChain::kFrameObjects) {
    expect("frame_lasti_size", 4);  // f_lasti is read as an int32_t
  } else {
    expect("codeunit_size", 2);  // lasti = byte distance / 2
  }
  EXPECT_EQ(layout->check_code_type, minor >= 13);  // f_executable (3.13+) may hold any object
  if (const DebugOffsetsLayout* dbg = debug_offsets_layout_for_minor(minor)) {
    expect("runtime_debug_offsets", 0);  // _PyRuntime starts with them
    expect("dbg_version", static_cast<long>(dbg->version));
    expect("dbg_free_threaded", static_cast<long>(dbg->free_threaded));
    expect("dbg_runtime_finalizing", static_cast<long>(dbg->runtime_finalizing));
    expect("dbg_tstate_current_frame", static_cast<long>(dbg->tstate_current_frame));
    expect("dbg_frame_previous", static_cast<long>(dbg->frame_previous));
    expect("dbg_frame_executable", static_cast<long>(dbg->frame_executable));
    expect("dbg_frame_instr_ptr", static_cast<long>(dbg->frame_instr_ptr));
    expect("dbg_frame_owner", static_cast<long>(dbg->frame_owner));
    expect("dbg_code_filename", static_cast<long>(dbg->code_filename));
    expect("dbg_code_name", static_cast<long>(dbg->code_name));
    expect("dbg_code_qualname", static_cast<long>(dbg->code_qualname));
    expect("dbg_code_linetable", static_cast<long>(dbg->code_linetable));
    expect("dbg_code_firstlineno", static_cast<long>(dbg->code_firstlineno));
    expect("dbg_code_adaptive", static_cast<long>(dbg->code_adaptive));
    expect("dbg_unicode_state", static_cast<long>(dbg->unicode_state));
    expect("dbg_unicode_length", static_cast<long>(dbg->unicode_length));
    expect("dbg_unicode_ascii_size", static_cast<long>(dbg->unicode_ascii_size));
  } else {
    EXPECT_FALSE(measured.count("dbg_version")) << "3." << minor << " has _Py_DebugOffsets the table does not know";
  }
}

INSTANTIATE_TEST_SUITE_P(Versions, LayoutMatchesHeaders, testing::Values(10u, 11u, 12u, 13u, 14u),
                         [](const testing::TestParamInfo<unsigned>& info) {
                           return "py3_" + std::to_string(info.param);
                         });

TEST(PythonLayout, KnownVersionsOnly) {
  EXPECT_EQ(layout_for_minor(9), nullptr);
  EXPECT_EQ(layout_for_minor(15), nullptr);
  for (unsigned minor = 10; minor <= 14; ++minor) ASSERT_NE(layout_for_minor(minor), nullptr) << minor;
  EXPECT_EQ(debug_offsets_layout_for_minor(12), nullptr);
}

}  // namespace
}  // namespace gpumemtrace::interpose::python
