// Reads a trace the way the replay does and keeps each allocation's phase path.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <type_traits>
#include <variant>

#include "analyzer/replay/phases.h"
#include "trace/reader/reader.h"

namespace gpumemtrace::test {

struct Phased {
  std::map<uint64_t, std::string> path_by_size;  // every allocation's phase path, by its size
  size_t phase_records = 0;
  uint64_t unmatched = 0;
};

inline Phased read_phases(const std::string& path) {
  Phased out;
  trace::Reader reader(path);
  replay::PhaseTracker phases;
  while (const trace::Record* record = reader.next()) {
    std::visit(
        [&](const auto& r) {
          if constexpr (std::is_same_v<std::decay_t<decltype(r)>, trace::Alloc>) {
            out.path_by_size[r.size] = phases.path_text(phases.path_of_thread(r.thread));
          } else if constexpr (requires { phases.on(r); }) {
            out.phase_records += trace::kIsEvent<std::decay_t<decltype(r)>>;
            phases.on(r);
          }
        },
        *record);
  }
  EXPECT_EQ(reader.status(), trace::Status::Complete) << reader.error();
  out.unmatched = phases.unmatched();
  return out;
}

}  // namespace gpumemtrace::test
