// The experts' products through cuBLAS's grouped batched GEMM; see grouped_gemm.hpp.
#include "gpu/grouped_gemm.hpp"

#include <fmt/format.h>

#include <limits>
#include <string>

#include "base/error.hpp"
#include "gpu/check.hpp"

#define UB_CUBLAS_API_CHECK(expr) UB_CHECK_GEN(expr, CUBLAS_STATUS_SUCCESS, cublasGetStatusString, "cuBLAS")

namespace ub::gpu {

namespace {

int as_int(int64_t v, const char* what) {
  if (v < 0 || v > std::numeric_limits<int>::max()) {
    throw WorkError(fmt::format("grouped GEMM: {} {} is outside what cuBLAS's 32-bit sizes hold", what, v));
  }
  return static_cast<int>(v);
}

}  // namespace

GroupedGemm::GroupedGemm() { UB_CUBLAS_API_CHECK(cublasCreate(&handle_)); }

GroupedGemm::~GroupedGemm() {
  if (handle_) cublasDestroy(handle_);
}

void GroupedGemm::set_stream(cudaStream_t s) {
  stream_ = s;
  UB_CUBLAS_API_CHECK(cublasSetStream(handle_, s));
}

void GroupedGemm::run(cublasOperation_t ta, cublasOperation_t tb, const std::vector<Problem>& problems,
                      cudaDataType_t c_type, float beta) {
  const size_t g = problems.size();
  if (g == 0) return;
  std::vector<const void*> host(3 * g);
  std::vector<int> m(g), n(g), k(g), lda(g), ldb(g), ldc(g), size(g, 1);
  for (size_t i = 0; i < g; ++i) {
    const Problem& p = problems[i];
    m[i] = p.m, n[i] = p.n, k[i] = p.k, lda[i] = p.lda, ldb[i] = p.ldb, ldc[i] = p.ldc;
    host[i] = p.a, host[g + i] = p.b, host[2 * g + i] = p.c;
  }
  if (pointers_.bytes() < host.size() * sizeof(void*)) pointers_ = DeviceBuffer(host.size() * sizeof(void*));
  UB_CUDA_CHECK(cudaMemcpyAsync(pointers_.get(), host.data(), host.size() * sizeof(void*), cudaMemcpyHostToDevice, stream_));
  const auto* const* a = pointers_.as<const void*>();
  const std::vector<cublasOperation_t> tas(g, ta), tbs(g, tb);
  const std::vector<float> alphas(g, 1.0f), betas(g, beta);
  const bool to_fp32 = c_type == CUDA_R_32F;
  if (!(to_fp32 ? fp32_per_problem_ : bf16_per_problem_)) {
    const cublasStatus_t st = cublasGemmGroupedBatchedEx(
        handle_, tas.data(), tbs.data(), m.data(), n.data(), k.data(), alphas.data(), a, CUDA_R_16BF, lda.data(), a + g,
        CUDA_R_16BF, ldb.data(), betas.data(), const_cast<void* const*>(a + 2 * g), c_type, ldc.data(), static_cast<int>(g),
        size.data(), CUBLAS_COMPUTE_32F);
    if (st != CUBLAS_STATUS_NOT_SUPPORTED) {
      UB_CUBLAS_API_CHECK(st);
      return;
    }
    (to_fp32 ? fp32_per_problem_ : bf16_per_problem_) = true;  // this cuBLAS has no grouped kernel for these types
  }
  for (const Problem& p : problems) {
    UB_CUBLAS_API_CHECK(cublasGemmEx(handle_, ta, tb, p.m, p.n, p.k, &alphas[0], p.a, CUDA_R_16BF, p.lda, p.b, CUDA_R_16BF,
                                     p.ldb, &betas[0], p.c, c_type, p.ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
}

std::string GroupedGemm::library() const {
  constexpr std::string_view grouped = "cuBLAS grouped batched GEMM (cublasGemmGroupedBatchedEx)";
  if (!bf16_per_problem_ && !fp32_per_problem_) return std::string(grouped);
  if (bf16_per_problem_ && fp32_per_problem_) return "cuBLAS GEMM per expert (cublasGemmEx: no grouped kernel for bf16)";
  return fmt::format("{}; fp32 weight gradients through cuBLAS GEMM per expert (cublasGemmEx: no grouped kernel for "
                     "bf16 into fp32)", grouped);
}

void GroupedGemm::forward(const bf16* x, const bf16* w, bf16* y, std::span<const int64_t> rows, int64_t in, int64_t out) {
  // Column-major: m = out, n = rows, k = in; A = W (T), B = X (N).
  run(CUBLAS_OP_T, CUBLAS_OP_N, per_expert(rows, [&](int64_t e, int64_t first, int64_t n) {
        return Problem{as_int(out, "out"), as_int(n, "rows"), as_int(in, "in"), as_int(in, "in"), as_int(in, "in"),
                       as_int(out, "out"), w + e * out * in, x + first * in, y + first * out};
      }), CUDA_R_16BF, 0.0f);
}

void GroupedGemm::dgrad(const bf16* dy, const bf16* w, bf16* dx, std::span<const int64_t> rows, int64_t in, int64_t out) {
  // m = in, n = rows, k = out; A = W (N, lda in), B = dY (N, ldb out).
  run(CUBLAS_OP_N, CUBLAS_OP_N, per_expert(rows, [&](int64_t e, int64_t first, int64_t n) {
        return Problem{as_int(in, "in"), as_int(n, "rows"), as_int(out, "out"), as_int(in, "in"), as_int(out, "out"),
                       as_int(in, "in"), w + e * out * in, dy + first * out, dx + first * in};
      }), CUDA_R_16BF, 0.0f);
}

void GroupedGemm::wgrad(const bf16* dy, const bf16* x, Fp32OrBf16 dw, std::span<const int64_t> rows, int64_t in,
                        int64_t out, bool accumulate) {
  const size_t per_expert_elems = static_cast<size_t>(out * in);
  if (!accumulate) {  // an expert without rows has a zero gradient
    for (size_t e = 0; e < rows.size(); ++e) {
      if (rows[e] == 0) UB_CUDA_CHECK(cudaMemsetAsync(dw.at(e * per_expert_elems).data, 0, per_expert_elems * dw.element_bytes(), stream_));
    }
  }
  // m = in, n = out, k = rows; A = X (N, lda in), B = dY (T, ldb out).
  run(CUBLAS_OP_N, CUBLAS_OP_T, per_expert(rows, [&](int64_t e, int64_t first, int64_t n) {
        return Problem{as_int(in, "in"), as_int(out, "out"), as_int(n, "rows"), as_int(in, "in"), as_int(out, "out"),
                       as_int(in, "in"), x + first * in, dy + first * out, dw.at(static_cast<size_t>(e) * per_expert_elems).data};
      }), dw.is_bf16() ? CUDA_R_16BF : CUDA_R_32F, accumulate ? 1.0f : 0.0f);
}

}  // namespace ub::gpu
