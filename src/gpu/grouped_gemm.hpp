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
// Which is faster, the grouped GEMM or one cublasGemmEx per expert, depends on the GPU, the shapes
// and the routing: cuBLAS 13's grouped kernel on Hopper is an sm80 one (mma.sync, no wgmma),
// while a per-expert GEMM gets Hopper's own kernels but pays a launch per expert, and an expert
// of a few rows leaves most SMs idle. Routing is rarely even (a fresh router sends most tokens to
// a few experts), so a product can also split: the experts of many rows one cublasGemmEx each on
// side streams, the rest in one grouped call beside them. Experts that go alone are spread over
// kSideStreams streams, the largest first, each to the stream with the fewest rows so far: an
// expert of a few hundred rows fills a fraction of Hopper's SMs, and several run at once (one
// large enough to fill them all runs on the product's own stream, one after another). A
// product's way is the row count from which an expert goes alone (0: every expert alone; none:
// all grouped). Each product (its transposes, output type and the experts' fixed dimensions) is
// timed each way on its first use that writes its output, and runs the fastest way from then on.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
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

  // The library the products went through, for the records: per product, the grouped GEMM, one
  // cublasGemmEx per expert, or both split by rows (timed fastest, or the types this cuBLAS has
  // no grouped kernel for: it answers CUBLAS_STATUS_NOT_SUPPORTED). Empty before the first product.
  std::string library() const;
  // Every product from now on one way, untimed: experts of at least `per_expert_from` rows alone
  // (0: all alone; kAllGrouped: none). For tests that check each way against a reference.
  static constexpr int64_t kAllGrouped = std::numeric_limits<int64_t>::max();
  void always(int64_t per_expert_from) { always_ = per_expert_from; }

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
    int64_t rows;  // the expert's rows (n or k)
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
  // A way: experts of at least this many rows alone, the others grouped.
  using Way = int64_t;
  void run(const Product& product, const std::vector<Problem>& problems, float beta);
  // false when it is all grouped and this cuBLAS has no grouped kernel for the product's types
  // (nothing ran); a split product's grouped part then goes per expert.
  bool run_way(const Product& product, const std::vector<Problem>& problems, float beta, Way way);
  // false when this cuBLAS has no grouped kernel for the product's types
  bool run_grouped(const Product& product, const std::vector<Problem>& problems, float beta);
  // One cublasGemmEx per problem: those that fill the GPU on the stream, the others spread over
  // the side streams after what the stream has enqueued so far (`forked`: after fork_, already
  // recorded); the stream then waits for them.
  void run_per_expert(const Product& product, std::vector<Problem> problems, float beta, bool forked = false);
  // Times each way (each run once before it is timed) and keeps the fastest; the output is written.
  Way choose(const Product& product, const std::vector<Problem>& problems);

  static constexpr size_t kSideStreams = 4;
  cublasHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  // The experts that go alone: a stream and a cuBLAS handle (its own workspace) each.
  std::array<Stream, kSideStreams> sides_;
  std::array<cublasHandle_t, kSideStreams> side_handles_{};
  std::array<Event, kSideStreams> joins_;
  Event fork_;
  DeviceBuffer pointers_;  // the A, B and C pointer arrays cuBLAS reads on the device
  std::optional<Way> always_;
  std::map<Product, Way> ways_;         // each product's way, once chosen
  std::map<Product, std::string> why_;  // and why: timed (each way's time) or refused
};

}  // namespace ub::gpu
