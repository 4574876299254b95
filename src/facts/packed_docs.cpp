// Packed document lists; see packed_docs.hpp.
#include "facts/packed_docs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "base/error.hpp"

namespace ub {

std::vector<int64_t> split_documents(int64_t seqlen, int64_t doc_len) {
  if (seqlen <= 0) throw UsageError(fmt::format("sequence length must be positive, got {}", seqlen));
  if (doc_len <= 0 || doc_len >= seqlen) return {seqlen};
  std::vector<int64_t> lens(static_cast<size_t>(seqlen / doc_len), doc_len);
  if (seqlen % doc_len) lens.push_back(seqlen % doc_len);
  return lens;
}

void check_documents(const std::vector<int64_t>& lens, int64_t seqlen, const char* what) {
  if (lens.empty()) return;
  for (size_t i = 0; i < lens.size(); ++i) {
    if (lens[i] <= 0) {
      throw UsageError(fmt::format("{}: document {} has length {}; lengths must be positive", what, i + 1, lens[i]));
    }
  }
  const int64_t total = std::accumulate(lens.begin(), lens.end(), int64_t{0});
  if (total != seqlen) {
    throw UsageError(fmt::format("{}: the {} documents sum to {} tokens, the sequence has {}", what, lens.size(),
                                 total, seqlen));
  }
}

std::vector<int64_t> document_starts(const std::vector<int64_t>& lens) {
  std::vector<int64_t> starts(lens.size() + 1, 0);
  std::partial_sum(lens.begin(), lens.end(), starts.begin() + 1);
  return starts;
}

int64_t longest_document(const std::vector<int64_t>& lens) {
  return lens.empty() ? 0 : *std::max_element(lens.begin(), lens.end());
}

bool equal_lengths(const std::vector<int64_t>& lens) {
  return std::adjacent_find(lens.begin(), lens.end(), std::not_equal_to<>()) == lens.end();
}

double sum_of_squares(const std::vector<int64_t>& lens) {
  double s = 0;
  for (int64_t l : lens) s += static_cast<double>(l) * static_cast<double>(l);
  return s;
}

}  // namespace ub
