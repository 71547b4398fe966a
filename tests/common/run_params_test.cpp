// GPUMEMTRACE_PARAMS's form (common/run_params.h): what `run --param` writes and the tracer reads.
#include "common/run_params.h"

#include <gtest/gtest.h>

namespace gpumemtrace {
namespace {

TEST(RunParams, ListOfNameValuePairsALaterValueReplacing) {
  std::string error;
  std::optional<std::vector<RunParam>> params = parse_params("batch=32,lr=0.1,empty=,batch=64", &error);
  ASSERT_TRUE(params) << error;
  EXPECT_EQ(*params, (std::vector<RunParam>{{"batch", "64"}, {"lr", "0.1"}, {"empty", ""}}));
  EXPECT_EQ(join_params(*params), "batch=64,lr=0.1,empty=");
  EXPECT_EQ(parse_params("", &error), std::vector<RunParam>{});
  EXPECT_EQ(parse_param("a.b-c_D9=x=y", &error), (RunParam{"a.b-c_D9", "x=y"}));
}

TEST(RunParams, BadItemsSayWhy) {
  std::string error;
  EXPECT_FALSE(parse_params("batch=32,lr", &error));
  EXPECT_EQ(error, "'lr' is not name=value");
  EXPECT_FALSE(parse_params("batch=32,", &error));
  EXPECT_EQ(error, "'' is not name=value");
  EXPECT_FALSE(parse_param("=3", &error));
  EXPECT_EQ(error, "'=3' is not name=value");
  EXPECT_FALSE(parse_param("bat ch=3", &error));
  EXPECT_EQ(error, "'bat ch': a name has only letters, digits, '_', '.' and '-'");
  EXPECT_FALSE(parse_param("b=1,2", &error));
  EXPECT_EQ(error, "'b=1,2': a value cannot hold ','");
}

}  // namespace
}  // namespace gpumemtrace
