// The outputs of `gpumemtrace check` (text, JSON, JUnit XML) and `gpumemtrace diff` (text, JSON). They
// compare runs rather than render one trace's report, so they are not in the --format table
// (format/output_format.cpp): check takes --json and --junit FILE, diff takes --json.
#pragma once

#include <fmt/format.h>

#include "analyzer/report/budget_check.h"
#include "analyzer/report/profile_diff.h"

namespace gpumemtrace::render {

// One line per failed check (and its stacks, indented), the per-rank table of a directory, and a last
// line with the counts.
void text_check(const report::CheckModel& model, fmt::memory_buffer& out);
void json_check(const report::CheckModel& model, fmt::memory_buffer& out);
// One <testcase> per check and rank (and device), a <failure> with the message and the stacks.
void junit_check(const report::CheckModel& model, fmt::memory_buffer& out);
// "max-peak device 0 rank 3: 34.0 MiB (35651584 B) > limit 32.0 MiB (33554432 B)"; no "FAIL" prefix.
std::string check_message(const report::CheckResult& result);

void text_diff(const report::ProfileDiff& diff, fmt::memory_buffer& out);
void json_diff(const report::ProfileDiff& diff, fmt::memory_buffer& out);

// "+16.0 MiB (+16777216 B)", "-1.00 KiB (-1024 B)", "0 B".
std::string signed_size(int64_t bytes);

}  // namespace gpumemtrace::render
