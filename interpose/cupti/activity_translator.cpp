#include "interpose/cupti/activity_translator.h"

#include <algorithm>
#include <cstring>

namespace gpumemtrace::interpose::cupti {

using format::Api;
using format::MemoryKind;

namespace {

bool is_release(const CUpti_ActivityMemory4& record) {
  return record.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
}

// The memory kinds the trace follows. Pageable memory is not CUDA's; static memory belongs to loaded
// modules, not to an allocation call.
std::optional<MemoryKind> kind_of(const CUpti_ActivityMemory4& record) {
  switch (record.memoryKind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
      return record.isAsync ? MemoryKind::AsyncPool : MemoryKind::Device;
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
      return MemoryKind::HostPinned;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
      return MemoryKind::Managed;
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
      return MemoryKind::Array;
    default:
      return std::nullopt;
  }
}

// The API a record stands for when its call does not say: the plainest API of its kind.
Api plain_api(MemoryKind kind, bool release) {
  switch (kind) {
    case MemoryKind::AsyncPool:
      return release ? Api::cuMemFreeAsync : Api::cuMemAllocAsync;
    case MemoryKind::HostPinned:
      return release ? Api::cuMemFreeHost : Api::cuMemHostAlloc;
    case MemoryKind::Managed:
      return release ? Api::cuMemFree : Api::cuMemAllocManaged;
    case MemoryKind::Array:
      return release ? Api::cuArrayDestroy : Api::cuArrayCreate;
    default:
      return release ? Api::cuMemFree : Api::cuMemAlloc;
  }
}

// The call's own API when it agrees with the record (cuMemAllocPitch, cuMemAllocFromPoolAsync, ...); a
// free of managed memory is cuMemFree, whose kind is device memory.
Api api_of(const CUpti_ActivityMemory4& record, MemoryKind kind, const ApiCall* call) {
  bool release = is_release(record);
  Api plain = plain_api(kind, release);
  if (!call || !call->api) return plain;
  const format::ApiInfo& info = format::api_info(*call->api);
  if (info.is_free != release) return plain;
  if (info.kind == kind || (release && *call->api == Api::cuMemFree && kind == MemoryKind::Managed)) return *call->api;
  return plain;
}

}  // namespace

void ActivityTranslator::on_call(const ApiCall& call) { calls_[call.correlation_id] = call; }

// Copied out of CUPTI's buffer: the record is read as its own type, whatever the buffer's bytes were.
void ActivityTranslator::on_activity(const CUpti_Activity* record) {
  if (record->kind == CUPTI_ACTIVITY_KIND_MEMORY2) {
    CUpti_ActivityMemory4 memory;
    std::memcpy(&memory, record, sizeof memory);
    on_memory(memory);
  } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMORY_POOL) {
    CUpti_ActivityMemoryPool3 pool;
    std::memcpy(&pool, record, sizeof pool);
    on_pool(pool);
  }
}

void ActivityTranslator::on_memory(const CUpti_ActivityMemory4& record) {
  if (!kind_of(record) || record.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_INVALID) {
    ++counts_.ignored;
    return;
  }
  CUpti_ActivityMemory4 copy = record;
  copy.name = copy.source = nullptr;  // CUPTI's strings live in its buffer, which is handed back
  pending_.push_back(Pending{copy, record.timestamp, record.correlationId, 0});
}

void ActivityTranslator::on_pool(const CUpti_ActivityMemoryPool3& record) {
  if (record.memoryPoolOperationType == CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_INVALID) {
    ++counts_.ignored;
    return;
  }
  pending_.push_back(Pending{record, record.timestamp, record.correlationId, 0});
}

bool ActivityTranslator::ready(const Pending& pending, const ApiCall* call, bool everything) const {
  if (everything || pending.rounds >= kWaitRounds) return true;
  if (!call && pending.correlation_id != 0) return false;
  if (const auto* memory = std::get_if<CUpti_ActivityMemory4>(&pending.record)) {
    bool deduplicated = call && call->interposed;
    if (is_release(*memory) && !deduplicated && !live_.contains(memory->address)) return false;
  }
  return true;
}

