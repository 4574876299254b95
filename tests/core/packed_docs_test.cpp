// Packed document lists: splitting a sequence, validating a given list, the derived figures.
#include "facts/packed_docs.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "base/error.hpp"

namespace ub {
namespace {

using V = std::vector<int64_t>;

TEST(PackedDocs, SplitCutsEqualPiecesAndAShorterLastOne) {
  EXPECT_EQ(split_documents(10, 4), (V{4, 4, 2}));
  EXPECT_EQ(split_documents(8192, 2048), (V{2048, 2048, 2048, 2048}));
  EXPECT_EQ(split_documents(10, 0), V{10});   // none asked: one document
  EXPECT_EQ(split_documents(10, 10), V{10});
  EXPECT_EQ(split_documents(10, 99), V{10});
  EXPECT_THROW(split_documents(0, 4), UsageError);
}

TEST(PackedDocs, CheckNamesWhatIsWrong) {
  EXPECT_NO_THROW(check_documents({}, 10, "x"));  // one document
  EXPECT_NO_THROW(check_documents({3, 7}, 10, "x"));
  try {
    check_documents({3, 6}, 10, "attention --docs");
    FAIL() << "a list summing to 9 passed for 10 tokens";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "attention --docs: the 2 documents sum to 9 tokens, the sequence has 10");
  }
  try {
    check_documents({3, -1, 8}, 10, "x");
    FAIL() << "a negative length passed";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "x: document 2 has length -1; lengths must be positive");
  }
}

TEST(PackedDocs, StartsLongestEqualityAndSquares) {
  EXPECT_EQ(document_starts({40, 24, 32}), (V{0, 40, 64, 96}));
  EXPECT_EQ(document_starts({}), V{0});
  EXPECT_EQ(longest_document({40, 24, 32}), 40);
  EXPECT_EQ(longest_document({}), 0);
  EXPECT_TRUE(equal_lengths({}));
  EXPECT_TRUE(equal_lengths({8, 8, 8}));
  EXPECT_FALSE(equal_lengths({8, 8, 7}));
  EXPECT_DOUBLE_EQ(sum_of_squares({4, 4, 2}), 36.0);
  // 32 documents of 8k in 256k: 32x fewer than one sequence's s^2.
  EXPECT_DOUBLE_EQ(sum_of_squares(split_documents(262144, 8192)) * 32, sum_of_squares({262144}));
}

}  // namespace
}  // namespace ub
