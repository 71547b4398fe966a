// Helpers for the report tests: analyze hand-built trace bytes, and find sites by their innermost frame.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "analyzer/analysis/analysis.h"
#include "tests/support/temp_files.h"
#include "tests/support/trace_builder.h"

namespace gpumemtrace::test {

inline analysis::Analysis analyze_built(const ScratchDir& scratch, const TraceBuilder& builder,
                                        const std::string& name = "built.trace") {
  return analysis::analyze(write_file(scratch / name, builder.bytes()));
}

// The site whose stack's innermost frame is at `ip` (hand-built traces have no modules, so frames keep
// their absolute addresses), on the given device; nullptr when there is none.
inline const replay::Site* site_at(const replay::Replay& replay, uint64_t ip, int32_t device = 0) {
  for (const replay::Site& site : replay.sites()) {
    auto frames = replay.stacks().frames(site.stack, 1);  // the innermost frame is enough
    if (!frames.empty() && frames.front().offset == ip && site.device == device) return &site;
  }
  return nullptr;
}

inline replay::SiteId site_id(const replay::Replay& replay, const replay::Site* site) {
  return static_cast<replay::SiteId>(site - replay.sites().data());
}

}  // namespace gpumemtrace::test
