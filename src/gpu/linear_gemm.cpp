// cuBLASLt plans for the linear layers of the training engine; see linear_gemm.hpp.
#include "gpu/linear_gemm.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "gpu/cuda_elem.hpp"
#include "gpu/gemm.hpp"
#include "gpu/timing.hpp"

namespace ub::gpu {

struct LinearPlan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr, ld = nullptr;
  std::vector<cublasLtMatmulAlgo_t> candidates;  // heuristic order
  cublasLtMatmulAlgo_t algo{};
  bool tuned = false;
  LinearGemm::Choice choice;
  ~LinearPlan() {
    for (auto* l : {la, lb, lc, ld}) {
      if (l) cublasLtMatrixLayoutDestroy(l);
    }
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

namespace {

// D = A B (+ C when not null) with `algo` on stream `s`; cuBLASLt's status.
cublasStatus_t launch(cublasLtHandle_t lt, const LinearPlan& p, const cublasLtMatmulAlgo_t& algo,
                      const DeviceBuffer& workspace, cudaStream_t s, const void* a, const void* b, const void* c,
                      void* d) {
  const float alpha = 1.0f, beta = c ? 1.0f : 0.0f;
  return cublasLtMatmul(lt, p.op, &alpha, a, p.la, b, p.lb, &beta, c ? c : d, p.lc, d, p.ld, &algo, workspace.get(),
                        workspace.bytes(), s);
}

}  // namespace

LinearGemm::LinearGemm(bool autotune, size_t workspace_bytes)
    : lt_(std::make_unique<CublasLt>()), workspace_(workspace_bytes), autotune_(autotune) {}
LinearGemm::~LinearGemm() = default;

LinearPlan& LinearGemm::plan(const Key& key) {
  auto it = plans_.find(key);
  if (it != plans_.end()) return *it->second;
  const auto [ta, tb, m, n, k, out, with_c] = key;
  auto p = std::make_unique<LinearPlan>();
  UB_CUBLAS_CHECK(cublasLtMatmulDescCreate(&p->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  UB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa));
  UB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb));
  const auto u = [](int64_t x) { return static_cast<uint64_t>(x); };
  // Stored (column-major) shapes: op(A) is m x k, op(B) is k x n.
  UB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->la, CUDA_R_16BF, ta ? u(k) : u(m), ta ? u(m) : u(k), ta ? k : m));
  UB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->lb, CUDA_R_16BF, tb ? u(n) : u(k), tb ? u(k) : u(n), tb ? n : k));
  const cudaDataType_t dt = cuda_data_type(out);
  UB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->lc, dt, u(m), u(n), m));
  UB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->ld, dt, u(m), u(n), m));

  cublasLtMatmulPreference_t pref = nullptr;
  UB_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const size_t ws = workspace_.bytes();
  UB_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  std::vector<cublasLtMatmulHeuristicResult_t> results(kTuneCandidates);
  int found = 0;
  const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt_->get(), p->op, p->la, p->lb, p->lc, p->ld, pref,
                                                           kTuneCandidates, results.data(), &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS || found == 0) {
    throw WorkError(fmt::format("cuBLASLt has no algorithm for the linear GEMM m={} n={} k={} ({}{}, {} out{}): {}", m, n, k,
                                ta ? "T" : "N", tb ? "T" : "N", to_string(out), with_c ? ", residual" : "",
                                cublasLtGetStatusString(st)));
  }
  for (int i = 0; i < found; ++i) {
    if (results[static_cast<size_t>(i)].state == CUBLAS_STATUS_SUCCESS) p->candidates.push_back(results[static_cast<size_t>(i)].algo);
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

std::vector<LinearGemm::Choice> LinearGemm::choices() const {
  std::vector<Choice> v;
  for (const auto& [key, p] : plans_) v.push_back(p->choice);
  return v;
}

void LinearGemm::forward(const void* x, const void* w, void* y, const void* residual, int64_t tokens, int64_t in,
                         int64_t out) {
  run({true, false, out, tokens, in, Elem::bf16, residual != nullptr}, w, x, residual, y);
}

void LinearGemm::dgrad(const void* dy, const void* w, void* dx, int64_t tokens, int64_t in, int64_t out) {
  run({false, false, in, tokens, out, Elem::bf16, false}, w, dy, nullptr, dx);
}

void LinearGemm::wgrad(const void* dy, const void* x, void* dw, Elem dw_elem, int64_t tokens, int64_t in, int64_t out,
                       bool accumulate) {
  if (dw_elem != Elem::f32 && dw_elem != Elem::bf16) throw WorkError("wgrad: the gradient must be fp32 or bf16");
  run({false, true, in, out, tokens, dw_elem, accumulate}, x, dy, accumulate ? dw : nullptr, dw);
}

}  // namespace ub::gpu
