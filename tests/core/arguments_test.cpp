// Parsing of typed values: sizes with k/M suffixes, lists, positive numbers.
#include "cli/arguments.hpp"

#include <gtest/gtest.h>

#include "base/error.hpp"
#include "facts/dtype.hpp"

namespace ub::cli {
namespace {

TEST(Arguments, Sizes) {
  EXPECT_EQ(parse_size("8192", "--seqlen"), 8192);
  EXPECT_EQ(parse_size("8k", "--seqlen"), 8192);
  EXPECT_EQ(parse_size("256K", "--seqlen"), 262144);
  EXPECT_EQ(parse_size("1024G", "--sizes"), int64_t{1} << 40);
  EXPECT_THROW(parse_size("1025G", "--sizes"), UsageError);  // beyond 2^40: products would overflow
  EXPECT_THROW(parse_size("4611686018427387904", "--batch"), UsageError);
  EXPECT_EQ(parse_size("1M", "--seqlen"), 1048576);
  EXPECT_EQ(parse_size("4G", "--sizes"), int64_t{4} << 30);
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
  // A value left out between commas, or after the last, is said, not skipped.
  EXPECT_THROW(parse_size_list("1k,,2k", "--seqlen"), UsageError);
  EXPECT_THROW(parse_size_list("1k,2k,", "--seqlen"), UsageError);
  EXPECT_THROW(parse_size_list("1k, ,2k", "--seqlen"), UsageError);
}

TEST(Arguments, PeerRanges) {
  // mamf-finder's --m_range 0 20480 256: 256, 512, ..., 20224 (79 sizes, the stop excluded).
  const auto r = expand_range(0, 20480, 256, "--m-range");
  EXPECT_EQ(r.size(), 79u);
  EXPECT_EQ(r.front(), 256);
  EXPECT_EQ(r.back(), 20224);
  EXPECT_EQ(expand_range(1024, 16385, 2048, "g"),
            (std::vector<int64_t>{1024, 3072, 5120, 7168, 9216, 11264, 13312, 15360}));
  EXPECT_THROW(expand_range(0, 100, 0, "--m-range"), UsageError);
  EXPECT_THROW(expand_range(512, 256, 256, "--m-range"), UsageError);
  EXPECT_THROW(expand_range(-256, 256, 256, "--m-range"), UsageError);
  EXPECT_EQ(sizes_from({"2048", "4096,8k"}, {}, "m"), (std::vector<int64_t>{2048, 4096, 8192}));
  EXPECT_EQ(sizes_from({}, {0, 1024, 512}, "m"), (std::vector<int64_t>{512}));
  EXPECT_THROW(sizes_from({"2048"}, {0, 1024, 512}, "m"), UsageError);
}

TEST(Arguments, Devices) {
  EXPECT_EQ(parse_devices("all", 2), (std::vector<int>{0, 1}));
  EXPECT_EQ(parse_devices("1", 2), (std::vector<int>{1}));
  EXPECT_THROW(parse_devices("2", 2), UsageError);
  EXPECT_THROW(parse_devices("0,0", 2), UsageError);  // the same GPU twice
  EXPECT_THROW(parse_devices("99999999999", 2), UsageError);  // not std::stoi's out_of_range
  EXPECT_THROW(parse_devices("gpu0", 2), UsageError);
}

TEST(Arguments, PositiveNumbers) {
  EXPECT_DOUBLE_EQ(parse_positive("3.5", "--price"), 3.5);
  EXPECT_DOUBLE_EQ(parse_positive("1e12", "--tokens"), 1e12);
  EXPECT_DOUBLE_EQ(parse_positive("1e-300", "--price"), 1e-300);  // tiny, but a number
  // Subnormal: it divides into infinity (a break-even of "inf").
  EXPECT_THROW(parse_positive("1e-308", "--price"), UsageError);
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
