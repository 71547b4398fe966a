// Turns what CUPTI reports into trace records. Memory and memory-pool activity records
// (CUpti_ActivityMemory4, CUpti_ActivityMemoryPool3) arrive late, in buffers, on CUPTI's own thread; the API
// callback of the call that made each one ran earlier on the calling thread and took its stack there. The
// translator joins the two by correlation id, drops what the interposition hooks recorded already, puts
// the records in time order and holds a free until its allocation is known. Pure: it calls neither CUPTI
// nor the recorder; the backend (cupti_backend.cpp) feeds it and writes what it emits.
#pragma once

#include <cupti_activity.h>

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

#include "gpumemtrace/trace_records.h"
#include "interpose/recording/call_origin.h"

namespace gpumemtrace::interpose::cupti {

// What the API callback saw when a memory call returned successfully on the calling thread.
struct ApiCall {
  uint32_t correlation_id = 0;
  std::optional<format::Api> api;  // the driver API (none for pool calls)
  CallOrigin origin;               // the calling thread and its stack
  bool interposed = false;         // an interposition hook recorded the call: CUPTI's record of it is dropped
};

using TranslatedRecord = std::variant<trace::Alloc, trace::Free, trace::PoolCreate, trace::PoolDestroy,
                                      trace::PoolTrim, trace::PoolUsage, trace::PoolThreshold>;

// A record to write (its time_ns is CUPTI's timestamp), and who made it.
struct TranslatedEvent {
  TranslatedRecord record;
  CallOrigin origin;
};

struct TranslatorCounts {
  uint64_t joined = 0;        // activity records matched to their API call (they carry its stack)
  uint64_t unjoined = 0;      // written without a call: no callback was seen for them
  uint64_t deduplicated = 0;  // dropped: the interposition hooks recorded the same call
  uint64_t ignored = 0;       // memory kinds the trace does not follow (pageable, static, unknown)
};

class ActivityTranslator {
 public:
  // A record waits this many emit_ready() rounds for its API call, and a free for its allocation, before
  // it is written without them.
  static constexpr unsigned kWaitRounds = 2;

  void on_call(const ApiCall& call);
  // Any activity record: memory and memory-pool records are taken, the others ignored.
  void on_activity(const CUpti_Activity* record);
  void on_memory(const CUpti_ActivityMemory4& record);
  void on_pool(const CUpti_ActivityMemoryPool3& record);

  // Appends to `out`, in time order, the records that are ready: joined to their call or waited long
  // enough, and frees whose allocation is known or waited long enough; then the usage of each pool whose
  // size or utilized size the emitted records changed. Called after each delivered buffer.
  void emit_ready(std::vector<TranslatedEvent>& out) { emit(out, false); }
  // Appends everything held (a flush at exit, fork or out-of-memory: nothing more is coming for now).
  void emit_all(std::vector<TranslatedEvent>& out) { emit(out, true); }

  const TranslatorCounts& counts() const { return counts_; }
  size_t calls_waiting() const { return calls_.size(); }
  size_t records_waiting() const { return pending_.size(); }

 private:
  struct Pending {
    std::variant<CUpti_ActivityMemory4, CUpti_ActivityMemoryPool3> record;
    uint64_t timestamp = 0;
    uint32_t correlation_id = 0;
    unsigned rounds = 0;
  };
  struct PoolFigures {
    int32_t device = trace::kNoDevice;
    uint64_t reserved = 0;
    uint64_t used = 0;
    uint64_t release_threshold = 0;
    bool usage_written = true;  // a pool starts known empty
    bool threshold_written = false;
  };

  void emit(std::vector<TranslatedEvent>& out, bool everything);
  // Whether `pending` can be written now; `call` is its API call when known.
  bool ready(const Pending& pending, const ApiCall* call, bool everything) const;
  void translate(const CUpti_ActivityMemory4& record, const ApiCall* call, std::vector<TranslatedEvent>& out);
  void translate(const CUpti_ActivityMemoryPool3& record, const ApiCall* call, std::vector<TranslatedEvent>& out);
  void note_pool(uint64_t pool, int32_t device, uint64_t reserved, uint64_t used, uint64_t threshold,
                 uint64_t time_ns, const CallOrigin& origin, std::vector<TranslatedEvent>& out);

  std::unordered_map<uint32_t, ApiCall> calls_;  // by correlation id, until their record arrives
  std::vector<Pending> pending_;
  std::unordered_set<uint64_t> live_;  // addresses of the allocations written and not freed
  std::unordered_map<uint64_t, PoolFigures> pools_;
  std::vector<uint64_t> pools_changed_;
  uint64_t last_time_ = 0;
  TranslatorCounts counts_;
};

}  // namespace gpumemtrace::interpose::cupti
