// The experts' products through cuBLAS, grouped or per expert as timed; see grouped_gemm.hpp.
#include "gpu/grouped_gemm.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
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

GroupedGemm::GroupedGemm() {
  UB_CUBLAS_API_CHECK(cublasCreate(&handle_));
  for (size_t i = 0; i < kSideStreams; ++i) {
    UB_CUBLAS_API_CHECK(cublasCreate(&side_handles_[i]));
    UB_CUBLAS_API_CHECK(cublasSetStream(side_handles_[i], sides_[i].get()));
  }
}

GroupedGemm::~GroupedGemm() {
  for (cublasHandle_t h : side_handles_) {
    if (h) cublasDestroy(h);
  }
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

namespace {

std::string way_name(int64_t way) {
  if (way == GroupedGemm::kAllGrouped) return "cublasGemmGroupedBatchedEx";
  if (way == 0) return "cublasGemmEx per expert";
  return fmt::format("cublasGemmEx per expert from {} rows, cublasGemmGroupedBatchedEx below", way);
}

}  // namespace

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

void GroupedGemm::run_per_expert(const Product& product, std::vector<Problem> problems, float beta, bool forked) {
  if (problems.empty()) return;
  if (!forked) fork_.record(stream_);
  std::stable_sort(problems.begin(), problems.end(), [](const Problem& a, const Problem& b) { return a.rows > b.rows; });
  const float alpha = 1.0f;
  const auto gemm = [&](cublasHandle_t handle, const Problem& p) {
    UB_CUBLAS_API_CHECK(cublasGemmEx(handle, product.ta, product.tb, p.m, p.n, p.k, &alpha, p.a, CUDA_R_16BF, p.lda,
                                     p.b, CUDA_R_16BF, p.ldb, &beta, p.c, product.c_type, p.ldc, CUBLAS_COMPUTE_32F,
                                     CUBLAS_GEMM_DEFAULT));
  };
  // A product whose output alone has a tile for every SM (132 SMs of 128 x 256 outputs, Hopper's
  // largest tile) gains nothing beside another and shares the L2 with it: those run one after
  // another on the stream itself; the smaller ones spread over the side streams.
  constexpr int64_t kFillsTheGpu = int64_t{132} * 128 * 256;
  std::array<int64_t, kSideStreams> load{};
  std::array<bool, kSideStreams> used{};
  for (const Problem& p : problems) {
    if (int64_t{p.m} * p.n >= kFillsTheGpu) {
      gemm(handle_, p);
      continue;
    }
    const auto i = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    if (!used[i]) UB_CUDA_CHECK(cudaStreamWaitEvent(sides_[i].get(), fork_.get()));
    used[i] = true, load[i] += p.rows;
    gemm(side_handles_[i], p);
  }
  for (size_t i = 0; i < kSideStreams; ++i) {
    if (!used[i]) continue;
    joins_[i].record(sides_[i].get());
    UB_CUDA_CHECK(cudaStreamWaitEvent(stream_, joins_[i].get()));
  }
}

bool GroupedGemm::run_way(const Product& product, const std::vector<Problem>& problems, float beta, Way way) {
  std::vector<Problem> alone, grouped;
  for (const Problem& p : problems) (p.rows >= way ? alone : grouped).push_back(p);
  if (alone.empty()) return run_grouped(product, grouped, beta);
  // Split: the grouped call first, so the GPU works while the host issues the lone experts (each
  // cublasGemmEx costs the host about as long as a small expert's kernel runs) on the side
  // streams; the stream then waits for all.
  fork_.record(stream_);  // the lone experts run beside the grouped call
  if (!grouped.empty() && !run_grouped(product, grouped, beta)) alone.insert(alone.end(), grouped.begin(), grouped.end());
  run_per_expert(product, std::move(alone), beta, true);
  return true;
}

GroupedGemm::Way GroupedGemm::choose(const Product& product, const std::vector<Problem>& problems) {
  if (!run_way(product, problems, 0.0f, kAllGrouped)) {
    why_[product] = "no grouped kernel for its types";
    run_per_expert(product, problems, 0.0f);
    return 0;
  }
  // The candidates: all grouped, all alone, and splits at row counts that part the experts
  // differently (a split that leaves one side empty is one of the first two).
  std::vector<Way> ways{kAllGrouped, 0};
  for (const Way from : {256, 512, 1024, 2048, 4096}) {
    const auto alone = std::count_if(problems.begin(), problems.end(), [&](const Problem& p) { return p.rows >= from; });
    const bool differs = alone > 0 && alone < static_cast<std::ptrdiff_t>(problems.size());
    const bool repeats = std::any_of(ways.begin() + 2, ways.end(), [&](Way w) {
      return std::count_if(problems.begin(), problems.end(), [&](const Problem& p) { return p.rows >= w; }) == alone;
    });
    if (differs && !repeats) ways.push_back(from);
  }
  for (const Way way : ways) run_way(product, problems, 0.0f, way);  // each has run once (modules loaded, heuristics asked)
  std::vector<Event> marks(ways.size() + 1);
  marks[0].record(stream_);
  for (size_t i = 0; i < ways.size(); ++i) {
    run_way(product, problems, 0.0f, ways[i]);
    marks[i + 1].record(stream_);
  }
  UB_CUDA_CHECK(cudaEventSynchronize(marks.back().get()));
  size_t best = 0;
  std::vector<std::string> times;
  for (size_t i = 0; i < ways.size(); ++i) {
    const float ms = marks[i + 1].since(marks[i]);
    if (ms < marks[best + 1].since(marks[best])) best = i;
    times.push_back(ways[i] == kAllGrouped ? fmt::format("{:.3f} ms grouped", ms)
                    : ways[i] == 0         ? fmt::format("{:.3f} ms per expert", ms)
                                           : fmt::format("{:.3f} ms split at {} rows", ms, ways[i]));
  }
  why_[product] = fmt::format("{}, {} experts", fmt::join(times, ", "), problems.size());
  run_way(product, problems, 0.0f, ways[best]);  // the output as every later use writes it
  return ways[best];
}

void GroupedGemm::run(const Product& product, const std::vector<Problem>& problems, float beta) {
  if (problems.empty()) return;
  if (always_) {
    if (!run_way(product, problems, beta, *always_)) run_per_expert(product, problems, beta);
    ways_[product] = *always_, why_[product] = "set, untimed";
    return;
  }
  if (const auto it = ways_.find(product); it != ways_.end()) {
    if (!run_way(product, problems, beta, it->second)) run_per_expert(product, problems, beta);
    return;
  }
  if (beta == 0.0f) {
    ways_[product] = choose(product, problems);
  } else if (!run_way(product, problems, beta, kAllGrouped)) {  // adding to its output: it cannot run twice to be timed
    ways_[product] = 0, why_[product] = "no grouped kernel for its types";
    run_per_expert(product, problems, beta);
  }
}

std::string GroupedGemm::library() const {
  std::vector<std::string> parts;
  for (const auto& [product, way] : ways_) {
    parts.push_back(fmt::format("{}: {} ({})", product.name(), way_name(way), why_.at(product)));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

void GroupedGemm::forward(const bf16* x, const bf16* w, bf16* y, std::span<const int64_t> rows, int64_t in, int64_t out) {
  // Column-major: m = out, n = rows, k = in; A = W (T), B = X (N).
  run({CUBLAS_OP_T, CUBLAS_OP_N, CUDA_R_16BF, in, out}, per_expert(rows, [&](int64_t e, int64_t first, int64_t n) {
        return Problem{n, as_int(out, "out"), as_int(n, "rows"), as_int(in, "in"), as_int(in, "in"), as_int(in, "in"),
                       as_int(out, "out"), w + e * out * in, x + first * in, y + first * out};
      }), 0.0f);
}

void GroupedGemm::dgrad(const bf16* dy, const bf16* w, bf16* dx, std::span<const int64_t> rows, int64_t in, int64_t out) {
  // m = in, n = rows, k = out; A = W (N, lda in), B = dY (N, ldb out).
  run({CUBLAS_OP_N, CUBLAS_OP_N, CUDA_R_16BF, in, out}, per_expert(rows, [&](int64_t e, int64_t first, int64_t n) {
        return Problem{n, as_int(in, "in"), as_int(n, "rows"), as_int(out, "out"), as_int(in, "in"), as_int(out, "out"),
                       as_int(in, "in"), w + e * out * in, dy + first * out, dx + first * in};
      }), 0.0f);
}

void GroupedGemm::wgrad(const bf16* dy, const bf16* x, Fp32OrBf16 dw, std::span<const int64_t> rows, int64_t in,
                        int64_t out, bool accumulate) {
  const size_t per_expert_elems = static_cast<size_t>(out * in);
  if (!accumulate) {  // an expert without rows has a zero gradient: one memset per run of them
    for (size_t e = 0; e < rows.size();) {
      size_t end = e;
      while (end < rows.size() && rows[end] == 0) ++end;
      if (end > e) {
        UB_CUDA_CHECK(cudaMemsetAsync(dw.at(e * per_expert_elems).data, 0, (end - e) * per_expert_elems * dw.element_bytes(), stream_));
      }
      e = std::max(end, e + 1);
    }
  }
  // m = in, n = out, k = rows; A = X (N, lda in), B = dY (T, ldb out).
  run({CUBLAS_OP_N, CUBLAS_OP_T, dw.is_bf16() ? CUDA_R_16BF : CUDA_R_32F, in, out}, per_expert(rows, [&](int64_t e, int64_t first, int64_t n) {
        return Problem{n, as_int(in, "in"), as_int(out, "out"), as_int(n, "rows"), as_int(in, "in"), as_int(out, "out"),
                       as_int(in, "in"), x + first * in, dy + first * out, dw.at(static_cast<size_t>(e) * per_expert_elems).data};
      }), accumulate ? 1.0f : 0.0f);
}

}  // namespace ub::gpu
