#include "analyzer/replay/phase_instances.h"

#include <algorithm>

namespace gpumemtrace::replay {

template <typename F>
void PhaseInstances::for_open_chain(const MadeIn& made_in, F f) {
  if (made_in.thread >= threads_.size()) return;
  // The thread's open instances in the order they began: those that began by then were open then.
  for (uint32_t id : threads_[made_in.thread]) {
    if (id > made_in.innermost) break;
    f(id);
  }
}

void PhaseInstances::level(uint64_t time_ns, uint64_t live) {
  while (!levels_.empty() && levels_.back().bytes < live) levels_.pop_back();
  levels_.push_back(Level{++sequence_, live, time_ns});
}

void PhaseInstances::on_push(uint32_t thread, PathId path, uint64_t time_ns, uint64_t live) {
  if (thread >= threads_.size()) threads_.resize(thread + 1);
  std::vector<uint32_t>& open = threads_[thread];
  auto id = static_cast<uint32_t>(instances_.size());
  PhaseInstance& instance = instances_.emplace_back();
  instance.path = path;
  instance.thread = thread;
  instance.number = ++counts_[path];
  instance.parent = open.empty() ? kNoInstance : open.back();
  instance.start_ns = time_ns;
  instance.live_at_start = live;
  level(time_ns, live);
  start_sequences_.push_back(sequence_);
  open.push_back(id);
  ++open_;
  if (path >= spans_.size()) spans_.resize(path + 1);
  if (spans_[path].open++ == 0) ++spans_[path].windows;
}

void PhaseInstances::on_pop(uint32_t thread, size_t place, uint64_t time_ns, uint64_t live) {
  if (thread >= threads_.size() || place >= threads_[thread].size()) return;
  std::vector<uint32_t>& open = threads_[thread];
  uint32_t id = open[place];
  open.erase(open.begin() + static_cast<std::ptrdiff_t>(place));
  close(id, time_ns, live);
  if (--open_ == 0) levels_.clear();
}

void PhaseInstances::close(uint32_t id, uint64_t time_ns, uint64_t live) {
  PhaseInstance& instance = instances_[id];
  instance.open = false;
  instance.end_ns = time_ns;
  --spans_[instance.path].open;
  instance.live_at_end = live;
  auto peak = std::lower_bound(levels_.begin(), levels_.end(), start_sequences_[id],
                               [](const Level& level, uint64_t sequence) { return level.sequence < sequence; });
  instance.peak_bytes = peak->bytes;  // the level of its own push is there at least
  instance.peak_ns = peak->time_ns;
  if (auto it = live_in_.find(id); it != live_in_.end()) {
    for (const auto& [site, share] : it->second) {
      if (share.count == 0) continue;
      instance.left_live.push_back(share);
      instance.left_bytes += share.bytes;
      instance.left_count += share.count;
    }
    live_in_.erase(it);
  }
  std::sort(instance.left_live.begin(), instance.left_live.end(),
            [](const SiteBytes& a, const SiteBytes& b) { return a.bytes != b.bytes ? a.bytes > b.bytes : a.site < b.site; });
}

void PhaseInstances::on_alloc(uint32_t thread, uint64_t key, SiteId site, uint64_t size, uint64_t time_ns,
                              uint64_t live) {
  if (open_ == 0) return;
  level(time_ns, live);
  if (thread >= threads_.size() || threads_[thread].empty()) return;
  MadeIn made_in{thread, threads_[thread].back()};
  made_in_[key] = made_in;
  for_open_chain(made_in, [&](uint32_t id) {
    instances_[id].allocated_bytes += size;
    instances_[id].allocations += 1;
    SiteBytes& share = live_in_[id][site];
    share.site = site;
    share.bytes += size;
    share.count += 1;
  });
}

void PhaseInstances::on_free(uint64_t key, SiteId site, uint64_t size) {
  auto made = made_in_.find(key);
  if (made == made_in_.end()) return;
  for_open_chain(made->second, [&](uint32_t id) {
    SiteBytes& share = live_in_[id][site];
    share.bytes -= std::min(share.bytes, size);
    share.count -= std::min<uint64_t>(share.count, 1);
  });
  made_in_.erase(made);
}

void PhaseInstances::finish(uint64_t end_ns, uint64_t live) {
  for (std::vector<uint32_t>& open : threads_) {
    for (uint32_t id : open) {
      close(id, end_ns, live);
      instances_[id].open = true;
    }
    open.clear();
  }
  open_ = 0;
  levels_.clear();
}

}  // namespace gpumemtrace::replay
