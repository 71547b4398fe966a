#include "interpose/stacks/native/fast_unwind.h"

#include <cstring>
#include <memory>
#include <new>

#include "interpose/stacks/native/frame_rule_cache.h"

// The walker reads saved registers and return addresses out of other functions' frames, which
// AddressSanitizer (GPUMEMTRACE_ASAN) would take for stray accesses.
#define GMT_READS_OTHER_FRAMES __attribute__((no_sanitize("address")))

namespace gpumemtrace::interpose {

namespace {

// Registers that decide how a frame steps to its caller.
struct Registers {
  uintptr_t ip = 0, sp = 0, bp = 0;
  bool operator==(const Registers&) const = default;
};

// A memory word a step read, and what it held.
struct Word {
  uintptr_t address;
  uintptr_t value;
};

constexpr size_t kMaxSteps = 288;  // stack_capture asks for at most 256 frames plus the tracer's own
constexpr size_t kMaxWords = 3 * kMaxSteps;

// A walk: the registers of each frame and the words each step to the caller read. Given the same
// registers, the same rules and the same words, a step goes the same way.
// How a walk ended. A walk cut at its frame limit knows the registers of the next frame (its tail), so
// the next walk can go on from there after reusing it; one cut where a step went another way cannot.
enum class WalkEnd : uint8_t { Unknown, Bottom, Cut };

struct Walk {
  uint64_t generation = 0;
  size_t count = 0;
  WalkEnd end = WalkEnd::Unknown;
  Registers tail;  // WalkEnd::Cut: the registers of the frame after the last one
  Registers regs[kMaxSteps];
  uint32_t words_end[kMaxSteps];  // the words of step i are [words_begin(i), words_end[i])
  Word words[kMaxWords];

  size_t words_begin(size_t step) const { return step ? words_end[step - 1] : 0; }

  // Adds steps [from, to) of another walk at the end.
  void append(const Walk& other, size_t from, size_t to) {
    if (from == to) return;
    size_t first = other.words_begin(from), last = other.words_begin(to);
    size_t base = words_begin(count);
    std::memcpy(regs + count, other.regs + from, (to - from) * sizeof(Registers));
    std::memcpy(words + base, other.words + first, (last - first) * sizeof(Word));
    for (size_t i = from; i < to; ++i) words_end[count++] = static_cast<uint32_t>(other.words_end[i] - first + base);
  }

  // The first step from `from` on whose words no longer hold what they held (count if none).
  GMT_READS_OTHER_FRAMES size_t first_changed(size_t from) const {
    size_t end = words_begin(count);
    for (size_t w = words_begin(from); w < end; ++w) {
      if (*reinterpret_cast<const uintptr_t*>(words[w].address) != words[w].value) {
        size_t step = from;
        while (words_end[step] <= w) ++step;
        return step;
      }
    }
    return count;
  }

  // Makes this walk `fresh` followed by this walk's steps [from, to).
  void join(const Walk& fresh, size_t from, size_t to) {
    size_t kept = to - from;  // to > from
    size_t old_begin = words_begin(from);
    size_t kept_words = words_end[to - 1] - old_begin;
    size_t fresh_words = fresh.words_begin(fresh.count);
    if (fresh.count != from) {
      std::memmove(regs + fresh.count, regs + from, kept * sizeof(Registers));
      std::memmove(words_end + fresh.count, words_end + from, kept * sizeof(uint32_t));
    }
    if (fresh_words != old_begin) {
      std::memmove(words + fresh_words, words + old_begin, kept_words * sizeof(Word));
      for (size_t i = fresh.count; i < fresh.count + kept; ++i) words_end[i] = words_end[i] - old_begin + fresh_words;
    }
    std::memcpy(regs, fresh.regs, fresh.count * sizeof(Registers));
    std::memcpy(words_end, fresh.words_end, fresh.count * sizeof(uint32_t));
    std::memcpy(words, fresh.words, fresh_words * sizeof(Word));
    count = fresh.count + kept;
  }
};

// Per thread: the last walk, and room for the frames of the current walk that are stepped afresh. A stack
// changes little between two allocations: from the first frame where this walk meets the last one (same
// registers), the rest of the last walk is reused after checking that every word it read still holds the
// same value. That is exact, and much cheaper than stepping, because the checks do not wait on each
// other's loads.
struct ThreadWalks {
  std::unique_ptr<Walk> last, fresh;
};
thread_local ThreadWalks t_walks __attribute__((tls_model("initial-exec")));

enum class StepResult { Stepped, Bottom, CannotStep };

class StepRecorder {
 public:
  explicit StepRecorder(Walk& walk) : walk_(walk), next_(walk.words_begin(walk.count)) {}
  GMT_READS_OTHER_FRAMES uintptr_t load(uintptr_t address) {
    uintptr_t value = *reinterpret_cast<const uintptr_t*>(address);
    walk_.words[next_++] = {address, value};
    return value;
  }
  ~StepRecorder() { walk_.words_end[walk_.count++] = static_cast<uint32_t>(next_); }

