// The experts' products through cuBLAS, grouped or per expert as timed; see grouped_gemm.hpp.
#include "gpu/grouped_gemm.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

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

std::string GroupedGemm::Product::name() const {
  const char* what = tb == CUBLAS_OP_T ? "wgrad" : ta == CUBLAS_OP_T ? "forward" : "dgrad";
  return fmt::format("{} {}x{}{}", what, in, out, c_type == CUDA_R_32F ? " fp32" : "");
}

bool GroupedGemm::run_grouped(const Product& product, const std::vector<Problem>& problems, float beta) {
  const size_t g = problems.size();
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
  const std::vector<cublasOperation_t> tas(g, product.ta), tbs(g, product.tb);
  const std::vector<float> alphas(g, 1.0f), betas(g, beta);
  const cublasStatus_t st = cublasGemmGroupedBatchedEx(
      handle_, tas.data(), tbs.data(), m.data(), n.data(), k.data(), alphas.data(), a, CUDA_R_16BF, lda.data(), a + g,
      CUDA_R_16BF, ldb.data(), betas.data(), const_cast<void* const*>(a + 2 * g), product.c_type, ldc.data(),
      static_cast<int>(g), size.data(), CUBLAS_COMPUTE_32F);
  if (st == CUBLAS_STATUS_NOT_SUPPORTED) return false;
  UB_CUBLAS_API_CHECK(st);
  return true;
}

void GroupedGemm::run_per_expert(const Product& product, const std::vector<Problem>& problems, float beta) {
  const float alpha = 1.0f;
  for (const Problem& p : problems) {
    UB_CUBLAS_API_CHECK(cublasGemmEx(handle_, product.ta, product.tb, p.m, p.n, p.k, &alpha, p.a, CUDA_R_16BF, p.lda, p.b,
                                     CUDA_R_16BF, p.ldb, &beta, p.c, product.c_type, p.ldc, CUBLAS_COMPUTE_32F,
                                     CUBLAS_GEMM_DEFAULT));
  }
}

GroupedGemm::Way GroupedGemm::choose(const Product& product, const std::vector<Problem>& problems) {
  if (!run_grouped(product, problems, 0.0f)) {
    why_[product] = "no grouped kernel for its types";
    run_per_expert(product, problems, 0.0f);
    return Way::per_expert;
  }
  run_per_expert(product, problems, 0.0f);  // both ways have run once (modules loaded, heuristics asked)
  const Event start, mid, end;
  start.record(stream_);
  run_grouped(product, problems, 0.0f);
  mid.record(stream_);
  run_per_expert(product, problems, 0.0f);
  end.record(stream_);
  UB_CUDA_CHECK(cudaEventSynchronize(end.get()));
  const float grouped = mid.since(start), per_expert = end.since(mid);
  why_[product] = fmt::format("{:.3f} ms grouped, {:.3f} ms per expert, {} experts", grouped, per_expert, problems.size());
  if (per_expert < grouped) return Way::per_expert;
  run_grouped(product, problems, 0.0f);  // the output as every later use writes it
  return Way::grouped;
}

void GroupedGemm::run(const Product& product, const std::vector<Problem>& problems, float beta) {
  if (problems.empty()) return;
  if (const auto it = ways_.find(product); it != ways_.end()) {
    if (it->second == Way::per_expert || !run_grouped(product, problems, beta)) run_per_expert(product, problems, beta);
    return;
  }
  if (beta == 0.0f) {
    ways_[product] = choose(product, problems);
  } else if (!run_grouped(product, problems, beta)) {  // adding to its output: it cannot run twice to be timed
    ways_[product] = Way::per_expert, why_[product] = "no grouped kernel for its types";
    run_per_expert(product, problems, beta);
  }
}

std::string GroupedGemm::library() const {
  std::vector<std::string> parts;
  for (const auto& [product, way] : ways_) {
    parts.push_back(fmt::format("{}: {} ({})", product.name(),
                                way == Way::grouped ? "cublasGemmGroupedBatchedEx" : "cublasGemmEx per expert",
                                why_.at(product)));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

void GroupedGemm::forward(const bf16* x, const bf16* w, bf16* y, std::span<const int64_t> rows, int64_t in, int64_t out) {
  // Column-major: m = out, n = rows, k = in; A = W (T), B = X (N).
  run({CUBLAS_OP_T, CUBLAS_OP_N, CUDA_R_16BF, in, out}, per_expert(rows, [&](int64_t e, int64_t first, int64_t n) {
        return Problem{as_int(out, "out"), as_int(n, "rows"), as_int(in, "in"), as_int(in, "in"), as_int(in, "in"),
                       as_int(out, "out"), w + e * out * in, x + first * in, y + first * out};
      }), 0.0f);
}

void GroupedGemm::dgrad(const bf16* dy, const bf16* w, bf16* dx, std::span<const int64_t> rows, int64_t in, int64_t out) {
  // m = in, n = rows, k = out; A = W (N, lda in), B = dY (N, ldb out).
  run({CUBLAS_OP_N, CUBLAS_OP_N, CUDA_R_16BF, in, out}, per_expert(rows, [&](int64_t e, int64_t first, int64_t n) {
        return Problem{as_int(in, "in"), as_int(n, "rows"), as_int(out, "out"), as_int(in, "in"), as_int(out, "out"),
                       as_int(in, "in"), w + e * out * in, dy + first * out, dx + first * in};
      }), 0.0f);
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
  run({CUBLAS_OP_N, CUBLAS_OP_T, dw.is_bf16() ? CUDA_R_16BF : CUDA_R_32F, in, out}, per_expert(rows, [&](int64_t e, int64_t first, int64_t n) {
        return Problem{as_int(in, "in"), as_int(out, "out"), as_int(n, "rows"), as_int(in, "in"), as_int(out, "out"),
                       as_int(in, "in"), x + first * in, dy + first * out, dw.at(static_cast<size_t>(e) * per_expert_elems).data};
      }), accumulate ? 1.0f : 0.0f);
}

}  // namespace ub::gpu
