// The three matrix products of a linear layer in training, through cuBLASLt, for row-major
// tensors as PyTorch lays them out (X [tokens, in], W [out, in], Y [tokens, out]):
//
//   forward  Y  = X W^T (+ R)    bf16 in, fp32 accumulate, bf16 out; R: a residual added in
//                                the epilogue (D = A B + C, C = R), so "x + proj(...)" is one GEMM
//   dgrad    dX = dY W           bf16 out
//   wgrad    dW = dY^T X         fp32 out, or bf16 (the gradient buffers' type: fp32 with master
//                                weights, bf16 in pure bf16 as PyTorch's bf16 model)
//
// cuBLASLt is column-major, so each is issued transposed (a row-major [r, c] matrix is a
// column-major [c, r] one): forward m=out n=T k=in (W "T", X "N"); dgrad m=in n=T k=out (both
// "N"); wgrad m=in n=out k=T (X "N", dY "T"). FLOPs 2 * T * in * out each. One plan per shape,
// built on first use and cached: its descriptors and one algorithm, either cuBLASLt's first
// heuristic choice or, with autotuning on, the fastest of its top `kTuneCandidates` timed on the
// call's own operands (minimum of 3 runs after 1; in-place accumulation is not tuned, since
// repeating it would change the result).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "gpu/cuda_raii.hpp"
#include "gpu/elem.hpp"
#include "gpu/tensor_view.hpp"
#include "records/train_records.hpp"

namespace ub::gpu {

class CublasLt;
struct LinearPlan;

class LinearGemm {
 public:
  explicit LinearGemm(bool autotune = true, size_t workspace_bytes = size_t{32} << 20);
  static constexpr int kTuneCandidates = 32;
  ~LinearGemm();
  LinearGemm(const LinearGemm&) = delete;
  LinearGemm& operator=(const LinearGemm&) = delete;

  void set_stream(cudaStream_t s) { stream_ = s; }
  // y[T, out] = x[T, in] w[out, in]^T (+ residual[T, out] when not null).
  void forward(const bf16* x, const bf16* w, bf16* y, const bf16* residual, int64_t tokens, int64_t in, int64_t out);
  // dx[T, in] = dy[T, out] w[out, in].
  void dgrad(const bf16* dy, const bf16* w, bf16* dx, int64_t tokens, int64_t in, int64_t out);
  // dw[out, in] = dy[T, out]^T x[T, in] (dw fp32 or bf16), written, or added to when `accumulate`.
  void wgrad(const bf16* dy, const bf16* x, Fp32OrBf16 dw, int64_t tokens, int64_t in, int64_t out,
             bool accumulate = false);

  // What each plan chose, for the breakdown: "m x n x k (TN, bf16 out)" -> algorithm and timing.
  std::vector<GemmChoice> choices() const;

  size_t workspace_bytes() const { return workspace_.bytes(); }

 private:
  // (transa, transb, m, n, k, out elem, with C)
  using Key = std::tuple<bool, bool, int64_t, int64_t, int64_t, Elem, bool>;
  LinearPlan& plan(const Key& key);
  void run(const Key& key, const void* a, const void* b, const void* c, void* d);
  void tune(LinearPlan& p, const void* a, const void* b, const void* c, void* d);

  std::unique_ptr<CublasLt> lt_;
  DeviceBuffer workspace_;
  bool autotune_;
  cudaStream_t stream_ = nullptr;
  std::map<Key, std::unique_ptr<LinearPlan>> plans_;
};

}  // namespace ub::gpu
