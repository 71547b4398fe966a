// Who made a call and from where, taken on the calling thread so that a record written later, from another
// thread (CUPTI's activity buffers), is attributed to it.
#pragma once

#include <cstdint>

namespace gpumemtrace::interpose {

struct CallOrigin {
  uint64_t thread = 0;        // the recorder's index of the calling thread (0: unknown)
  uint32_t stack = 0;         // its stack, interned in the stack trie (0: the empty stack)
  uint64_t stacks_epoch = 0;  // the trie the stack id belongs to: a reset or a fork starts another
  uint64_t generation = 0;    // the trace the thread index belongs to: a forked child starts another
  bool operator==(const CallOrigin&) const = default;
};

}  // namespace gpumemtrace::interpose
