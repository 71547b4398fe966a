// Python's own pickle of a value, for the tests of the restricted pickle reader.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/subprocess.h"
#include "tests/support/temp_files.h"

namespace gpumemtrace::test {

// The pickle, in `protocol`, of the value that the Python statements `program` leave in v.
inline std::vector<uint8_t> python_pickle(const std::string& program, int protocol) {
  ScratchDir scratch;
  std::string path = scratch / "value.pickle";
  ProcessResult r = run_process({"python3", "-c",
                                 "import pickle, sys\n" + program +
                                     "\nopen(sys.argv[1], 'wb').write(pickle.dumps(v, protocol=int(sys.argv[2])))",
                                 path, std::to_string(protocol)});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string bytes = read_file(path);
  return {bytes.begin(), bytes.end()};
}

}  // namespace gpumemtrace::test
