#include "tests/support/trace_facts.h"

#include <variant>

namespace gpumemtrace::test {

namespace {

std::vector<uint64_t> frames_of(const trace::Reader& reader, uint32_t stack) {
  std::vector<uint64_t> frames;
  for (uint32_t node = stack; node != 0;) {
    const auto& n = reader.stacks().node(node);
    frames.push_back(n.ip);
    node = n.parent;
  }
  return frames;
}

}  // namespace

TraceFacts read_trace(const std::string& path) {
  TraceFacts facts;
  trace::Reader reader(path);
  while (const trace::Record* record = reader.next()) {
    std::visit(
        [&](const auto& r) {
          using T = std::decay_t<decltype(r)>;
          if constexpr (std::is_same_v<T, trace::Process>) facts.pid = r.pid;
          if constexpr (std::is_same_v<T, trace::ModulesBegin>) facts.modules.clear();
          if constexpr (std::is_same_v<T, trace::Module>) facts.modules.push_back({r.low, r.high, std::string(r.path), std::string(r.build_id)});
          if constexpr (std::is_same_v<T, trace::ThreadNew>) ++facts.threads;
          if constexpr (std::is_same_v<T, trace::Alloc>) {
            facts.allocs.push_back(r);
            facts.alloc_stacks.push_back(frames_of(reader, r.stack));
          }
          if constexpr (std::is_same_v<T, trace::Free>) facts.frees.push_back(r);
          if constexpr (std::is_same_v<T, trace::AllocFailed>) {
            facts.failures.push_back(r);
            facts.failure_stacks.push_back(frames_of(reader, r.stack));
          }
          if constexpr (std::is_same_v<T, trace::FreeFailed>) facts.free_failures.push_back(r);
          if constexpr (std::is_same_v<T, trace::MemMap>) facts.maps.push_back(r);
          if constexpr (std::is_same_v<T, trace::MemUnmap>) facts.unmaps.push_back(r);
          if constexpr (std::is_same_v<T, trace::AddressReserve>) facts.reserves.push_back(r);
          if constexpr (std::is_same_v<T, trace::AddressFree>) facts.address_frees.push_back(r);
          if constexpr (std::is_same_v<T, trace::MemInfo>) facts.mem_infos.push_back(r);
          if constexpr (std::is_same_v<T, trace::PoolTrim>) facts.trims.push_back(r);
          if constexpr (std::is_same_v<T, trace::PoolUsage>) facts.pool_usages.push_back(r);
        },
        *record);
  }
  facts.status = reader.status();
  facts.error = reader.error();
  return facts;
}

}  // namespace gpumemtrace::test
