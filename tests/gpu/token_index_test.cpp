// The token index the embedding's backward pass reads (gpu/kernels/llama_ops.cuh): host code,
// run in CI. Positions grouped by token, in position order within a token; ids outside the
// vocabulary are an error naming the position.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.hpp"
#include "gpu/kernels/llama_ops.cuh"

namespace ub::gpu {
namespace {

TEST(TokenIndex, GroupsPositionsByToken) {
  const std::vector<int32_t> tokens{3, 0, 3, 5, 0, 3};
  const TokenIndex ix = index_tokens(tokens, 6);
  EXPECT_EQ(ix.starts, (std::vector<int32_t>{0, 2, 2, 2, 5, 5, 6}));
  EXPECT_EQ(ix.order, (std::vector<int32_t>{1, 4, 0, 2, 5, 3}));
}

TEST(TokenIndex, EveryPositionOnceUnderItsToken) {
  std::vector<int32_t> tokens;
  for (int32_t t = 0; t < 1000; ++t) tokens.push_back((t * 7919) % 97);
  const TokenIndex ix = index_tokens(tokens, 100);
  ASSERT_EQ(ix.starts.size(), 101u);
  ASSERT_EQ(ix.order.size(), tokens.size());
  std::vector<int> seen(tokens.size(), 0);
  for (size_t v = 0; v < 100; ++v) {
    for (int32_t p = ix.starts[v]; p < ix.starts[v + 1]; ++p) {
      EXPECT_EQ(tokens[static_cast<size_t>(ix.order[static_cast<size_t>(p)])], static_cast<int32_t>(v));
      ++seen[static_cast<size_t>(ix.order[static_cast<size_t>(p)])];
    }
  }
  for (int n : seen) EXPECT_EQ(n, 1);
}

TEST(TokenIndex, IdOutsideTheVocabularyNamesThePosition) {
  try {
    index_tokens({1, 2, 7}, 5);
    FAIL() << "id 7 is outside a vocabulary of 5";
  } catch (const WorkError& e) {
    EXPECT_NE(std::string(e.what()).find("position 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(index_tokens({-1}, 5), WorkError);
}

}  // namespace
}  // namespace ub::gpu
