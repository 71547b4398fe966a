// The peak of each device's memory and the sites live then, largest first.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/report/figures.h"
#include "analyzer/report/model_input.h"

namespace gpumemtrace::report {

struct KindBytes {
  std::string kind;  // "device", "async-pool", "vmm-physical", "array"
  uint64_t bytes = 0;
};

struct DevicePeak {
  AccountFigures account;
  std::vector<KindBytes> kinds;   // the device memory kinds live at the peak (those with bytes)
  std::vector<SiteFigures> sites;  // largest first: at most --top, at least --min-size
};

struct PeakModel {
  std::vector<DevicePeak> devices;  // the wanted devices that allocated anything
  std::vector<SiteFigures> sites;   // every device's sites, largest first
  std::optional<int32_t> device;    // --device
};

PeakModel peak_model(ModelInput& input);

}  // namespace gpumemtrace::report
