// Parsing of typed values: sizes with k/M suffixes, lists, positive numbers.
#include "cli/arguments.hpp"

#include <gtest/gtest.h>

#include "core/dtype.hpp"
#include "core/error.hpp"

namespace ub::cli {
namespace {

TEST(Arguments, Sizes) {
  EXPECT_EQ(parse_size("8192", "--seqlen"), 8192);
  EXPECT_EQ(parse_size("8k", "--seqlen"), 8192);
  EXPECT_EQ(parse_size("256K", "--seqlen"), 262144);
  EXPECT_EQ(parse_size("1M", "--seqlen"), 1048576);
  EXPECT_EQ(parse_size_list("4096, 8k,32k", "--seqlen"), (std::vector<int64_t>{4096, 8192, 32768}));
}

TEST(Arguments, BadSizesNameTheOption) {
  for (const char* bad : {"", "0", "-5", "abc", "8.5", "k", "99999999999999999999"}) {
    try {
      parse_size(bad, "--seqlen");
      FAIL() << bad;
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--seqlen", 0), 0u) << e.what();
    }
  }
  EXPECT_THROW(parse_size_list(",,", "--seqlen"), UsageError);
}

TEST(Arguments, PositiveNumbers) {
  EXPECT_DOUBLE_EQ(parse_positive("3.5", "--price"), 3.5);
  EXPECT_DOUBLE_EQ(parse_positive("1e12", "--tokens"), 1e12);
  for (const char* bad : {"0", "-2", "x", "nan", "inf", "3x", ""}) {
    EXPECT_THROW(parse_positive(bad, "--price"), UsageError) << bad;
  }
  EXPECT_FALSE(parse_optional_positive("", "--price").has_value());
}

TEST(Arguments, DtypeLists) {
  EXPECT_EQ(parse_dtype_list("fp8, NVFP4", "--need-dtype"),
            (std::vector<Dtype>{Dtype::fp8, Dtype::nvfp4}));
  EXPECT_THROW(parse_dtype_list("fp5", "--need-dtype"), UsageError);
}

}  // namespace
}  // namespace ub::cli
