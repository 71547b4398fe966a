// The export of the formats that draw one set of stacks with their bytes (folded, pprof): at the end of the
// trace, the stack weights model (--what) of every site, handed to the format's writer.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "analyzer/export/exporter.h"

namespace gpumemtrace::render {

// Writes the sites as the format's bytes, symbolizing each site's stack with `frames_of` when it comes to it:
// an export holds every stack of the trace, so their frames are never all kept at once.
using WriteSites = std::string (*)(std::span<const report::SiteFigures> sites, const report::SymbolizeStack& frames_of,
                                   const ExportOptions& options, const analysis::Analysis& analysis);

std::unique_ptr<Exporter> start_weighed_export(const ExportOptions& options, ExportSink& sink, WriteSites write);

}  // namespace gpumemtrace::render
