// The export of the formats that draw one set of stacks with their bytes (folded, pprof): at the end of the
// trace, the stack weights model (--what) of every site, handed to the format's writer.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "analyzer/export/exporter.h"

namespace gpumemtrace::render {

// Writes the sites (their stacks in `stacks`) as the format's bytes.
using WriteSites = std::string (*)(std::span<const report::SiteFigures> sites, const report::Stacks& stacks,
                                   const ExportOptions& options, const analysis::Analysis& analysis);

std::unique_ptr<Exporter> start_weighed_export(const ExportOptions& options, ExportSink& sink, WriteSites write);

}  // namespace gpumemtrace::render
