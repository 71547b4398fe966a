#include "interpose/phases/phase_recorder.h"

#include <pthread.h>

#include <atomic>
#include <functional>
#include <unordered_map>
#include <vector>

#include "interpose/base/kept_forever.h"
#include "interpose/recording/recorder.h"

namespace gpumemtrace::interpose::phases {

namespace {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};

// What the current trace already holds. Only touched while the recorder writes (under its lock); a forked
// child's trace starts empty, and so does this.
class Interned {
 public:
  Interned() {
    pthread_atfork(nullptr, nullptr, [] { instance().clear(); });
  }
  static Interned& instance() {
    static Interned* interned = new Interned();  // never destroyed: phases may end during exit
    return *interned;
  }

  uint64_t domain_locked(writer::TraceWriter& writer, const Domain* domain) {
    if (!domain) return 0;
    if (domain->id >= domains_written_.size()) domains_written_.resize(domain->id + 1, false);
    if (!domains_written_[domain->id]) {
      writer.write(trace::PhaseDomain{domain->id, domain->name});
      domains_written_[domain->id] = true;
    }
    return domain->id;
  }

  uint64_t name_locked(writer::TraceWriter& writer, const Domain* domain, std::string_view name) {
    uint64_t domain_id = domain_locked(writer, domain);
    if (domain_id >= names_.size()) names_.resize(domain_id + 1);
    auto& names = names_[domain_id];
    if (auto it = names.find(name); it != names.end()) return it->second;
    uint64_t index = name_count_++;
    writer.write(trace::PhaseName{index, domain_id, name});
    names.emplace(std::string(name), index);
    return index;
  }

 private:
  void clear() {
    domains_written_.clear();
    names_.clear();
    name_count_ = 0;
  }

  std::vector<bool> domains_written_;
  std::vector<std::unordered_map<std::string, uint64_t, StringHash, std::equal_to<>>> names_;  // by domain
  uint64_t name_count_ = 0;
};

std::atomic<uint64_t> g_domains{0};
KeptForever<Domain> g_kept_domains;
std::atomic<uint64_t> g_ranges{0};

// Phase records carry no stack: the thread and the time are the recorder's.
void write(const EventWriter& write) {
  if (tracing_active()) record_event(write, false);
}

}  // namespace

const Domain* create_domain(std::string_view name) {
  return g_kept_domains.keep(g_domains.fetch_add(1, std::memory_order_relaxed) + 1, std::string(name));
}

void prepare() { Interned::instance(); }

void push(const Domain* domain, std::string_view name) {
  write([&](writer::TraceWriter& writer, uint64_t) {
    writer.write(trace::PhasePush{{}, Interned::instance().name_locked(writer, domain, name)});
  });
}

void pop(const Domain* domain) {
  write([&](writer::TraceWriter& writer, uint64_t) {
    writer.write(trace::PhasePop{{}, Interned::instance().domain_locked(writer, domain)});
  });
}

uint64_t start(const Domain* domain, std::string_view name) {
  uint64_t id = g_ranges.fetch_add(1, std::memory_order_relaxed) + 1;
  write([&](writer::TraceWriter& writer, uint64_t) {
    writer.write(trace::RangeStart{{}, id, Interned::instance().name_locked(writer, domain, name)});
  });
  return id;
}

void end(uint64_t id) {
  write([&](writer::TraceWriter& writer, uint64_t) { writer.write(trace::RangeEnd{{}, id}); });
}

}  // namespace gpumemtrace::interpose::phases
