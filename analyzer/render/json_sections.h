// The members of the JSON reports (docs/reports.md, "JSON"). Each report command writes its own in
// detail; `summary` writes the contract's short forms (detailed = false).
#pragma once

#include <span>
#include <string_view>

#include "analyzer/render/json_writer.h"
#include "analyzer/report/report.h"

namespace gpumemtrace::render {

// "trace": {"path","pid","command","complete","events"}
void write_trace(JsonWriter& json, const report::TraceHeader& trace);
// "view": "used" or "reserved", when the report depends on it
void write_view(JsonWriter& json, const std::optional<report::ReportView>& view);
// "devices": [...], "managed": {...}, "host_pinned": {...}
void write_accounts(JsonWriter& json, const report::AccountsModel& accounts);
// {"function","file","line","module","kind":"native"}, innermost first
void write_stack(JsonWriter& json, std::string_view key, std::span<const symbolize::Frame> frames);
// "bytes", "allocations", "stack": what a site held.
void write_site_members(JsonWriter& json, uint64_t bytes, uint64_t count, std::span<const symbolize::Frame> frames);
// The device ordinal, or null for memory that has none.
void write_device(JsonWriter& json, std::string_view key, std::optional<int32_t> device);
// {"pid", "command", "bytes"}: a process NVML listed on a device
void write_other_process(JsonWriter& json, uint64_t pid, std::string_view command, uint64_t bytes);

void write_peak(JsonWriter& json, const report::PeakModel& peak, const report::Stacks& stacks);  // "peak"
void write_leaks(JsonWriter& json, const report::LeaksModel& leaks, const report::Stacks& stacks, bool detailed);
void write_growth(JsonWriter& json, const report::GrowthModel& growth, const report::Stacks& stacks, bool detailed);
void write_ooms(JsonWriter& json, const report::OomModel& ooms, const report::Stacks& stacks, bool detailed);
// key: [{"device","pools","vmm","failures"}]
void write_fragmentation(JsonWriter& json, std::string_view key, const report::FragmentationModel& fragmentation);
// "start_ns", "window_ns", "series"
void write_timeline(JsonWriter& json, const report::TimelineModel& timeline);
// "forecast": {"phase", "min_steps", "devices": [...]}
void write_forecast(JsonWriter& json, const report::ForecastModel& forecast, const report::Stacks& stacks);
void write_phases(JsonWriter& json, const report::PhasesModel& phases, const report::Stacks& stacks);  // "phases"
// {"number", "thread", ..., "left_live": [...]}: one instance of a phase
void write_phase_instance(JsonWriter& json, const report::PhaseInstanceFigures& f, const report::Stacks& stacks);
// "moments": {"accounts": [...], "stacks": {ID: [FRAME]}}
void write_moments(JsonWriter& json, const report::MomentsModel& moments, const report::Stacks& stacks);

}  // namespace gpumemtrace::render
