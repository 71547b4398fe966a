// The words of an OOM verdict (docs/reports.md, "The OOM verdict"): what the evidence shows, and what to do.
#pragma once

#include <string>
#include <string_view>

#include "analyzer/replay/replay.h"
#include "analyzer/report/oom_diagnosis.h"

namespace gpumemtrace::report {

struct OomExplanation {
  std::string finding;
  std::string remedy;
};

// growing_stack: the growing stack behind a Growth verdict, as compact text.
OomExplanation explain(const replay::Failure& failure, const OomDiagnosis& diagnosis, std::string_view growing_stack);

}  // namespace gpumemtrace::report
