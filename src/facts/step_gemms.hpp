// The matrix products one training step of a Llama-family model runs, shape by shape: what
// `mamf --shapes-of` times on a GPU and what a prediction scales one by one. Per layer the four
// linear layers our engine runs (qkv fused, o, gate|up fused, down), then lm_head; each linear
// of rows T, `in` and `out` features runs three products (gpu/linear_gemm.hpp's convention, as
// cuBLASLt is called, column-major):
//
//   forward  m = out, n = T, k = in       Y  = X W^T
//   dgrad    m = in,  n = T, k = out      dX = dY W
//   wgrad    m = in,  n = out, k = T      dW = dY^T X
//
// each 2 * T * in * out FLOPs. Activation checkpointing runs every layer's forward once more in
// the backward pass but for the down projection; MLP tiles (--mlp-tile) and loss chunks
// (--loss-chunk) cut T into pieces of that many rows (the last one shorter), and the tiled
// backward recomputes each tile's gate|up: the shapes the GPU then multiplies
// (gpu/model/forward.cpp, mlp.cpp, loss.cpp).
//
// An MoE layer's MLP is the router (hidden -> experts), each expert's gate|up and down over the
// tokens routed to it, and the shared experts over all tokens. How many tokens an expert gets is
// decided by the router at run time; these shapes are those of perfectly balanced routing,
// ceil(T * top_k / experts) rows per expert, the case a grouped GEMM is fastest at. MLP tiles
// apply to the dense layers' MLP only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "facts/model_shape.hpp"

namespace ub {

struct StepGemm {
  std::string name;  // "qkv fwd", "down wgrad", "lm_head dgrad", ...
  int64_t m = 0, n = 0, k = 0;
  int64_t count = 0;  // how many times one step runs it
  double flop() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
  std::string shape() const;  // "MxNxK"
};

// How the step is run, as far as its products' shapes go.
struct StepLevers {
  int64_t batch = 1;
  bool checkpointing = false;
  int64_t mlp_tile = 0;    // rows per MLP tile (0: all)
  int64_t loss_chunk = 0;  // rows per lm_head chunk (0: all)
};

// Every product of one step of `m` at `seqlen` tokens per sequence, one entry per distinct
// (name, shape), with how many times the step runs it.
std::vector<StepGemm> step_gemms(const ModelShape& m, int64_t seqlen, const StepLevers& levers);

// The same products merged by shape alone (what a GPU is timed on), the names joined.
std::vector<StepGemm> distinct_shapes(const std::vector<StepGemm>& gemms);

}  // namespace ub
