#include <cmath>
#include <string_view>
#include <vector>

#include "analyzer/render/fit_renderers.h"
#include "common/size_units.h"
#include "common/terminal_text.h"

namespace gpumemtrace::render {

namespace {

// Fitted bytes may be fractional or (a constant of an affine fit) negative.
std::string fitted_size(double bytes) {
  auto whole = static_cast<int64_t>(std::llround(bytes));
  return whole < 0 ? fmt::format("-{}", format_size(static_cast<uint64_t>(-whole))) : format_size(static_cast<uint64_t>(whole));
}

// A stack's signature in short: its frames with a source file (not a library's, "(x.so)"), the outermost four.
std::string short_stack(const std::string& signature) {
  static constexpr std::string_view kArrow = " ← ";
  std::vector<std::string_view> frames;
  std::string_view rest = signature;
  for (;;) {
    size_t arrow = rest.find(kArrow);
    std::string_view frame = rest.substr(0, arrow);
    if (!frame.ends_with(".so)") && frame.find(".so.") == std::string_view::npos) frames.push_back(frame);
    if (arrow == std::string_view::npos) break;
    rest.remove_prefix(arrow + kArrow.size());
  }
  if (frames.empty()) return signature;
  std::string out;
  for (size_t i = frames.size() > 4 ? frames.size() - 4 : 0; i < frames.size(); ++i)
    out += (out.empty() ? "" : std::string(kArrow)) + std::string(frames[i]);
  return out;
}

void append_group(fmt::appender to, const report::BatchFit& model, const report::FitGroup& group) {
  fmt::format_to(to, "\n{}device {}: {} ({}), margin {}\n", group.rank.empty() ? "" : group.rank + ", ", group.device,
                 format_exact_size(group.memory), group.memory_from, format_size(model.margin));
  fmt::format_to(to, "  bytes at the peak = {} + {} x batch (the runs' peaks within {} of it)\n",
                 fitted_size(group.constant_bytes), fitted_size(group.per_sample_bytes),
                 format_size(group.largest_error));
  bool proportional_seen = false, constant_seen = false;
  for (const report::StackFit& stack : group.stacks) {
    if (stack.proportional && !proportional_seen) fmt::format_to(to, "  grow with the batch (bytes per sample):\n");
    if (!stack.proportional && !constant_seen) fmt::format_to(to, "  constant:\n");
    (stack.proportional ? proportional_seen : constant_seen) = true;
    fmt::format_to(to, "    {:>10}  {}\n", fitted_size(stack.proportional ? stack.per_sample_bytes : stack.constant_bytes),
                   terminal_text(short_stack(stack.stack)));
  }
  if (group.unbounded) {
    fmt::format_to(to, "  raw bytes: they do not grow with the batch: any batch fits as well as these\n");
  } else if (!group.raw_batch) {
    fmt::format_to(to, "  raw bytes: not even batch 1 fits\n");
  } else {
    double room = static_cast<double>(group.memory - model.margin);
    double next = group.constant_bytes + group.per_sample_bytes * static_cast<double>(*group.raw_batch + 1);
    fmt::format_to(to, "  raw bytes: batch {} fits: {} ({} to spare); batch {} needs {} ({} too much)\n",
                   *group.raw_batch, format_size(group.raw_bytes_at_batch),
                   fitted_size(room - static_cast<double>(group.raw_bytes_at_batch)), *group.raw_batch + 1,
                   fitted_size(next), fitted_size(next - room));
  }
  if (!group.allocator_skipped.empty())
    fmt::format_to(to, "  PyTorch's allocator: not replayed: {}\n", group.allocator_skipped);
  if (const std::optional<report::AllocatorCheck>& check = group.allocator) {
    fmt::format_to(to, "  PyTorch's allocator (model of 2.14.1), the history of batch {} with {} of {} requests scaled: ",
                   model.runs.back().batch, check->proportional_requests, check->requests);
    if (check->largest_batch)
      fmt::format_to(to, "batch {} fits (peak reserved {}); at batch {} request {} ({}) does not\n",
                     *check->largest_batch, format_exact_size(check->peak_reserved), *check->largest_batch + 1,
                     check->next_failed_request, format_exact_size(check->next_failed_size));
    else
      fmt::format_to(to, "not even batch 1 fits: request {} ({}) does not\n", check->next_failed_request,
                     format_exact_size(check->next_failed_size));
  }
}

}  // namespace

void render_fit_text(const report::BatchFit& model, fmt::memory_buffer& out) {
  auto to = fmt::appender(out);
  fmt::format_to(to, "fit: {}, {} runs:\n", terminal_text(model.program), model.runs.size());
  for (const report::FitRunSummary& run : model.runs)
    fmt::format_to(to, "  batch {} ({}): {}\n", run.batch, run.batch_from, terminal_text(run.path));
  for (const report::FitGroup& group : model.groups) append_group(to, model, group);
  if (model.unbounded)
    fmt::format_to(to, "\nLargest batch that fits: any: the bytes at the peak do not grow with the batch\n");
  else if (model.largest_batch)
    fmt::format_to(to, "\nLargest batch that fits: {}\n", *model.largest_batch);
  else
    fmt::format_to(to, "\nLargest batch that fits: none: not even batch 1\n");
}

}  // namespace gpumemtrace::render