void ActivityTranslator::emit(std::vector<TranslatedEvent>& out, bool everything) {
  std::ranges::stable_sort(pending_, {}, [](const Pending& p) { return p.timestamp; });
  std::vector<Pending> kept;
  for (Pending& pending : pending_) {
    auto found = pending.correlation_id ? calls_.find(pending.correlation_id) : calls_.end();
    const ApiCall* call = found != calls_.end() ? &found->second : nullptr;
    if (!ready(pending, call, everything)) {
      ++pending.rounds;
      kept.push_back(pending);
      continue;
    }
    std::visit([&](const auto& record) { translate(record, call, out); }, pending.record);
    last_time_ = std::max(last_time_, pending.timestamp);
    if (call) calls_.erase(found);
  }
  pending_ = std::move(kept);
  for (uint64_t pool : pools_changed_) {
    auto it = pools_.find(pool);
    if (it == pools_.end() || it->second.usage_written) continue;
    it->second.usage_written = true;
    out.push_back({trace::PoolUsage{{last_time_, 0}, pool, it->second.device, it->second.reserved, it->second.used}, {}});
  }
  pools_changed_.clear();
}

void ActivityTranslator::translate(const CUpti_ActivityMemory4& record, const ApiCall* call,
                                   std::vector<TranslatedEvent>& out) {
  MemoryKind kind = *kind_of(record);
  CallOrigin origin = call ? call->origin : CallOrigin{};
  const auto& pool = record.memoryPoolConfig;
  if (kind == MemoryKind::AsyncPool && pool.memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL && pool.address)
    note_pool(pool.address, static_cast<int32_t>(record.deviceId), pool.pool.size, pool.utilizedSize,
              pool.releaseThreshold, record.timestamp, origin, out);
  if (call && call->interposed) {
    ++counts_.deduplicated;
    return;
  }
  ++(call ? counts_.joined : counts_.unjoined);
  Api api = api_of(record, kind, call);
  const format::ApiInfo& info = format::api_info(api);
  trace::Event at{record.timestamp, 0};
  uint64_t stream = info.takes_stream ? record.streamId : 0;
  if (is_release(record)) {
    live_.erase(record.address);
    out.push_back({trace::Free{at, api, record.address, stream}, origin});
    return;
  }
  int32_t device = kind == MemoryKind::HostPinned ? trace::kNoDevice : static_cast<int32_t>(record.deviceId);
  uint64_t pool_address = info.takes_pool ? pool.address : 0;
  live_.insert(record.address);
  out.push_back({trace::Alloc{at, api, device, record.address, record.bytes, origin.stack, stream, pool_address}, origin});
}

void ActivityTranslator::translate(const CUpti_ActivityMemoryPool3& record, const ApiCall* call,
                                   std::vector<TranslatedEvent>& out) {
  CallOrigin origin = call ? call->origin : CallOrigin{};
  auto device = static_cast<int32_t>(record.deviceId);
  bool local = record.memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
  bool deduplicated = call && call->interposed;
  trace::Event at{record.timestamp, 0};
  switch (record.memoryPoolOperationType) {
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED:
      if (!deduplicated) out.push_back({trace::PoolCreate{{at, record.address, device}}, origin});
      if (local)
        note_pool(record.address, device, record.size, record.utilizedSize, record.releaseThreshold, record.timestamp,
                  origin, out);
      break;
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED:
      if (!deduplicated)
        out.push_back(
            {trace::PoolTrim{at, record.address, record.minBytesToKeep, record.size, record.utilizedSize}, origin});
      if (local) {
        note_pool(record.address, device, record.size, record.utilizedSize, record.releaseThreshold, record.timestamp,
                  origin, out);
        pools_[record.address].usage_written = true;  // the trim record says it
      }
      break;
    default:  // destroyed
      if (!deduplicated) out.push_back({trace::PoolDestroy{{at, record.address, device}}, origin});
      pools_.erase(record.address);
      break;
  }
  if (deduplicated)
    ++counts_.deduplicated;
  else
    ++(call ? counts_.joined : counts_.unjoined);
}

void ActivityTranslator::note_pool(uint64_t pool, int32_t device, uint64_t reserved, uint64_t used, uint64_t threshold,
                                   uint64_t time_ns, const CallOrigin& origin, std::vector<TranslatedEvent>& out) {
  PoolFigures& figures = pools_[pool];
  figures.device = device;
  if (!figures.threshold_written || figures.release_threshold != threshold) {
    figures.release_threshold = threshold;
    figures.threshold_written = true;
    out.push_back({trace::PoolThreshold{{time_ns, 0}, pool, threshold}, origin});
  }
  if (figures.reserved != reserved || figures.used != used || !figures.usage_written) {
    figures.reserved = reserved;
    figures.used = used;
    figures.usage_written = false;
    pools_changed_.push_back(pool);
  }
}

}  // namespace gpumemtrace::interpose::cupti