 private:
  Walk& walk_;
  size_t next_;
};

// Adds the frame at `regs` to the walk and moves `regs` to its caller's frame.
StepResult step_to_caller(Registers& regs, Walk& walk) {
  using Kind = FrameRule::Kind;
  using Cfa = FrameRule::Cfa;
  walk.regs[walk.count] = regs;
  StepRecorder memory(walk);
  // The rule of the call instruction (ip is where the call returns to).
  FrameRule rule = cached_frame_rule(regs.ip - 1);
  if (rule.kind == Kind::Outermost) return StepResult::Bottom;
  if (rule.kind != Kind::Step) return StepResult::CannotStep;
  uintptr_t cfa = rule.cfa == Cfa::RspOffset   ? regs.sp + rule.cfa_offset
                  : rule.cfa == Cfa::RbpOffset ? regs.bp + rule.cfa_offset
                                               : memory.load(regs.bp + rule.cfa_offset);
  if (cfa <= regs.sp) return StepResult::CannotStep;  // frames only move up the stack
  uintptr_t return_address = memory.load(cfa - 8);
  if (rule.rbp_saved) regs.bp = memory.load((rule.rbp_from_rbp ? regs.bp : cfa) + rule.rbp_offset);
  regs.sp = cfa;
  regs.ip = return_address;
  return return_address == 0 ? StepResult::Bottom : StepResult::Stepped;
}

long copy_return_addresses(const Walk& walk, uintptr_t* out) {
  const size_t count = walk.count;
  for (size_t i = 0; i < count; ++i) out[i] = walk.regs[i].ip;
  return static_cast<long>(count);
}

__attribute__((always_inline)) inline Registers current_registers() {
  Registers regs;
#if defined(__x86_64__)
  // This instruction's own address and registers: the CFI row of the next instruction describes them.
  asm volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2" : "=r"(regs.ip), "=r"(regs.sp), "=r"(regs.bp));
#endif
  return regs;
}

}  // namespace

// Aligned to a cache line: how its loops fall across fetch blocks otherwise depends on everything linked
// before it, and moved the cost of a traced event by 10 ns from one build to the next.
__attribute__((noinline, aligned(64))) long fast_backtrace(uintptr_t* out, size_t max) {
#if defined(__x86_64__)
  Registers regs = current_registers();
  ThreadWalks& walks = t_walks;
  if (!walks.fresh) {
    walks.last.reset(new (std::nothrow) Walk);
    walks.fresh.reset(new (std::nothrow) Walk);
    if (!walks.last || !walks.fresh) return -1;
  }
  if (max > kMaxSteps) max = kMaxSteps;
  const uint64_t generation = frame_rule_generation();
  Walk* last = walks.last.get();
  Walk* fresh = walks.fresh.get();
  fresh->count = 0;
  bool reusable = last->end != WalkEnd::Unknown && last->generation == generation;
  size_t cursor = 0;  // into last: the first step whose frame is not below the current one
  bool bottom = false;
  while (fresh->count < max) {
    if (reusable) {
      while (cursor < last->count && last->regs[cursor].sp < regs.sp) ++cursor;
      if (cursor < last->count && last->regs[cursor] == regs) {
        // The same frame as last time: its steps stand up to the first one that read something else.
        size_t changed = last->first_changed(cursor);
        size_t room = max - fresh->count;
        if (changed == last->count) {
          size_t end = last->count - cursor > room ? cursor + room : last->count;
          WalkEnd how = end < last->count ? WalkEnd::Cut : last->end;
          Registers tail = end < last->count ? last->regs[end] : last->tail;
          last->join(*fresh, cursor, end);
          last->end = how;
          last->tail = tail;
          last->generation = generation;
          if (how == WalkEnd::Bottom || last->count == max) return copy_return_addresses(*last, out);
          // The last walk was cut higher up the stack than this one may go: step on from its tail.
          std::swap(last, fresh);
          regs = tail;
          reusable = false;
          continue;
        }
        if (changed - cursor + 1 >= room) {  // the changed frame itself stands
          size_t end = cursor + room;
          // Steps before `changed` went the same way, so the frame after them is known; after `changed`, not.
          WalkEnd how = end <= changed ? WalkEnd::Cut : WalkEnd::Unknown;
          Registers tail = end <= changed ? last->regs[end] : Registers{};
          last->join(*fresh, cursor, end);
          last->end = how;
          last->tail = tail;
          last->generation = generation;
          return copy_return_addresses(*last, out);
        }
        // Step `changed` read something else this time: the steps before it stand, it goes afresh, and a
        // frame further up may join the last walk again.
        fresh->append(*last, cursor, changed);
        regs = last->regs[changed];
        cursor = changed + 1;
      }
    }
    StepResult result = step_to_caller(regs, *fresh);
    if (result == StepResult::CannotStep) {
      fresh->end = WalkEnd::Unknown;  // it may be the last walk, extended
      return -1;
    }
    if (result == StepResult::Bottom) {
      bottom = true;
      break;
    }
  }
  fresh->end = bottom ? WalkEnd::Bottom : WalkEnd::Cut;
  fresh->tail = regs;
  fresh->generation = generation;
  if (walks.last.get() != fresh) std::swap(walks.last, walks.fresh);
  return copy_return_addresses(*fresh, out);
#else
  (void)out;
  (void)max;
  return -1;
#endif
}

}  // namespace gpumemtrace::interpose
