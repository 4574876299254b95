// FLOP accounting; the formulas are stated once, in flops.hpp.
#include "facts/flops.hpp"

#include <fmt/format.h>

#include <utility>

#include "base/error.hpp"
#include "facts/packed_docs.hpp"

namespace ub {

double dense_matmul_params(const ModelShape& m) {
  double n = 0;
  for (int64_t i = 0; i < m.layers; ++i) n += layer_matmul_params(m, i);
  return n + static_cast<double>(m.vocab) * static_cast<double>(m.hidden);
}

double causal_attention_squares(int64_t len, int64_t window) {
  const double s = static_cast<double>(len), w = static_cast<double>(window);
  if (window <= 0 || window >= len) return s * s;
  return 2.0 * s * w - w * w;
}

// Whole documents of doc_len and one shorter rest: computed, never materialised (a 1G-token
// sequence of 1-token documents is a billion documents).
double sum_of_squared_doc_lengths(int64_t seqlen, std::optional<int64_t> doc_len) {
  if (!doc_len || *doc_len <= 0 || *doc_len >= seqlen) return static_cast<double>(seqlen) * static_cast<double>(seqlen);
  const int64_t whole = seqlen / *doc_len, rest = seqlen % *doc_len;
  const double len = static_cast<double>(*doc_len);
  return static_cast<double>(whole) * len * len + static_cast<double>(rest) * static_cast<double>(rest);
}

namespace {

// sum over layers of S_l, over the documents of the sequence. Without windows every layer has the
// same sum of squares, computed without listing the documents (a 1G-token sequence of 1-token
// documents is a billion of them).
double attention_squares(const ModelShape& m, int64_t seqlen, const FlopOptions& opt) {
  if (!m.has_windows() || !opt.causal) {
    const double squares =
        opt.docs.empty() ? sum_of_squared_doc_lengths(seqlen, opt.doc_len) : sum_of_squares(opt.docs);
    return squares * static_cast<double>(m.layers);
  }
  std::vector<std::pair<int64_t, int64_t>> docs;  // {length, how many}
  if (!opt.docs.empty()) {
    for (int64_t len : opt.docs) docs.push_back({len, 1});
  } else if (!opt.doc_len || *opt.doc_len >= seqlen) {
    docs.push_back({seqlen, 1});
  } else {
    docs.push_back({*opt.doc_len, seqlen / *opt.doc_len});
    if (seqlen % *opt.doc_len) docs.push_back({seqlen % *opt.doc_len, 1});
  }
  double total = 0;
  for (int64_t i = 0; i < m.layers; ++i) {
    for (const auto& [len, n] : docs) total += static_cast<double>(n) * causal_attention_squares(len, m.window(i));
  }
  return total;
}

}  // namespace

StepFlops step_flops(const ModelShape& m, int64_t seqlen, const FlopOptions& opt) {
  if (seqlen <= 0) throw UsageError(fmt::format("sequence length must be positive, got {}", seqlen));
  if (opt.batch <= 0) throw UsageError(fmt::format("batch must be positive, got {}", opt.batch));
  if (opt.doc_len && *opt.doc_len <= 0) {
    throw UsageError(fmt::format("--doc-len must be positive, got {}", *opt.doc_len));
  }
  if (opt.doc_len && !opt.docs.empty()) throw UsageError("give --doc-len or --docs, not both");
  check_documents(opt.docs, seqlen, "--docs");
  if (!opt.causal && m.has_windows()) {
    throw UsageError(fmt::format("{} has sliding-window layers, which are causal: non-causal attention is not "
                                 "this model's", m.id));
  }
  const double B = static_cast<double>(opt.batch), s = static_cast<double>(seqlen);
  const double d = static_cast<double>(m.head_dim), nq = static_cast<double>(m.heads);
  const double causal_factor = opt.causal ? 6.0 : 12.0;
  StepFlops f;
  f.dense = 6.0 * dense_matmul_params(m) * B * s;
  f.attention = causal_factor * B * attention_squares(m, seqlen, opt) * d * nq;
  // Attention in products of the forward's size: forward 2, backward 4; FlashAttention's backward
  // recomputes the scores (1 more); checkpointing runs the forward again (2 more).
  double products = 6;
  if (opt.flash_backward) products += 1;
  if (opt.recompute) {
    const double lm_head = static_cast<double>(m.vocab) * static_cast<double>(m.hidden);
    const double layer_params = dense_matmul_params(m) - lm_head;
    f.dense += 2.0 * layer_params * B * s;  // one more forward of every layer
    products += 2;
  }
  f.attention *= products / 6;
  return f;
}

}  // namespace ub
