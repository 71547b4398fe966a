// Which fields each record shows, in which order and as what (a size, an address, a device...), written
// once for every output form: a `Fields` sink (text or JSON) decides how each kind of field looks.
#pragma once

#include <variant>

#include "trace/reader/records.h"

namespace gpumemtrace::cli {

template <typename... Visitors>
struct Overloaded : Visitors... {
  using Visitors::operator()...;
};

template <typename Fields>
void record_fields(const trace::Record& record, Fields& f) {
  auto stream_and_pool = [&](const auto& r) {
    const format::ApiInfo& info = format::api_info(r.api);
    if (info.takes_stream) f.address("stream", r.stream);
    if constexpr (requires { r.pool; })
      if (info.takes_pool) f.address("pool", r.pool);
  };
  std::visit(Overloaded{
                 [&](const trace::Process& r) {
                   f.number("pid", r.pid);
                   f.number("ppid", r.ppid);
                   f.wall_time("start", r.start_wall_ns);
                   f.number("max_stack_depth", r.max_stack_depth);
                   f.signed_number("rank", r.rank);
                   f.text("hostname", r.hostname);
                   f.text("executable", r.executable);
                   f.texts("argv", r.argv);
                 },
                 [&](const trace::ModulesBegin& r) { f.number("generation", r.generation); },
                 [&](const trace::Module& r) {
                   f.address("base", r.base);
                   f.address("low", r.low);
                   f.address("high", r.high);
                   f.text("path", r.path);
                   f.hex_bytes("build_id", r.build_id);
                 },
                 [&](const trace::StacksReset&) {},
                 [&](const trace::StackNode& r) {
                   f.number("id", r.id);
                   f.number("parent", r.parent);
                   f.address("ip", r.ip);
                 },
                 [&](const trace::ThreadNew& r) {
                   f.number("index", r.index);
                   f.number("tid", r.tid);
                   f.text("name", r.name);
                 },
                 [&](const trace::ThreadSwitch& r) { f.number("index", r.index); },
                 [&](const trace::Fork& r) { f.number("child_pid", r.child_pid); },
                 [&](const trace::Alloc& r) {
                   f.api(r.api);
                   f.device("device", r.device);
                   f.address("address", r.address);
                   f.size("size", r.size);
                   f.number("stack", r.stack);
                   stream_and_pool(r);
                 },
                 [&](const trace::Free& r) {
                   f.api(r.api);
                   f.address("address", r.address);
                   stream_and_pool(r);
                 },
                 [&](const trace::AllocFailed& r) {
                   f.api(r.api);
                   f.device("device", r.device);
                   f.size("size", r.size);
                   f.number("stack", r.stack);
                   f.error("error", r.error);
                   if (r.error == trace::kErrorOutOfMemory) {
                     f.size("device_free", r.device_free);
                     f.size("device_total", r.device_total);
                   }
                 },
                 [&](const trace::FreeFailed& r) {
                   f.api(r.api);
                   f.address("address", r.address);
                   f.error("error", r.error);
                 },
                 [&](const trace::MemMap& r) {
                   f.address("address", r.address);
                   f.size("size", r.size);
                   f.address("handle", r.handle);
                   f.number("offset", r.offset);
                 },
                 [&](const trace::AddressRange& r) {  // MemUnmap, AddressReserve, AddressFree
                   f.address("address", r.address);
                   f.size("size", r.size);
                 },
                 [&](const trace::PoolEvent& r) {  // PoolCreate, PoolDestroy
                   f.address("pool", r.pool);
                   f.device("device", r.device);
                 },
                 [&](const trace::PoolTrim& r) {
                   f.address("pool", r.pool);
                   f.size("min_bytes_to_keep", r.min_bytes_to_keep);
                   f.size("reserved_after", r.reserved_after);
                   f.size("used_after", r.used_after);
                 },
                 [&](const trace::PoolUsage& r) {
                   f.address("pool", r.pool);
                   f.device("device", r.device);
                   f.size("reserved", r.reserved_bytes);
                   f.size("used", r.used_bytes);
                 },
                 [&](const trace::MemInfo& r) {
                   f.device("device", r.device);
                   f.size("free", r.free_bytes);
                   f.size("total", r.total_bytes);
                 },
                 [&](const trace::End& r) { f.number("events_written", r.events_written); },
             },
             record);
}

}  // namespace gpumemtrace::cli
