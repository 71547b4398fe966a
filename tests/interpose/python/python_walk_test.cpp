// The walker on hand-built frame chains laid out as each version's table says, so that the rules are
// tested without an interpreter, 3.14 included: which frames are skipped (entry and C-stack frames,
// incomplete frames, non-code executables), where the entry flags go, truncation, lines through the
// cache, names through describe().
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "interpose/stacks/python/python_frames.h"
#include "tests/interpose/python/fake_type_objects.h"

namespace gpumemtrace::interpose::python {
namespace {

const char* g_tstate = nullptr;
int g_addr2line_calls = 0;

void* fake_tstate() { return const_cast<char*>(g_tstate); }
int fake_addr2line(void*, int byte_offset) {
  ++g_addr2line_calls;
  return 1000 + byte_offset / 2;
}

class FakeInterpreter {
 public:
  explicit FakeInterpreter(unsigned minor) : l_(*layout_for_minor(minor)) {
    runtime_.version_hex = 0x03000000u | minor << 16 | 0xF0;
    runtime_.layout = &l_;
    runtime_.this_thread_state = fake_tstate;
    runtime_.addr2line = fake_addr2line;
    runtime_.code_type = &g_code_type;
    runtime_.unicode_type = &g_str_type;
    runtime_.finalizing = &finalizing_;
    stacks_ = std::make_unique<PythonStacks>(runtime_);
    tstate_ = block();
    if (l_.cframe_current_frame != kNoField) set(tstate_, l_.tstate_frame, block());
    g_tstate = tstate_;
    g_addr2line_calls = 0;
  }
  ~FakeInterpreter() { g_tstate = nullptr; }

  const PythonLayout& layout() const { return l_; }
  const char* tstate() const { return tstate_; }
  void set_finalizing(const void* tstate) { finalizing_ = tstate; }
  PythonStacks& stacks() { return *stacks_; }

  char* str(const std::string& ascii) {
    char* s = block();
    set(s, l_.ob_type, static_cast<const void*>(&g_str_type));
    set(s, l_.unicode_length, static_cast<int64_t>(ascii.size()));
    uint32_t state = 1u << l_.state_kind_shift | 1u << l_.state_compact_shift | 1u << l_.state_ascii_shift;
    if (l_.state_ready_shift >= 0) state |= 1u << l_.state_ready_shift;
    set(s, l_.unicode_state, state);
    std::memcpy(s + l_.unicode_ascii_size, ascii.data(), ascii.size());
    return s;
  }
  char* code(const std::string& qualname, int32_t first_line, int64_t units = 100, int32_t firsttraceable = 0) {
    char* c = block();
    set(c, l_.ob_type, static_cast<const void*>(&g_code_type));
    if (l_.code_units != kNoField) set(c, l_.code_units, units);
    if (l_.code_firsttraceable != kNoField) set(c, l_.code_firsttraceable, firsttraceable);
    set(c, l_.code_firstlineno, first_line);
    set(c, l_.code_filename, str("/src/model.py"));
    auto dot = qualname.rfind('.');
    set(c, l_.code_name, str(dot == std::string::npos ? qualname : qualname.substr(dot + 1)));
    if (l_.code_qualname != kNoField) set(c, l_.code_qualname, str(qualname));
    set(c, l_.code_linetable, block());
    return c;
  }
  // A Python frame executing instruction `lasti` of `code`.
  char* frame(const char* code, int32_t lasti, uint8_t owner = 0, bool is_entry = false, uintptr_t tag = 0) {
    char* f = block();
    if (l_.chain == FrameChain::kFrameObjects) {
      set(f, l_.frame_code, code);
      set(f, l_.frame_instr, lasti);
      return f;
    }
    set(f, l_.frame_code, reinterpret_cast<uintptr_t>(code) | tag);
    set(f, l_.frame_instr, code + l_.code_adaptive + 2 * lasti);
    set(f, l_.frame_owner, owner);
    if (l_.frame_is_entry != kNoField) set(f, l_.frame_is_entry, static_cast<uint8_t>(is_entry));
    return f;
  }
  // Another line table for `code`, as a successor allocated at its address would have.
  void replace_line_table(char* code) { set(code, l_.code_linetable, block()); }
  // The frame _PyEval_EvalFrameDefault pushes below the first frame it evaluates (3.12+).
  char* entry_frame() {
    char* f = block();
    set(f, l_.frame_owner, static_cast<uint8_t>(l_.owner_entry));
    return f;
  }
  // Innermost first.
  void chain(const std::vector<char*>& frames) {
    for (size_t i = 0; i + 1 < frames.size(); ++i) set(frames[i], l_.frame_previous, frames[i + 1]);
    char* top = frames.empty() ? nullptr : frames[0];
    if (l_.cframe_current_frame != kNoField)
      set(*reinterpret_cast<char**>(tstate_ + l_.tstate_frame), l_.cframe_current_frame, top);
    else
      set(tstate_, l_.tstate_frame, top);
  }

