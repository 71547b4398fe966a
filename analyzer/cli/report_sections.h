// The sections of the reports. Each report command prints its own section in detail; `summary` prints
// them all in short (detailed = false), and its JSON is made of the sections' contract forms
// (docs/reports.md).
#pragma once

#include <fmt/format.h>

#include "analyzer/cli/json_tree.h"
#include "analyzer/cli/report_command.h"

namespace gpumemtrace::cli {

void append_peak_text(ReportContext& context, fmt::memory_buffer& out, bool detailed);
void write_peak_json(ReportContext& context, JsonTree& json);  // "peak": [...]

void append_leaks_text(ReportContext& context, fmt::memory_buffer& out, bool detailed);
void write_leaks_json(ReportContext& context, JsonTree& json, bool detailed);  // "leaks": [...]

void append_growth_text(ReportContext& context, fmt::memory_buffer& out, bool detailed);
void write_growth_json(ReportContext& context, JsonTree& json, bool detailed);  // "growth": [...]

void append_oom_text(ReportContext& context, fmt::memory_buffer& out, bool detailed);
void write_ooms_json(ReportContext& context, JsonTree& json, bool detailed);  // "ooms": [...]

void append_fragmentation_text(ReportContext& context, fmt::memory_buffer& out, bool detailed);

// "devices": [...], "managed": {...}, "host_pinned": {...}
void write_accounts_json(ReportContext& context, JsonTree& json);

}  // namespace gpumemtrace::cli
