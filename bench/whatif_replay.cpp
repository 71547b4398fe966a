// The allocator model's replay speed (docs/whatif.md): a PyTorch history of N entries (default 1,000,000) made
// by the model itself (allocs of 200 B..64 MiB on two streams, each freed later; the segment entries the model
// asked for before each), then joined and replayed as `gpumemtrace whatif` replays a recorded one.
//
//   bench_whatif_replay [ENTRIES]
//
// Prints the entries, the seconds to join and to replay them, and whether the replay matched every segment event.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "analyzer/allocator_model/allocator.h"
#include "analyzer/allocator_model/history_replay.h"

using namespace gpumemtrace;
using Action = pytorch::schema::Action;

namespace {

pytorch::Snapshot generated_history(uint64_t wanted) {
  allocator_model::Settings settings;
  allocator_model::Allocator model(settings);
  pytorch::Snapshot snapshot;
  pytorch::EntryArray<pytorch::SnapshotEntry>& entries = snapshot.device_traces.emplace_back();
  entries.reserve(wanted + 16);
  std::mt19937_64 random(24);
  std::lognormal_distribution<double> size_of(11.0, 3.0);  // median 60 KiB, a long tail into MiBs
  struct Live {
    allocator_model::BlockId block;
    uint64_t address, size, stream;
  };
  std::vector<Live> live;
  uint64_t time_us = 1'000'000, seen_events = 0;
  auto add = [&](Action action, uint64_t address, uint64_t size, uint64_t stream) {
    pytorch::SnapshotEntry e;
    e.action = action;
    e.address = address;
    e.size = size;
    e.stream = stream;
    e.time_us = time_us++;
    entries.push_back(e);
  };
  auto segments_since = [&] {
    static constexpr Action kActions[] = {Action::SegmentAlloc, Action::SegmentFree, Action::SegmentMap,
                                          Action::SegmentUnmap};
    for (; seen_events < model.events().size(); ++seen_events) {
      const allocator_model::SegmentEvent& s = model.events()[seen_events];
      add(kActions[static_cast<int>(s.kind)], s.address, s.size, s.stream);
    }
  };
  while (entries.size() < wanted) {
    bool allocate = live.size() < 500 || (live.size() < 4000 && random() % 2 == 0);
    if (allocate) {
      uint64_t size = std::clamp<uint64_t>(static_cast<uint64_t>(size_of(random)), 200, 64 << 20);
      uint64_t stream = random() % 4 == 0 ? 7 : 0;
      std::optional<allocator_model::BlockId> block = model.malloc(size, stream);
      segments_since();
      if (!block) continue;
      add(Action::Alloc, model.address(*block), size, stream);
      live.push_back({*block, model.address(*block), size, stream});
    } else {
      size_t at = random() % live.size();
      Live gone = live[at];
      live[at] = live.back();
      live.pop_back();
      model.free(gone.block);
      add(Action::FreeRequested, gone.address, gone.size, gone.stream);
      add(Action::FreeCompleted, gone.address, gone.size, gone.stream);
    }
  }
  return snapshot;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t wanted = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
  pytorch::Snapshot snapshot = generated_history(wanted);
  std::vector<pytorch::TakenSnapshot> taken = {{&snapshot, nullptr, UINT64_MAX / 2, UINT64_MAX / 2}};
  auto start = std::chrono::steady_clock::now();
  pytorch::JoinedHistory history = pytorch::join_histories(taken);
  double join = seconds_since(start);
  allocator_model::Settings settings;
  start = std::chrono::steady_clock::now();
  allocator_model::HistoryReplay replay = allocator_model::replay_history(taken, history, 0, settings);
  double replayed = seconds_since(start);
  std::printf("entries %zu (requests %llu, segment events %zu)\njoin %.3f s\nreplay %.3f s\nsegment events matched: %s\n",
              snapshot.device_traces[0].size(), static_cast<unsigned long long>(replay.requests),
              replay.recorded.size(), join, replayed, replay.first_difference ? "no" : "all");
  return replay.first_difference ? 1 : 0;
}
