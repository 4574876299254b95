// cuBLASLt plans for the linear layers of the training engine; see linear_gemm.hpp.
#include "gpu/linear_gemm.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "base/error.hpp"
#include "gpu/cublaslt.hpp"
#include "gpu/cuda_elem.hpp"
#include "gpu/timing.hpp"

namespace ub::gpu {

struct LinearPlan {
  MatmulProblem problem;
  std::vector<cublasLtMatmulAlgo_t> candidates;  // heuristic order
  cublasLtMatmulAlgo_t algo{};
  bool tuned = false;
  GemmChoice choice;
};

namespace {

// D = A B (+ C when not null) with `algo` on stream `s`; cuBLASLt's status.
cublasStatus_t launch(cublasLtHandle_t lt, const LinearPlan& p, const cublasLtMatmulAlgo_t& algo,
                      const DeviceBuffer& workspace, cudaStream_t s, const void* a, const void* b, const void* c,
                      void* d) {
  const float alpha = 1.0f, beta = c ? 1.0f : 0.0f;
  const MatmulProblem& q = p.problem;
  return cublasLtMatmul(lt, q.op.get(), &alpha, a, q.a.get(), b, q.b.get(), &beta, c ? c : d, q.c.get(), d, q.d.get(),
                        &algo, workspace.get(), workspace.bytes(), s);
}

// The problem of one linear-layer GEMM: bf16 inputs, fp32 accumulation, `out` output.
MatmulProblem linear_problem(bool ta, bool tb, int64_t m, int64_t n, int64_t k, Elem out) {
  // Stored (column-major) shapes: op(A) is m x k, op(B) is k x n.
  const cudaDataType_t dt = cuda_data_type(out);
  MatmulProblem p{MatmulDesc(CUBLAS_COMPUTE_32F, CUDA_R_32F), MatrixLayout(CUDA_R_16BF, ta ? k : m, ta ? m : k, ta ? k : m),
                  MatrixLayout(CUDA_R_16BF, tb ? n : k, tb ? k : n, tb ? n : k), MatrixLayout(dt, m, n, m),
                  MatrixLayout(dt, m, n, m)};
  p.op.set(CUBLASLT_MATMUL_DESC_TRANSA, ta ? CUBLAS_OP_T : CUBLAS_OP_N);
  p.op.set(CUBLASLT_MATMUL_DESC_TRANSB, tb ? CUBLAS_OP_T : CUBLAS_OP_N);
  return p;
}

}  // namespace

LinearGemm::LinearGemm(bool autotune, size_t workspace_bytes)
    : lt_(std::make_unique<CublasLt>()), workspace_(workspace_bytes), autotune_(autotune) {}
LinearGemm::~LinearGemm() = default;

LinearPlan& LinearGemm::plan(const Key& key) {
  auto it = plans_.find(key);
  if (it != plans_.end()) return *it->second;
  const auto [ta, tb, m, n, k, out, with_c] = key;
  auto p = std::make_unique<LinearPlan>(LinearPlan{linear_problem(ta, tb, m, n, k, out), {}, {}, false, {}});
  for (const auto& r : heuristic_algorithms(*lt_, p->problem, workspace_.bytes(), kTuneCandidates)) {
    p->candidates.push_back(r.algo);
  }
  if (p->candidates.empty()) {
    throw WorkError(fmt::format("cuBLASLt has no algorithm for the linear GEMM m={} n={} k={} ({}{}, {} out{})", m, n, k,
                                ta ? "T" : "N", tb ? "T" : "N", to_string(out), with_c ? ", residual" : ""));
  }
  p->algo = p->candidates.at(0);
  p->choice.shape = fmt::format("{}x{}x{} ({}{}, {} out{})", m, n, k, ta ? "T" : "N", tb ? "T" : "N", to_string(out),
                                with_c ? ", +C" : "");
  p->choice.flop = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  p->choice.candidates = 1;
  return *plans_.emplace(key, std::move(p)).first->second;
}

void LinearGemm::tune(LinearPlan& p, const void* a, const void* b, const void* c, void* d) {
  p.tuned = true;
  if (!autotune_ || p.candidates.size() < 2 || c == d) return;  // in place: repeating would change D
  double best = 1e300;
  for (size_t i = 0; i < p.candidates.size(); ++i) {
    auto once = [&] { return launch(lt_->get(), p, p.candidates[i], workspace_, stream_, a, b, c, d); };
    double fastest = 1e300;  // an algorithm that refuses to run is not a candidate
    if (once() == CUBLAS_STATUS_SUCCESS) {
      bool refused = false;
      auto timed = [&](cudaStream_t) { refused |= once() != CUBLAS_STATUS_SUCCESS; };
      const Timing t = time_samples(stream_, nullptr, timed, fixed_samples(3));
      if (!refused) fastest = t.summary.min;
    }
    if (i == 0) p.choice.first_ms = fastest;
    if (fastest < best) best = fastest, p.algo = p.candidates[i], p.choice.chosen_rank = static_cast<int>(i);
  }
  p.choice.best_ms = best;
  p.choice.candidates = static_cast<int>(p.candidates.size());
}

void LinearGemm::run(const Key& key, const void* a, const void* b, const void* c, void* d) {
  LinearPlan& p = plan(key);
  if (!p.tuned) tune(p, a, b, c, d);
  UB_CUBLAS_CHECK(launch(lt_->get(), p, p.algo, workspace_, stream_, a, b, c, d));
}

std::vector<GemmChoice> LinearGemm::choices() const {
  std::vector<GemmChoice> v;
  for (const auto& [key, p] : plans_) v.push_back(p->choice);
  return v;
}

void LinearGemm::forward(const bf16* x, const bf16* w, bf16* y, const bf16* residual, int64_t tokens, int64_t in,
                         int64_t out) {
  run({true, false, out, tokens, in, Elem::bf16, residual != nullptr}, w, x, residual, y);
}

void LinearGemm::dgrad(const bf16* dy, const bf16* w, bf16* dx, int64_t tokens, int64_t in, int64_t out) {
  run({false, false, in, tokens, out, Elem::bf16, false}, w, dy, nullptr, dx);
}

void LinearGemm::wgrad(const bf16* dy, const bf16* x, Fp32OrBf16 dw, int64_t tokens, int64_t in, int64_t out,
                       bool accumulate) {
  run({false, true, in, out, tokens, dw.elem, accumulate}, x, dy, accumulate ? dw.data : nullptr, dw.data);
}

}  // namespace ub::gpu
