// The three matrix products of the experts of a mixture-of-experts layer in training, one group
// per expert, through cuBLAS's grouped batched GEMM (cublasGemmGroupedBatchedEx): the experts'
// weights stacked [E, out, in] as transformers stores them, their tokens the rows of a permuted
// [rows, in] tensor, expert e's rows being [offsets[e], offsets[e] + rows[e]). Per expert, as
// gpu/linear_gemm.hpp's linear layer, row-major as PyTorch lays them out:
//
//   forward  Y_e  = X_e W_e^T      bf16 in, fp32 accumulate, bf16 out
//   dgrad    dX_e = dY_e W_e       bf16 out
//   wgrad    dW_e = dY_e^T X_e     fp32 or bf16 out, written or added to; an expert with no
//                                  rows gets zeros (or keeps what it had, when adding)
//
// issued column-major and transposed as linear_gemm.hpp says. The groups' sizes are host
// numbers (cuBLAS takes them on the host): the layer copies its rows per expert to the host once
// per forward pass. An expert with no rows is left out of forward and dgrad.
//
// Which is faster, the grouped GEMM or one cublasGemmEx per expert, depends on the GPU and the
// shapes: cuBLAS 13's grouped kernel on Hopper is an sm80 one (mma.sync, no wgmma), while a
// per-expert GEMM gets Hopper's own kernels but pays a launch per expert. Each product (its
// transposes, output type and the experts' fixed dimensions) is timed both ways on its first use
// that writes its output, and runs the faster way from then on.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "gpu/cuda_raii.hpp"
#include "gpu/tensor_view.hpp"

namespace ub::gpu {

class GroupedGemm {
 public:
  GroupedGemm();
  ~GroupedGemm();
  GroupedGemm(const GroupedGemm&) = delete;
  GroupedGemm& operator=(const GroupedGemm&) = delete;

  // The library the products went through, for the records: per product, the grouped GEMM or one
  // cublasGemmEx per expert (timed faster, or the types this cuBLAS has no grouped kernel for:
  // it answers CUBLAS_STATUS_NOT_SUPPORTED). Empty before the first product.
  std::string library() const;

  void set_stream(cudaStream_t s);
  // y[rows, out] = x[rows, in] w_e[out, in]^T per expert; rows[e] rows each, in order.
  void forward(const bf16* x, const bf16* w, bf16* y, std::span<const int64_t> rows, int64_t in, int64_t out);
  // dx[rows, in] = dy[rows, out] w_e[out, in] per expert.
  void dgrad(const bf16* dy, const bf16* w, bf16* dx, std::span<const int64_t> rows, int64_t in, int64_t out);
  // dw_e[out, in] = dy_e^T x_e per expert (dw [E, out, in], fp32 or bf16).
  void wgrad(const bf16* dy, const bf16* x, Fp32OrBf16 dw, std::span<const int64_t> rows, int64_t in, int64_t out,
             bool accumulate);

 private:
  // One problem per group: column-major op(A) m x k times op(B) k x n into C m x n.
  struct Problem {
    int m, n, k, lda, ldb, ldc;
    const void* a;
    const void* b;
    void* c;
  };
  // The problems of the experts that have rows, each from make(expert, its first row, its rows).
  template <class Make>
  static std::vector<Problem> per_expert(std::span<const int64_t> rows, Make make) {
    std::vector<Problem> problems;
    int64_t first = 0;
    for (size_t e = 0; e < rows.size(); first += rows[e], ++e) {
      if (rows[e] > 0) problems.push_back(make(static_cast<int64_t>(e), first, rows[e]));
    }
    return problems;
  }
  // One product: its transposes, its output type and the experts' fixed dimensions.
  struct Product {
    cublasOperation_t ta, tb;
    cudaDataType_t c_type;
    int64_t in, out;
    auto operator<=>(const Product&) const = default;
    std::string name() const;
  };
  enum class Way { grouped, per_expert };
  void run(const Product& product, const std::vector<Problem>& problems, float beta);
  // false when this cuBLAS has no grouped kernel for the product's types
  bool run_grouped(const Product& product, const std::vector<Problem>& problems, float beta);
  void run_per_expert(const Product& product, const std::vector<Problem>& problems, float beta);
  // Times both ways (each run once before it is timed) and keeps the faster; the output is written.
  Way choose(const Product& product, const std::vector<Problem>& problems);

  cublasHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  DeviceBuffer pointers_;  // the A, B and C pointer arrays cuBLAS reads on the device
  std::map<Product, Way> ways_;                  // each product's way, once chosen
  std::map<Product, std::string> why_;           // and why: timed (both times) or refused
};

}  // namespace ub::gpu