  struct Walked {
    std::vector<PythonFrame> frames;
    bool truncated = false;
  };
  Walked walk(size_t max = 64) {
    Walked w;
    w.frames.resize(max);
    w.frames.resize(stacks_->walk(w.frames.data(), max, &w.truncated));
    return w;
  }

 private:
  template <typename T>
  static void set(char* base, int16_t offset, T value) {
    ASSERT_GE(offset, 0);
    std::memcpy(base + offset, &value, sizeof value);
  }
  char* block() {
    blocks_.push_back(std::make_unique<uint64_t[]>(64));  // 512 zeroed bytes, aligned
    return reinterpret_cast<char*>(blocks_.back().get());
  }

  PythonLayout l_;
  PythonRuntime runtime_;
  std::unique_ptr<PythonStacks> stacks_;
  std::vector<std::unique_ptr<uint64_t[]>> blocks_;
  char* tstate_ = nullptr;
  const void* finalizing_ = nullptr;
};

std::vector<int32_t> lines(const std::vector<PythonFrame>& frames) {
  std::vector<int32_t> out;
  for (const auto& f : frames) out.push_back(f.line);
  return out;
}
std::vector<bool> entries(const std::vector<PythonFrame>& frames) {
  std::vector<bool> out;
  for (const auto& f : frames) out.push_back((f.flags & kFrameEntry) != 0);
  return out;
}

// 3.11+: two evaluations, A B in the inner one (B where it began), C in the outer one.
class InterpreterFrames : public testing::TestWithParam<unsigned> {
 protected:
  void build_two_evaluations(FakeInterpreter& py) {
    char* code = py.code("Model.forward", 10);
    bool is_311 = py.layout().frame_is_entry != kNoField;
    char* a = py.frame(code, 5);
    char* b = py.frame(code, 6, 0, is_311);
    char* c = py.frame(code, 7, 0, is_311);
    if (is_311)
      py.chain({a, b, c});
    else
      py.chain({a, b, py.entry_frame(), c, py.entry_frame()});
  }
};

TEST_P(InterpreterFrames, EntryFlagsMarkWhereEachEvaluationBegan) {
  FakeInterpreter py(GetParam());
  build_two_evaluations(py);
  auto w = py.walk();
  EXPECT_EQ(lines(w.frames), (std::vector<int32_t>{1005, 1006, 1007}));
  EXPECT_EQ(entries(w.frames), (std::vector<bool>{false, true, true}));
  EXPECT_FALSE(w.truncated);
  EXPECT_EQ(w.frames[0].lasti, 5);
}

TEST_P(InterpreterFrames, TruncationKeepsTheInnermostAndTheirFlags) {
  FakeInterpreter py(GetParam());
  build_two_evaluations(py);
  auto one = py.walk(1);
  EXPECT_EQ(lines(one.frames), (std::vector<int32_t>{1005}));
  EXPECT_TRUE(one.truncated);
  auto two = py.walk(2);
  EXPECT_EQ(entries(two.frames), (std::vector<bool>{false, true}));  // B's entry frame lies beyond the cut
  EXPECT_TRUE(two.truncated);
  auto three = py.walk(3);
  EXPECT_EQ(three.frames.size(), 3u);
  EXPECT_FALSE(three.truncated);
  EXPECT_EQ(py.walk(0).frames.size(), 0u);
  EXPECT_TRUE(py.walk(0).truncated);
}

TEST_P(InterpreterFrames, IncompleteFramesAreSkippedExceptGenerators) {
  FakeInterpreter py(GetParam());
  char* code = py.code("f", 20, 100, /*firsttraceable=*/4);
  char* shim = py.code("__init__", 0, 3, /*firsttraceable=*/4);  // 3.13's _Py_InitCleanup is like this
  char* pushed = py.frame(code, 2);                  // not yet at its RESUME
  char* init_shim = py.frame(shim, 0);
  char* generator = py.frame(code, -1, 1);           // a generator not started: complete, line = first line
  char* running = py.frame(code, 9);
  py.chain({pushed, generator, init_shim, running});
  auto w = py.walk();
  EXPECT_EQ(lines(w.frames), (std::vector<int32_t>{20, 1009}));
  EXPECT_EQ(w.frames[0].lasti, -1);
}

TEST_P(InterpreterFrames, InstructionsOutsideTheCodeHaveNoLine) {
  FakeInterpreter py(GetParam());
  char* code = py.code("f", 20, /*units=*/8);
  py.chain({py.frame(code, 8), py.frame(code, 7)});
  EXPECT_EQ(lines(py.walk().frames), (std::vector<int32_t>{-1, 1007}));
}

TEST_P(InterpreterFrames, LinesAreResolvedOncePerInstruction) {
  FakeInterpreter py(GetParam());
  char* code = py.code("f", 20);
  py.chain({py.frame(code, 3), py.frame(code, 4), py.frame(code, 3)});
  EXPECT_EQ(lines(py.walk().frames), (std::vector<int32_t>{1003, 1004, 1003}));
  EXPECT_EQ(g_addr2line_calls, 2);
  EXPECT_EQ(lines(py.walk().frames), (std::vector<int32_t>{1003, 1004, 1003}));
  EXPECT_EQ(g_addr2line_calls, 2);
}

TEST_P(InterpreterFrames, NoThreadStateNoFrames) {
  FakeInterpreter py(GetParam());
  build_two_evaluations(py);
  g_tstate = nullptr;
  auto w = py.walk();
  EXPECT_TRUE(w.frames.empty());
  EXPECT_FALSE(w.truncated);
}

TEST_P(InterpreterFrames, NothingWhileAnotherThreadFinalizes) {
  FakeInterpreter py(GetParam());
  build_two_evaluations(py);
  char other_thread_state;
  py.set_finalizing(&other_thread_state);
  EXPECT_TRUE(py.walk().frames.empty());
  py.set_finalizing(py.tstate());  // the finalizing thread itself
  EXPECT_EQ(py.walk().frames.size(), 3u);
}

TEST_P(InterpreterFrames, DescribeAndIdentity) {
  FakeInterpreter py(GetParam());
  char* forward = py.code("Model.forward", 10);
  char* backward = py.code("Model.forward", 10);  // same names and first line, its own line table
  CodeInfo info = py.stacks().describe(forward);
  EXPECT_EQ(info.filename, "/src/model.py");
  EXPECT_EQ(info.qualname, py.layout().code_qualname != kNoField ? "Model.forward" : "forward");
  EXPECT_EQ(info.name, "forward");
  EXPECT_EQ(info.first_line, 10);
  EXPECT_TRUE(py.stacks().same_code(forward, info.identity));
  EXPECT_FALSE(py.stacks().same_code(backward, info.identity));
}

INSTANTIATE_TEST_SUITE_P(Versions, InterpreterFrames, testing::Values(11u, 12u, 13u, 14u),
                         [](const testing::TestParamInfo<unsigned>& info) {
                           return "py3_" + std::to_string(info.param);
                         });

TEST(InterpreterFrames313, NonCodeExecutablesAreSkipped) {
  FakeInterpreter py(13);
  char* code = py.code("f", 20);
  char* not_code = py.code("g", 30);
  const void* other = &g_other_type;
  std::memcpy(not_code + py.layout().ob_type, &other, sizeof other);
  py.chain({py.frame(not_code, 1), py.frame(code, 2)});
  EXPECT_EQ(lines(py.walk().frames), (std::vector<int32_t>{1002}));
}

TEST(InterpreterFrames314, TaggedExecutablesAndCStackFrames) {
  FakeInterpreter py(14);
  char* code = py.code("f", 20);
  char* cstack = py.frame(code, 0, /*owner=FRAME_OWNED_BY_CSTACK*/ 4);
  py.chain({py.frame(code, 1, 0, false, /*tag=*/1), cstack, py.frame(code, 2), py.entry_frame()});
  auto w = py.walk();
  EXPECT_EQ(lines(w.frames), (std::vector<int32_t>{1001, 1002}));
  EXPECT_EQ(entries(w.frames), (std::vector<bool>{false, true}));  // a C-stack frame is no entry
  EXPECT_EQ(w.frames[0].code, code);
}

TEST(FrameObjects310, EveryFrameIsAnEvaluation) {
  FakeInterpreter py(10);
  char* code = py.code("forward", 10);
  py.chain({py.frame(code, 5), py.frame(code, -1)});
  auto w = py.walk();
  EXPECT_EQ(lines(w.frames), (std::vector<int32_t>{1005, 10}));
  EXPECT_EQ(entries(w.frames), (std::vector<bool>{true, true}));
  EXPECT_EQ(py.stacks().describe(code).qualname, "forward");
  auto one = py.walk(1);
  EXPECT_EQ(one.frames.size(), 1u);
  EXPECT_TRUE(one.truncated);
}

// A walk into the buffer of the thread's last walk takes the lines of the frames that did not change from
// there, and resolves the others (another instruction, another line table) as usual.
TEST(RepeatedWalks, ReuseTheLinesOfUnchangedFrames) {
  for (unsigned minor : {10u, 11u, 12u, 13u, 14u}) {
    SCOPED_TRACE("3." + std::to_string(minor));
    FakeInterpreter py(minor);
    char* f = py.code("f", 20);
    char* g = py.code("g", 30);
    std::vector<PythonFrame> buffer(8);
    auto walk = [&](size_t previous) {
      size_t n = py.stacks().walk(buffer.data(), buffer.size(), nullptr, previous);
      return std::vector<PythonFrame>(buffer.begin(), buffer.begin() + static_cast<ptrdiff_t>(n));
    };
    py.chain({py.frame(f, 3), py.frame(g, 5)});
    EXPECT_EQ(lines(walk(0)), (std::vector<int32_t>{1003, 1005}));
    EXPECT_EQ(g_addr2line_calls, 2);
    EXPECT_EQ(lines(walk(2)), (std::vector<int32_t>{1003, 1005}));
    EXPECT_EQ(g_addr2line_calls, 2);
    py.chain({py.frame(f, 4), py.frame(g, 5)});
    py.replace_line_table(g);
    EXPECT_EQ(lines(walk(2)), (std::vector<int32_t>{1004, 1005}));
    EXPECT_EQ(g_addr2line_calls, 4);  // neither the reused frames nor the line cache answered
    py.chain({py.frame(g, 5), py.frame(f, 4), py.frame(f, 4)});
    EXPECT_EQ(lines(walk(2)), (std::vector<int32_t>{1005, 1004, 1004}));
    EXPECT_EQ(g_addr2line_calls, 4);  // moved frames: from the line cache
  }
}

}  // namespace
}  // namespace gpumemtrace::interpose::python
