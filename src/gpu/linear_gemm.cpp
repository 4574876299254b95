// cuBLASLt plans for the linear layers of the training engine; see linear_gemm.hpp.
#include "gpu/linear_gemm.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "gpu/cuda_elem.hpp"
#include "gpu/gemm.hpp"

namespace ub::gpu {

struct LinearPlan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr, ld = nullptr;
  cublasLtMatmulAlgo_t algo{};
  ~LinearPlan() {
    for (auto* l : {la, lb, lc, ld}) {
      if (l) cublasLtMatrixLayoutDestroy(l);
    }
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

LinearGemm::LinearGemm(size_t workspace_bytes) : lt_(std::make_unique<CublasLt>()), workspace_(workspace_bytes) {}
LinearGemm::~LinearGemm() = default;

const LinearPlan& LinearGemm::plan(const Key& key) {
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
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt_->get(), p->op, p->la, p->lb, p->lc, p->ld, pref, 1,
                                                           &result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS || found == 0) {
    throw WorkError(fmt::format("cuBLASLt has no algorithm for the linear GEMM m={} n={} k={} ({}{}, {} out{}): {}", m, n, k,
                                ta ? "T" : "N", tb ? "T" : "N", to_string(out), with_c ? ", residual" : "",
                                cublasLtGetStatusString(st)));
  }
  p->algo = result.algo;
  return *plans_.emplace(key, std::move(p)).first->second;
}

void LinearGemm::run(const Key& key, const void* a, const void* b, const void* c, void* d) {
  const LinearPlan& p = plan(key);
  const float alpha = 1.0f, beta = c ? 1.0f : 0.0f;
  UB_CUBLAS_CHECK(cublasLtMatmul(lt_->get(), p.op, &alpha, a, p.la, b, p.lb, &beta, c ? c : d, p.lc, d, p.ld, &p.algo,
                                 workspace_.get(), workspace_.bytes(), stream_));
}

void LinearGemm::forward(const void* x, const void* w, void* y, const void* residual, int64_t tokens, int64_t in,
                         int64_t out) {
  run({true, false, out, tokens, in, Elem::bf16, residual != nullptr}, w, x, residual, y);
}

void LinearGemm::dgrad(const void* dy, const void* w, void* dx, int64_t tokens, int64_t in, int64_t out) {
  run({false, false, in, tokens, out, Elem::bf16, false}, w, dy, nullptr, dx);
}

void LinearGemm::wgrad(const void* dy, const void* x, float* dw, int64_t tokens, int64_t in, int64_t out) {
  run({false, true, in, out, tokens, Elem::f32, false}, x, dy, nullptr, dw);
}

}  // namespace ub::gpu
