// cuBLASLt plans, operands and validation; see gemm.hpp.
#include "gpu/gemm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "gpu/cuda_elem.hpp"
#include "gpu/kernels/fill.cuh"
#include "gpu/kernels/gemm_check.cuh"

namespace ub::gpu {

namespace {

bool block_scaled(Dtype d) { return d == Dtype::mxfp8 || d == Dtype::nvfp4; }

// Block-scale tensor bytes for one operand of `rows` x `k` (cuBLASLt pads to 128 x 4 tiles).
size_t block_scale_bytes(Dtype d, int64_t rows, int64_t k) {
  const int64_t block = d == Dtype::nvfp4 ? 16 : 32;
  const int64_t r = (rows + 127) / 128 * 128;
  const int64_t c = ((k / block) + 3) / 4 * 4;
  return static_cast<size_t>(r * c);
}

// 1.0 in each scale encoding: ue8m0 exponent 127, e4m3 0x38.
unsigned char scale_one(Dtype d) { return d == Dtype::nvfp4 ? 0x38 : 127; }

}  // namespace

Elem gemm_input_elem(Dtype d) {
  switch (d) {
    case Dtype::fp32:
    case Dtype::tf32: return Elem::f32;
    case Dtype::fp16: return Elem::f16;
    case Dtype::fp8:
    case Dtype::mxfp8: return Elem::e4m3;
    case Dtype::nvfp4: return Elem::e2m1;
    default: return Elem::bf16;
  }
}

Elem gemm_output_elem(Dtype d) {
  switch (d) {
    case Dtype::fp32:
    case Dtype::tf32: return Elem::f32;
    case Dtype::fp16: return Elem::f16;
    default: return Elem::bf16;
  }
}

std::optional<std::string> gemm_shape_problem(Dtype d, const GemmShape& s) {
  if (s.m <= 0 || s.n <= 0 || s.k <= 0) {
    return fmt::format("shape {}x{}x{}: sizes must be positive", s.m, s.n, s.k);
  }
  const int64_t align = d == Dtype::nvfp4 ? 32 : (d == Dtype::fp8 || d == Dtype::mxfp8) ? 16 : 1;
  if (align > 1 && (s.m % align || s.n % align || s.k % align)) {
    return fmt::format("{} needs M, N and K to be multiples of {} (got {}x{}x{})", to_string(d),
                       align, s.m, s.n, s.k);
  }
  return std::nullopt;
}

GemmOperands::GemmOperands(Dtype dt, const GemmShape& s, uint64_t seed, cudaStream_t stream)
    : dtype(dt),
      shape(s),
      a(buffer_bytes(gemm_input_elem(dt), static_cast<size_t>(s.m * s.k))),
      b(buffer_bytes(gemm_input_elem(dt), static_cast<size_t>(s.n * s.k))),
      d(buffer_bytes(gemm_output_elem(dt), static_cast<size_t>(s.m * s.n))) {
  const Elem in = gemm_input_elem(dt);
  fill_normal(a.get(), in, static_cast<size_t>(s.m * s.k), seed, 1.0f, stream);
  fill_normal(b.get(), in, static_cast<size_t>(s.n * s.k), seed + 1, 1.0f, stream);
  randomise_output(seed + 2, stream);
  if (dt == Dtype::fp8) {
    scale_a = DeviceBuffer(sizeof(float));
    scale_b = DeviceBuffer(sizeof(float));
    const float one = 1.0f;
    UB_CUDA_CHECK(cudaMemcpyAsync(scale_a.get(), &one, sizeof one, cudaMemcpyHostToDevice, stream));
    UB_CUDA_CHECK(cudaMemcpyAsync(scale_b.get(), &one, sizeof one, cudaMemcpyHostToDevice, stream));
    UB_CUDA_CHECK(cudaStreamSynchronize(stream));  // `one` lives on this stack frame
  } else if (block_scaled(dt)) {
    scale_a = DeviceBuffer(block_scale_bytes(dt, s.m, s.k));
    scale_b = DeviceBuffer(block_scale_bytes(dt, s.n, s.k));
    fill_constant_bytes(scale_a.get(), scale_one(dt), scale_a.bytes(), stream);
    fill_constant_bytes(scale_b.get(), scale_one(dt), scale_b.bytes(), stream);
  }
}

void GemmOperands::randomise_output(uint64_t seed, cudaStream_t stream) const {
  fill_normal(d.get(), gemm_output_elem(dtype), static_cast<size_t>(shape.m * shape.n), seed, 1.0f,
              stream);
}

namespace {

MatmulProblem gemm_problem(const GemmOperands& ops) {
  const Dtype dt = ops.dtype;
  const GemmShape& s = ops.shape;
  const cudaDataType_t in = cuda_data_type(gemm_input_elem(dt)), out = cuda_data_type(gemm_output_elem(dt));
  MatmulProblem p{MatmulDesc(dt == Dtype::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F),
                  MatrixLayout(in, s.k, s.m, s.k), MatrixLayout(in, s.k, s.n, s.k), MatrixLayout(out, s.m, s.n, s.m),
                  MatrixLayout(out, s.m, s.n, s.m)};
  p.op.set(CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
  p.op.set(CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
  if (dt == Dtype::fp8 || block_scaled(dt)) {
    p.op.set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, ops.scale_a.get());
    p.op.set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, ops.scale_b.get());
  }
  if (block_scaled(dt)) {
    const int32_t mode = dt == Dtype::nvfp4 ? CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3
                                            : CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0;
    p.op.set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, mode);
    p.op.set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, mode);
  }
  return p;
}

