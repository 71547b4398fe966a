#include "analyzer/replay/phase_instances.h"

#include <algorithm>

namespace gpumemtrace::replay {

template <typename F>
void PhaseInstances::for_open_chain(uint32_t id, F f) {
  for (; id != kNoInstance; id = instances_[id].parent)
    if (instances_[id].open) f(id);
}

void PhaseInstances::on_push(uint32_t thread, PathId path, uint64_t domain, uint64_t time_ns, uint64_t live) {
  if (thread >= threads_.size()) threads_.resize(thread + 1);
  std::vector<Open>& open = threads_[thread];
  auto id = static_cast<uint32_t>(instances_.size());
  PhaseInstance& instance = instances_.emplace_back();
  instance.path = path;
  instance.thread = thread;
  instance.number = ++counts_[path];
  instance.parent = open.empty() ? kNoInstance : open.back().instance;
  instance.start_ns = time_ns;
  instance.live_at_start = live;
  instance.peak_bytes = live;
  instance.peak_ns = time_ns;
  open.push_back({id, domain});
  open_.push_back(id);
  if (path >= spans_.size()) spans_.resize(path + 1);
  if (spans_[path].open++ == 0) ++spans_[path].windows;
}

void PhaseInstances::on_pop(uint32_t thread, uint64_t domain, uint64_t time_ns, uint64_t live) {
  if (thread >= threads_.size()) return;
  std::vector<Open>& open = threads_[thread];
  // The innermost of the domain, as the phase tracker pops it; nothing when none is open.
  auto it = std::find_if(open.rbegin(), open.rend(), [domain](const Open& o) { return o.domain == domain; });
  if (it == open.rend()) return;
  uint32_t id = it->instance;
  open.erase(std::next(it).base());
  close(id, time_ns, live);
}

void PhaseInstances::close(uint32_t id, uint64_t time_ns, uint64_t live) {
  PhaseInstance& instance = instances_[id];
  instance.open = false;
  instance.end_ns = time_ns;
  --spans_[instance.path].open;
  instance.live_at_end = live;
  std::erase(open_, id);
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
  for (uint32_t id : open_) {
    PhaseInstance& instance = instances_[id];
    if (live > instance.peak_bytes) {
      instance.peak_bytes = live;
      instance.peak_ns = time_ns;
    }
  }
  if (thread >= threads_.size() || threads_[thread].empty()) return;
  uint32_t innermost = threads_[thread].back().instance;
  made_in_[key] = innermost;
  for_open_chain(innermost, [&](uint32_t id) {
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
  for (uint32_t id : std::vector<uint32_t>(open_)) {
    close(id, end_ns, live);
    instances_[id].open = true;
  }
}

}  // namespace gpumemtrace::replay
