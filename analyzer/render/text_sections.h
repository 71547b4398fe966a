// The sections of the text output. Each report command prints its own section in detail; `summary`
// prints them all in short (detailed = false).
#pragma once

#include <fmt/format.h>

#include <cstdint>

#include "analyzer/report/report.h"

namespace gpumemtrace::render {

// "trace: PATH (pid N: COMMAND)", whether it is complete, then any inconsistencies.
void append_trace_header(fmt::memory_buffer& out, const report::TraceHeader& trace);
// "view: used: ..." for a trace with heaps (nothing without: both views are the same).
void append_view(fmt::memory_buffer& out, const report::ReportView& view);
// "memory (requested bytes):" and a line per account.
void append_accounts(fmt::memory_buffer& out, const report::AccountsModel& accounts);

void append_peak(fmt::memory_buffer& out, const report::PeakModel& peak, const report::Stacks& stacks, bool detailed);
void append_leaks(fmt::memory_buffer& out, const report::LeaksModel& leaks, const report::Stacks& stacks,
                  bool detailed);
void append_growth(fmt::memory_buffer& out, const report::GrowthModel& growth, const report::Stacks& stacks,
                   bool detailed);
void append_ooms(fmt::memory_buffer& out, const report::OomModel& ooms, const report::Stacks& stacks, bool detailed);
void append_fragmentation(fmt::memory_buffer& out, const report::FragmentationModel& fragmentation, bool detailed);
// The forecast of each device, with the stacks that grow.
void append_forecast(fmt::memory_buffer& out, const report::ForecastModel& forecast, const report::Stacks& stacks);
void append_phases(fmt::memory_buffer& out, const report::PhasesModel& phases, const report::Stacks& stacks);
// The chart `columns` wide, labels included.
void append_timeline(fmt::memory_buffer& out, const report::TimelineModel& timeline, uint32_t columns);

}  // namespace gpumemtrace::render