AlgoInfo describe(const cublasLtMatmulHeuristicResult_t& r, int rank) {
  AlgoInfo info;
  info.heuristic_rank = rank;
  info.workspace = r.workspaceSize;
  info.waves = r.wavesCount;
  auto get = [&](cublasLtMatmulAlgoConfigAttributes_t attr, int& v) {
    int32_t x = -1;
    size_t written = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&r.algo, attr, &x, sizeof x, &written) == CUBLAS_STATUS_SUCCESS) v = x;
  };
  get(CUBLASLT_ALGO_CONFIG_ID, info.id);
  get(CUBLASLT_ALGO_CONFIG_TILE_ID, info.tile);
  get(CUBLASLT_ALGO_CONFIG_STAGES_ID, info.stages);
  get(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, info.split_k);
  get(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, info.reduction);
  get(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, info.swizzle);
  get(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, info.custom);
  return info;
}

}  // namespace

GemmPlan::GemmPlan(const CublasLt& lt, const GemmOperands& ops, size_t workspace_bytes, int top_k)
    : lt_(lt), problem_(gemm_problem(ops)), results_(heuristic_algorithms(lt, problem_, workspace_bytes, top_k)) {
  if (results_.empty()) {
    throw WorkError(fmt::format("cuBLASLt has no algorithm for {} {}x{}x{}", to_string(ops.dtype), ops.shape.m,
                                ops.shape.n, ops.shape.k));
  }
  for (size_t i = 0; i < results_.size(); ++i) infos_.push_back(describe(results_[i], static_cast<int>(i)));
}

void GemmPlan::run(int algo, const GemmOperands& ops, const DeviceBuffer& workspace,
                   cudaStream_t stream) const {
  const float alpha = 1.0f, beta = 0.0f;
  const auto& r = results_.at(static_cast<size_t>(algo));
  UB_CUBLAS_CHECK(cublasLtMatmul(lt_.get(), problem_.op.get(), &alpha, ops.a.get(), problem_.a.get(), ops.b.get(),
                                 problem_.b.get(), &beta, ops.d.get(), problem_.c.get(), ops.d.get(), problem_.d.get(),
                                 &r.algo, workspace.get(), workspace.bytes(), stream));
}

