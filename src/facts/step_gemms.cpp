// The products of a training step; see step_gemms.hpp.
#include "facts/step_gemms.hpp"

#include <fmt/format.h>

#include <map>
#include <tuple>

namespace ub {

namespace {

// The rows of one pass cut into pieces of `piece` (0: one piece of all rows): {rows, how many}.
std::vector<std::pair<int64_t, int64_t>> pieces(int64_t rows, int64_t piece) {
  if (piece <= 0 || piece >= rows) return {{rows, 1}};
  std::vector<std::pair<int64_t, int64_t>> out = {{piece, rows / piece}};
  if (rows % piece) out.push_back({rows % piece, 1});
  return out;
}

// The three products of a linear layer of `in` -> `out` over `rows`, `times` each, the forward
// `forwards` times.
void add_linear(std::vector<StepGemm>& out, const std::string& name, int64_t rows, int64_t in, int64_t outf,
                int64_t times, int64_t forwards) {
  out.push_back({name + " fwd", outf, rows, in, times * forwards});
  out.push_back({name + " dgrad", in, rows, outf, times});
  out.push_back({name + " wgrad", in, outf, rows, times});
}

// An MoE layer's products with balanced routing: each of the E experts gets ceil(T * k / E) rows
// (what a perfectly balanced router gives it), the router and the shared experts all T rows.
void add_moe_layers(std::vector<StepGemm>& out, const ModelShape& m, int64_t T, int64_t layers, int64_t again) {
  const MoeShape& e = *m.moe;
  const int64_t rows = (T * e.top_k + e.experts - 1) / e.experts, H = m.hidden;
  add_linear(out, "router", T, H, e.experts, layers, again);
  add_linear(out, "expert gate_up", rows, H, 2 * e.intermediate, layers * e.experts, again);
  add_linear(out, "expert down", rows, e.intermediate, H, layers * e.experts, 1);
  if (e.shared_experts == 0) return;
  const int64_t shared = e.shared_experts * e.shared_intermediate;  // run as one MLP of all shared experts
  add_linear(out, "shared gate_up", T, H, 2 * shared, layers, again);
  add_linear(out, "shared down", T, shared, H, layers, 1);
}

}  // namespace

std::string StepGemm::shape() const { return fmt::format("{}x{}x{}", m, n, k); }

std::vector<StepGemm> step_gemms(const ModelShape& m, int64_t seqlen, const StepLevers& levers) {
  const int64_t T = levers.batch * seqlen, H = m.hidden, I = m.intermediate, L = m.layers;
  int64_t moe_layers = 0;
  for (int64_t i = 0; i < L; ++i) moe_layers += m.is_moe_layer(i) ? 1 : 0;
  const int64_t dense_layers = L - moe_layers;
  const int64_t q = m.heads * m.head_dim, qkv = (m.heads + 2 * m.kv_heads) * m.head_dim;
  // Checkpointing recomputes each layer's forward in the backward pass, all but the down
  // projection (the layer's output is the next layer's input, kept). Tiled, the MLP's forward
  // runs per tile and the backward recomputes each tile's gate|up, checkpointing or not.
  const int64_t again = levers.checkpointing ? 2 : 1;
  std::vector<StepGemm> out;
  add_linear(out, "qkv", T, H, qkv, L, again);
  add_linear(out, "o", T, q, H, L, again);
  const bool untiled = levers.mlp_tile <= 0 || levers.mlp_tile >= T;
  if (dense_layers > 0 && untiled) {
    add_linear(out, "gate_up", T, H, 2 * I, dense_layers, again);
    add_linear(out, "down", T, I, H, dense_layers, 1);
  } else if (dense_layers > 0) {
    for (const auto& [rows, n] : pieces(T, levers.mlp_tile)) {
      add_linear(out, "gate_up", rows, H, 2 * I, dense_layers * n, 2);
      add_linear(out, "down", rows, I, H, dense_layers * n, 1);
    }
  }
  if (moe_layers > 0) add_moe_layers(out, m, T, moe_layers, again);
  for (const auto& [rows, n] : pieces(T, levers.loss_chunk)) add_linear(out, "lm_head", rows, H, m.vocab, n, 1);
  // Tiles of the same shape as the whole pass merge into one entry per name and shape.
  std::map<std::tuple<std::string, int64_t, int64_t, int64_t>, size_t> at;
  std::vector<StepGemm> merged;
  for (const StepGemm& g : out) {
    const auto key = std::make_tuple(g.name, g.m, g.n, g.k);
    if (auto it = at.find(key); it != at.end()) {
      merged[it->second].count += g.count;
      continue;
    }
    at[key] = merged.size();
    merged.push_back(g);
  }
  return merged;
}

std::vector<StepGemm> distinct_shapes(const std::vector<StepGemm>& gemms) {
  std::map<std::tuple<int64_t, int64_t, int64_t>, size_t> at;
  std::vector<StepGemm> out;
  for (const StepGemm& g : gemms) {
    const auto key = std::make_tuple(g.m, g.n, g.k);
    if (auto it = at.find(key); it != at.end()) {
      out[it->second].count += g.count;
      out[it->second].name += ", " + g.name;
      continue;
    }
    at[key] = out.size();
    out.push_back(g);
  }
  return out;
}

}  // namespace ub
