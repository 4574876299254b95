// FLOP accounting; the formulas are stated once, in flops.hpp.
#include "facts/flops.hpp"

#include <fmt/format.h>

#include "base/error.hpp"
#include "facts/packed_docs.hpp"

namespace ub {

double dense_matmul_params(const ModelShape& m) {
  const double h = static_cast<double>(m.hidden), inter = static_cast<double>(m.intermediate);
  const double d = static_cast<double>(m.head_dim);
  const double nq = static_cast<double>(m.heads), nkv = static_cast<double>(m.kv_heads);
  const double per_layer = 3 * h * inter + h * (nq * d + 2 * nkv * d + nq * d);
  return per_layer * static_cast<double>(m.layers) + static_cast<double>(m.vocab) * h;
}

// Whole documents of doc_len and one shorter rest: computed, never materialised (a 1G-token
// sequence of 1-token documents is a billion documents).
double sum_of_squared_doc_lengths(int64_t seqlen, std::optional<int64_t> doc_len) {
  if (!doc_len || *doc_len <= 0 || *doc_len >= seqlen) return static_cast<double>(seqlen) * static_cast<double>(seqlen);
  const int64_t whole = seqlen / *doc_len, rest = seqlen % *doc_len;
  const double len = static_cast<double>(*doc_len);
  return static_cast<double>(whole) * len * len + static_cast<double>(rest) * static_cast<double>(rest);
}

StepFlops step_flops(const ModelShape& m, int64_t seqlen, const FlopOptions& opt) {
  if (seqlen <= 0) throw UsageError(fmt::format("sequence length must be positive, got {}", seqlen));
  if (opt.batch <= 0) throw UsageError(fmt::format("batch must be positive, got {}", opt.batch));
  if (opt.doc_len && *opt.doc_len <= 0) {
    throw UsageError(fmt::format("--doc-len must be positive, got {}", *opt.doc_len));
  }
  if (opt.doc_len && !opt.docs.empty()) throw UsageError("give --doc-len or --docs, not both");
  check_documents(opt.docs, seqlen, "--docs");
  const double squares =
      opt.docs.empty() ? sum_of_squared_doc_lengths(seqlen, opt.doc_len) : sum_of_squares(opt.docs);
  const double B = static_cast<double>(opt.batch), s = static_cast<double>(seqlen);
  const double L = static_cast<double>(m.layers);
  const double d = static_cast<double>(m.head_dim), nq = static_cast<double>(m.heads);
  const double causal_factor = opt.causal ? 6.0 : 12.0;
  StepFlops f;
  f.dense = 6.0 * dense_matmul_params(m) * B * s;
  f.attention = causal_factor * B * squares * d * nq * L;
  if (opt.recompute) {
    const double lm_head = static_cast<double>(m.vocab) * static_cast<double>(m.hidden);
    const double layer_params = dense_matmul_params(m) - lm_head;
    f.dense += 2.0 * layer_params * B * s;  // one more forward of every layer
    f.attention *= 4.0 / 3.0;               // one more attention forward (fwd is 1/3 of fwd+bwd)
  }
  return f;
}

}  // namespace ub