GemmCheck check_gemm(const GemmOperands& ops, int samples, uint64_t seed, cudaStream_t stream,
                     bool corrupt_one) {
  const GemmShape& s = ops.shape;
  std::vector<int64_t> rows, cols;
  // The four corners, then uniform random elements.
  for (int64_t i : {int64_t{0}, s.m - 1}) {
    for (int64_t j : {int64_t{0}, s.n - 1}) {
      rows.push_back(i);
      cols.push_back(j);
    }
  }
  std::mt19937_64 rng(seed);
  while (static_cast<int>(rows.size()) < samples) {
    rows.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(s.m)));
    cols.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(s.n)));
  }
  const int count = static_cast<int>(rows.size());
  const Elem out_elem = gemm_output_elem(ops.dtype);
  if (corrupt_one) {
    // Overwrite the sample's output with the value of a neighbouring element's reference + 1.
    const size_t bytes = static_cast<size_t>(bytes_per_element(out_elem));
    std::vector<unsigned char> garbage(bytes, 0x3F);  // about 0.75 in bf16, 1.5e-5 as f16
    const size_t offset = static_cast<size_t>(rows[5 % count] + cols[5 % count] * s.m) * bytes;
    UB_CUDA_CHECK(cudaMemcpyAsync(ops.d.as<unsigned char>() + offset, garbage.data(), bytes,
                                  cudaMemcpyHostToDevice, stream));
    UB_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  DeviceBuffer d_rows(sizeof(int64_t) * rows.size()), d_cols(sizeof(int64_t) * cols.size());
  DeviceBuffer d_out(sizeof(GemmSampleResult) * rows.size());
  UB_CUDA_CHECK(cudaMemcpyAsync(d_rows.get(), rows.data(), d_rows.bytes(), cudaMemcpyHostToDevice, stream));
  UB_CUDA_CHECK(cudaMemcpyAsync(d_cols.get(), cols.data(), d_cols.bytes(), cudaMemcpyHostToDevice, stream));
  gemm_reference_samples(ops.a.get(), ops.b.get(), gemm_input_elem(ops.dtype), ops.d.get(),
                         out_elem, s.m, s.n, s.k, d_rows.as<int64_t>(), d_cols.as<int64_t>(), count,
                         d_out.as<GemmSampleResult>(), stream);
  std::vector<GemmSampleResult> res(rows.size());
  UB_CUDA_CHECK(cudaMemcpyAsync(res.data(), d_out.get(), d_out.bytes(), cudaMemcpyDeviceToHost, stream));
  UB_CUDA_CHECK(cudaStreamSynchronize(stream));

  // Tolerance: the output's rounding (relative to |ref|) plus the compute's input rounding and
  // fp32 accumulation (relative to sum |a*b|). Inputs are exactly what the GEMM read, so input
  // quantisation itself is not an error.
  const double out_eps = out_elem == Elem::bf16 ? 0x1p-8 : out_elem == Elem::f16 ? 0x1p-10 : 0x1p-22;
  // tf32 rounds inputs to 10 mantissa bits; Hopper's fp8 tensor cores accumulate with about 14
  // bits of mantissa (not full fp32), so an fp8 product is held to 2^-13 of sum |a*b|.
  const double compute_eps = (ops.dtype == Dtype::tf32 ? 0x1p-10 : 0.0) +
                             (ops.dtype == Dtype::fp8 || ops.dtype == Dtype::mxfp8 ||
                                      ops.dtype == Dtype::nvfp4
                                  ? 0x1p-13
                                  : 0.0) +
                             1e-5;
  GemmCheck c;
  c.samples = count;
  for (int i = 0; i < count; ++i) {
    const auto& r = res[static_cast<size_t>(i)];
    if (std::isnan(r.got) || std::isinf(r.got)) {
      ++c.nans;
      ++c.failures;
      if (c.detail.empty()) c.detail = fmt::format("D({}, {}) = {} (reference {:.6g})", rows[i], cols[i], r.got, r.reference);
      continue;
    }
    const double tol = out_eps * std::fabs(r.reference) + compute_eps * r.abs_sum + 1e-30;
    const double ratio = std::fabs(r.got - r.reference) / tol;
    if (ratio > c.worst_ratio) {
      c.worst_ratio = ratio;
      c.detail = fmt::format("D({}, {}) = {:.6g}, reference {:.6g}, tolerance {:.3g}", rows[i],
                             cols[i], r.got, r.reference, tol);
    }
    if (ratio > 1.0) ++c.failures;
  }
  c.ok = c.failures == 0;
  return c;
}

}  // namespace ub::gpu
