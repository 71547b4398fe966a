// Objects whose handles the program holds for the rest of the process (NVTX domains, registered strings):
// never freed, and owned here as well as in the program's hands, so that a leak checker sees them as
// reachable (the asan preset's LeakSanitizer reported every one the program had dropped). Lock-free: a
// forked child may create more while its parent was in the middle of creating one.
#pragma once

#include <atomic>
#include <utility>

namespace gpumemtrace::interpose {

template <typename T>
class KeptForever {
 public:
  template <typename... Args>
  T* keep(Args&&... args) {
    Node* node = new Node{T{std::forward<Args>(args)...}, head_.load(std::memory_order_relaxed)};
    while (!head_.compare_exchange_weak(node->next, node, std::memory_order_release, std::memory_order_relaxed)) {
    }
    return &node->value;
  }

 private:
  struct Node {
    T value;
    Node* next;
  };
  std::atomic<Node*> head_{nullptr};
};

}  // namespace gpumemtrace::interpose
