// The blocks a program's own sub-allocator handed out (annotate.h or the NVTX memory extension: the trace's heap
// records, docs/capture.md "Heaps"), as the requests whatif replays through the model of PyTorch's caching allocator
// when a trace has no PyTorch history (whatif_model.h). One set per device:
// - each SubAlloc is an alloc of the size asked, on the default stream (heap records name no stream);
// - each SubFree a free; a SubFreeRequested a free_requested, its SubFree then the free_completed;
// - a HeapReset or HeapDestroy frees the heap's live blocks, in address order.
// Blocks of heaps never created (heap 0 among them) are left out. Beside them, the program's own allocator: the
// memory of its live heaps, summed, and its peak, for the comparison with the model's peak reserved.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/pytorch/snapshot.h"
#include "analyzer/replay/stack_table.h"
#include "trace/reader/reader.h"

namespace gpumemtrace::report {

struct HeapRequests {
  int32_t device = trace::kNoDevice;  // kNoDevice: heaps whose device was not said
  std::vector<std::string> heap_names;  // of the heaps with blocks, each name once, in the order they were created
  uint64_t heaps = 0;                   // heaps with blocks
  bool device_said = true;              // every heap said its device (annotate.h does; NVTX's never do)
  std::vector<pytorch::SnapshotEntry> entries;  // alloc, free, free_requested, free_completed
  std::vector<uint64_t> times_ns;               // each entry's time on the trace's clock
  std::vector<replay::StackId> stacks;          // each entry's stack (an alloc's; 0 for the others)
  // The program's own allocator: the most memory its heaps held at once; nullopt when a heap did not say its memory.
  std::optional<uint64_t> peak_heap_memory;
  // "the blocks handed out by heap 'pool' (annotate.h)"
  std::string describe() const;
};

class HeapRequestsReader {
 public:
  void on(const trace::HeapCreate& create);
  void on(const trace::HeapDestroy& destroy);
  void on(const trace::HeapReset& reset);
  // `stack`: the block's stack, interned by the reader of the records.
  void on(const trace::SubAlloc& alloc, replay::StackId stack);
  void on(const trace::SubFree& free);
  void on(const trace::SubFreeRequested& free);
  // The devices' requests, by device; devices without blocks are left out.
  std::vector<HeapRequests> take();

 private:
  struct Heap {
    int32_t device = trace::kNoDevice;
    std::string name;
    uint64_t size = 0;
    bool used = false;
    std::map<uint64_t, bool> live;  // address -> free requested
  };
  struct Device {
    HeapRequests requests;
    uint64_t memory = 0;  // of its live heaps
    uint64_t peak = 0;
    bool memory_known = true;
  };
  Device& device_of(const Heap& heap) { return devices_[heap.device]; }
  void add(Heap& heap, pytorch::schema::Action action, uint64_t address, uint64_t size, uint64_t time_ns,
           replay::StackId stack = 0);
  void free_all(Heap& heap, uint64_t time_ns);

  std::unordered_map<uint64_t, Heap> heaps_;
  std::map<int32_t, Device> devices_;
};

}  // namespace gpumemtrace::report
