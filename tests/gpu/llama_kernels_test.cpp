// Each kernel of the training engine, forward and backward, against its CPU reference
// (model/reference/llama_ops_cpu.hpp) on random inputs; inputs are rounded to bf16 first so both
// sides see the same numbers. Errors are relative L2 norms; NaN never passes.
#include <cuda_bf16.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "facts/model_shape.hpp"
#include "gpu/cuda_raii.hpp"
#include "gpu/kernels/llama_ops.cuh"
#include "model/counter_rng.hpp"
#include "model/reference/llama_cpu.hpp"
#include "model/reference/llama_ops_cpu.hpp"
#include "model/rope.hpp"
#include "device_vectors.hpp"
#include "require_gpu.hpp"

namespace ub::gpu {
namespace {

constexpr double kBf16Out = 8e-3;  // one bf16 rounding of each output is ~2e-3 relative
constexpr double kF32Out = 1e-5;

class LlamaKernels : public ::testing::Test {
 protected:
  void SetUp() override { UB_REQUIRE_GPU(); }
};

// Shapes: (rows, hidden) covering the backward's three widths (8, 16, 32 columns per thread),
// chunks of rows that do not divide the rows, and one block per few rows as well as many.
class RmsNormKernels : public LlamaKernels, public ::testing::WithParamInterface<std::pair<int64_t, int64_t>> {};

TEST_P(RmsNormKernels, ForwardAndBackward) {
  const auto [T, H] = GetParam();
  const Vec x = random_vec(T * H, 1, 2.0), w = random_vec(H, 2, 1.0), dy = random_vec(T * H, 3), dres = random_vec(T * H, 4);
  const cpu_ops::Norm ref = cpu_ops::rmsnorm(x, w.data(), T, H, 1e-5);
  Vec dw_ref(H, 0.0);
  Vec dx_ref = cpu_ops::rmsnorm_backward(dy, x, w.data(), ref.rstd, dw_ref.data(), T, H);
  for (size_t i = 0; i < dx_ref.size(); ++i) dx_ref[i] += dres[i];

  auto dx = upload_bf16(x), dw = upload_bf16(w), ddy = upload_bf16(dy), dd = upload_bf16(dres);
  DeviceBuffer y(T * H * 2), rstd(T * 4), gw(H * 4);
  UB_CUDA_CHECK(cudaMemset(gw.get(), 0, gw.bytes()));
  rmsnorm_forward(dx.as<bf16>(), dw.as<bf16>(), y.as<bf16>(), rstd.as<float>(), T, H, 1e-5, nullptr);
  // Residual gradient in place, as the engine runs it.
  rmsnorm_backward(ddy.as<bf16>(), dx.as<bf16>(), dw.as<bf16>(), rstd.as<float>(), dd.as<bf16>(), dd.as<bf16>(), gw.as<float>(), T, H, nullptr);
  UB_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_LT(rel_l2(download_bf16(y, T * H), ref.y), kBf16Out);
  EXPECT_LT(rel_l2(download_f32(rstd, T), ref.rstd), kF32Out);
  EXPECT_LT(rel_l2(download_bf16(dd, T * H), dx_ref), kBf16Out);
  EXPECT_LT(rel_l2(download_f32(gw, H), dw_ref), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Shapes, RmsNormKernels,
                         ::testing::Values(std::pair<int64_t, int64_t>{37, 320}, std::pair<int64_t, int64_t>{4099, 4096},
                                           std::pair<int64_t, int64_t>{37, 8200}, std::pair<int64_t, int64_t>{5, 17000}));

// QK-norm in place in the projections: head dims of 64, 128 and 256 (a lane per 8 columns, some
// lanes idle), grouped-query heads, more heads than one wave of backward blocks walks.
class QkNormKernels : public LlamaKernels, public ::testing::WithParamInterface<int64_t> {};

TEST_P(QkNormKernels, ForwardAndBackwardInPlace) {
  const int64_t d = GetParam(), T = 300, nq = 8, nk = 2;
  const cpu_ops::HeadDims h{T, T, nq, nk, d};
  const int64_t width = h.width(), heads = T * (nq + nk);
  const Vec qkv = random_vec(T * width, 11, 2.0), qw = random_vec(d, 12, 1.0), kw = random_vec(d, 13, 1.0),
            dy = random_vec(T * width, 14);
  const cpu_ops::QkNorm ref = cpu_ops::qk_norm(qkv, qw.data(), kw.data(), h, 1e-6);
  Vec dqw_ref(static_cast<size_t>(d), 0.0), dkw_ref(static_cast<size_t>(d), 0.0);
  const Vec dx_ref = cpu_ops::qk_norm_backward(dy, qkv, qw.data(), kw.data(), ref, dqw_ref.data(), dkw_ref.data(), h);
  Vec rstd_ref;  // the kernel's order: token after token, its query heads, then its key heads
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t j = 0; j < nq; ++j) rstd_ref.push_back(ref.q_rstd[static_cast<size_t>(t * nq + j)]);
    for (int64_t j = 0; j < nk; ++j) rstd_ref.push_back(ref.k_rstd[static_cast<size_t>(t * nk + j)]);
  }
  auto x = upload_bf16(qkv), wq = upload_bf16(qw), wk = upload_bf16(kw), g = upload_bf16(dy);
  DeviceBuffer raw(static_cast<size_t>(heads * d) * 2), rstd(static_cast<size_t>(heads) * 4), gq(static_cast<size_t>(d) * 4),
      gk(static_cast<size_t>(d) * 4);
  UB_CUDA_CHECK(cudaMemset(gq.get(), 0, gq.bytes()));
  UB_CUDA_CHECK(cudaMemset(gk.get(), 0, gk.bytes()));
  qk_norm_forward(x.as<bf16>(), wq.as<bf16>(), wk.as<bf16>(), raw.as<bf16>(), rstd.as<float>(), T, nq, nk, d, 1e-6, nullptr);
  qk_norm_backward(g.as<bf16>(), raw.as<bf16>(), wq.as<bf16>(), wk.as<bf16>(), rstd.as<float>(), gq.as<float>(),
                   gk.as<float>(), T, nq, nk, d, nullptr);
  UB_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_LT(rel_l2(download_bf16(x, T * width), ref.y), kBf16Out);  // the values pass through
  EXPECT_LT(rel_l2(download_f32(rstd, heads), rstd_ref), kF32Out);
  EXPECT_LT(rel_l2(download_bf16(g, T * width), dx_ref), kBf16Out);
  EXPECT_LT(rel_l2(download_f32(gq, d), dqw_ref), 1e-5);
  EXPECT_LT(rel_l2(download_f32(gk, d), dkw_ref), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(HeadDims, QkNormKernels, ::testing::Values(int64_t{64}, int64_t{128}, int64_t{256}));

class RopeKernels : public LlamaKernels, public ::testing::WithParamInterface<int64_t> {};

// Head dim 32 runs the 16-byte path (eight pairs per thread), 24 the one-pair path.
TEST_P(RopeKernels, SplitAndJoinWithLlama3Scaling) {
  const int64_t head_dim = GetParam();
  ModelShape m;
  m.head_dim = head_dim, m.rope_theta = 500000;
  m.rope_scaling = RopeScaling{"llama3", 8.0, 1.0, 4.0, 64};
  const cpu_ops::HeadDims h{2 * 40, 40, 4, 2, head_dim};
  const RopeTable tab = rope_table(m, h.S);
  const Vec qkv = random_vec(static_cast<size_t>(h.T * h.width()), 5);
  const cpu_ops::Qkv ref = cpu_ops::rope_split(qkv, h, tab);
  const cpu_ops::Qkv grad{random_vec(ref.q.size(), 6), random_vec(ref.k.size(), 7), random_vec(ref.v.size(), 8)};
  const Vec dref = cpu_ops::rope_join_backward(grad, h, tab);

  auto d_qkv = upload_bf16(qkv), c = upload(tab.cos), s = upload(tab.sin);
  DeviceBuffer q(ref.q.size() * 2), k(ref.k.size() * 2), v(ref.v.size() * 2), out(qkv.size() * 2);
  rope_forward(d_qkv.as<bf16>(), c.as<float>(), s.as<float>(), q.as<bf16>(), k.as<bf16>(), v.as<bf16>(), h.T, h.S, h.nq, h.nk, h.d, nullptr);
  auto gq = upload_bf16(grad.q), gk = upload_bf16(grad.k), gv = upload_bf16(grad.v);
  rope_backward(gq.as<bf16>(), gk.as<bf16>(), gv.as<bf16>(), c.as<float>(), s.as<float>(), out.as<bf16>(), h.T, h.S, h.nq, h.nk, h.d, nullptr);
  UB_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_LT(rel_l2(download_bf16(q, ref.q.size()), ref.q), kBf16Out);
  EXPECT_LT(rel_l2(download_bf16(k, ref.k.size()), ref.k), kBf16Out);
  EXPECT_EQ(download_bf16(v, ref.v.size()), ref.v);  // a copy
  EXPECT_LT(rel_l2(download_bf16(out, dref.size()), dref), kBf16Out);
}

INSTANTIATE_TEST_SUITE_P(HeadDims, RopeKernels, ::testing::Values(int64_t{32}, int64_t{24}));

TEST_F(LlamaKernels, SwiGluForwardAndBackward) {
  const int64_t T = 29, I = 96;
  const Vec gu = random_vec(T * 2 * I, 9, 2.0), dh = random_vec(T * I, 10);
  const Vec h_ref = cpu_ops::swiglu(gu, T, I), dgu_ref = cpu_ops::swiglu_backward(dh, gu, T, I);
  auto d_gu = upload_bf16(gu), d_dh = upload_bf16(dh);
  DeviceBuffer h(T * I * 2), dgu(T * 2 * I * 2);
  swiglu_forward(d_gu.as<bf16>(), h.as<bf16>(), T, I, nullptr);
  swiglu_backward(d_dh.as<bf16>(), d_gu.as<bf16>(), dgu.as<bf16>(), T, I, nullptr);
  UB_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_LT(rel_l2(download_bf16(h, h_ref.size()), h_ref), kBf16Out);
  EXPECT_LT(rel_l2(download_bf16(dgu, dgu_ref.size()), dgu_ref), kBf16Out);
}

// Both paths: 16-byte loads (V % 8 == 0) and element by element.
class CrossEntropyKernel : public LlamaKernels, public ::testing::WithParamInterface<int64_t> {};

// 513 rows: more than one GPU has SMs, so blocks go through several rows each, some of them a
// sequence's last (no label).
TEST_P(CrossEntropyKernel, LossAndGradientInTwoChunks) {
  const int64_t B = 3, S = 171, T = B * S, V = GetParam();
  const Vec logits = random_vec(T * V, 11, 3.0);
  const auto tokens = synthetic_tokens(12, B, S, V);
  const cpu_ops::CrossEntropy ref = cpu_ops::cross_entropy(logits, tokens, T, S, V);
  auto z = upload_bf16(logits), tok = upload(tokens);
  DeviceBuffer rows(T * 4), loss(sizeof(double));
  // In two chunks of rows, as the engine's chunked loss runs it (the split inside a sequence).
  const int64_t first = 240, count = B * (S - 1);
  cross_entropy_forward_backward(z.as<bf16>(), tok.as<int32_t>(), rows.as<float>(), 0, first, S, V, count, nullptr);
  cross_entropy_forward_backward(z.as<bf16>() + first * V, tok.as<int32_t>(), rows.as<float>(), first, T - first, S, V,
                                 count, nullptr);
  sum_loss(rows.as<float>(), T, static_cast<double>(count), loss.as<double>(), nullptr);
  double got = 0;
  UB_CUDA_CHECK(cudaMemcpy(&got, loss.get(), sizeof got, cudaMemcpyDeviceToHost));
  EXPECT_NEAR(got, ref.loss, 1e-5 * ref.loss);
  EXPECT_LT(rel_l2(download_f32(rows, T), ref.row_loss), 1e-5);
  EXPECT_LT(rel_l2(download_bf16(z, T * V), ref.dlogits), kBf16Out);
}

INSTANTIATE_TEST_SUITE_P(Vocab, CrossEntropyKernel, ::testing::Values(int64_t{1000}, int64_t{1001}));

// The gradient rows are summed per token from the token index: repeated ids must add up, absent
// ids get zero rows (the buffer starts as garbage), fp32 or bf16, written or added to (tied).
void check_embedding(bool bf16_grad, bool accumulate) {
  const int64_t V = 300, H = 72, T = 200;  // ids below 50: each repeated, most rows absent
  const Vec table = random_vec(V * H, 13);
  const auto tokens = synthetic_tokens(14, 1, T, 50);
  const Vec dx = random_vec(T * H, 15);
  const Vec before = random_vec(V * H, 16);  // what the buffer holds: the lm_head's gradient when tied
  const Vec x_ref = cpu_ops::embedding(tokens, table.data(), H);
  Vec dt_ref = accumulate ? before : Vec(V * H, 0.0);
  cpu_ops::embedding_backward(tokens, dx, dt_ref.data(), H);
  const TokenIndex ix = index_tokens(tokens, V);
  auto d_table = upload_bf16(table), tok = upload(tokens), d_dx = upload_bf16(dx);
  auto order = upload(ix.order), starts = upload(ix.starts);
  DeviceBuffer x(T * H * 2);
  DeviceBuffer dt = bf16_grad ? upload_bf16(before) : upload_f32(before);
  embedding_forward(tok.as<int32_t>(), d_table.as<bf16>(), x.as<bf16>(), T, H, nullptr);
  const Fp32OrBf16 table_grad{dt.get(), bf16_grad ? Elem::bf16 : Elem::f32};
  embedding_backward(order.as<int32_t>(), starts.as<int32_t>(), d_dx.as<bf16>(), table_grad, accumulate, V, H, nullptr);
  UB_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(download_bf16(x, x_ref.size()), x_ref);
  const Vec got = bf16_grad ? download_bf16(dt, dt_ref.size()) : download_f32(dt, dt_ref.size());
  EXPECT_LT(rel_l2(got, dt_ref), bf16_grad ? kBf16Out : 1e-6);
  if (accumulate) return;
  size_t zero_rows = 0;
  for (int64_t v = 50; v < V; ++v) {
    bool zero = true;
    for (int64_t j = 0; j < H; ++j) zero = zero && got[static_cast<size_t>(v * H + j)] == 0.0;
    zero_rows += zero;
  }
  EXPECT_EQ(zero_rows, static_cast<size_t>(V - 50)) << "rows of absent tokens must be written as zero";
}

TEST_F(LlamaKernels, EmbeddingLookupAndGradientFp32) { check_embedding(false, false); }
TEST_F(LlamaKernels, EmbeddingGradientBf16) { check_embedding(true, false); }
TEST_F(LlamaKernels, EmbeddingGradientAddedToTheTiedLmHeads) { check_embedding(false, true); }
TEST_F(LlamaKernels, EmbeddingGradientBf16AddedToTheTiedLmHeads) { check_embedding(true, true); }

// AdamW with clipping over three steps, both precisions (fp32 gradients with master weights, bf16
// gradients in pure bf16, as the engine; fp32 gradients into bf16 state too), against
// adamw_cpu_step on the same gradient values.
void check_adamw(bool master, bool bf16_grads) {
  const size_t n = 5000;
  Vec p = random_vec(n, 16), m(n, 0.0), v(n, 0.0);
  AdamWParams o;
  o.lr = 1e-2, o.weight_decay = 0.1, o.max_grad_norm = 1.0;
  DeviceBuffer dp = upload_f32(p), w16(n * 2), mom(n * (master ? 4 : 2)), var(n * (master ? 4 : 2)), nsq(sizeof(double));
  if (master) {
    cast_to_bf16(dp.as<float>(), w16.as<bf16>(), n, nullptr);
  } else {
    w16 = upload_bf16(p);
  }
  UB_CUDA_CHECK(cudaMemset(mom.get(), 0, mom.bytes()));
  UB_CUDA_CHECK(cudaMemset(var.get(), 0, var.bytes()));
  for (int step = 1; step <= 3; ++step) {
    const Vec g = random_vec(n, 100 + static_cast<uint64_t>(step), 0.1);  // norm ~7: clipped; bf16 values
    auto dg = bf16_grads ? upload_bf16(g) : upload_f32(g);
    UB_CUDA_CHECK(cudaMemset(nsq.get(), 0, sizeof(double)));
    const ConstFp32OrBf16 grad{dg.get(), bf16_grads ? Elem::bf16 : Elem::f32};
    const Elem state = master ? Elem::f32 : Elem::bf16;
    accumulate_squares(grad, n, nsq.as<double>(), nullptr);
    adamw_step(master ? dp.as<float>() : nullptr, w16.as<bf16>(), grad, {mom.get(), state}, {var.get(), state}, n,
               nsq.as<double>(), o, step, nullptr);
    const double norm = adamw_cpu_step(p, m, v, g, o, step);
    double got_sq = 0;
    UB_CUDA_CHECK(cudaMemcpy(&got_sq, nsq.get(), sizeof got_sq, cudaMemcpyDeviceToHost));
    EXPECT_NEAR(std::sqrt(got_sq), norm, 1e-5 * norm);
  }
  UB_CUDA_CHECK(cudaDeviceSynchronize());
  // Master weights track the fp32 reference closely; pure bf16 within bf16 rounding of each step.
  if (master) {
    EXPECT_LT(rel_l2(download_f32(dp, n), p), 1e-6);
  }
  EXPECT_LT(rel_l2(download_bf16(w16, n), p), master ? 4e-3 : 8e-3);
}

TEST_F(LlamaKernels, AdamWWithMasterWeights) { check_adamw(true, false); }
TEST_F(LlamaKernels, AdamWPureBf16) { check_adamw(false, true); }
TEST_F(LlamaKernels, AdamWBf16StateFp32Gradients) { check_adamw(false, false); }

}  // namespace
}  // namespace ub::gpu
