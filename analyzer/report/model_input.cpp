#include "analyzer/report/model_input.h"

namespace gpumemtrace::report {

SiteFilter ModelInput::filter(bool device_memory_only) const {
  SiteFilter filter;
  filter.device = selection_.device;
  filter.device_memory_only = device_memory_only;
  filter.min_size = selection_.min_size;
  filter.top = selection_.top;
  return filter;
}

replay::StackId ModelInput::stack(replay::StackId id) {
  if (!stacks_.frames.contains(id)) stacks_.frames.emplace(id, symbolize_(id));
  return id;
}

AccountFigures ModelInput::account(const replay::Account& account) const {
  AccountFigures out;
  out.memory = memory_of(account.category);
  out.device = account.category == replay::Category::Device ? device_of(account.device) : std::nullopt;
  out.peak_bytes = account.peak_bytes;
  out.peak_time_ns = account.peak_time_ns;
  out.peak_count = account.peak_count;
  out.final_bytes = account.live_bytes;
  out.final_count = account.live_count;
  out.leaked_allocations = trace().complete ? account.live_count : 0;
  out.allocations = account.allocations;
  out.frees = account.frees;
  out.failed_allocations = account.failed_allocations;
  return out;
}

SiteFigures ModelInput::site(const replay::SiteShare& share) {
  const replay::Site& site = replay().sites()[share.site];
  return {memory_of(site.category), device_of(site.device), share.bytes, share.count, stack(site.stack)};
}

}  // namespace gpumemtrace::report
