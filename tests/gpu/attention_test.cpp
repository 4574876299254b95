// cuDNN fused attention on the real library: every supported configuration (dtype, causal or
// not, grouped / multi-head / multi-query, head dims 64, 128, 256, batch, packed documents)
// validates against the fp32 GPU reference; the GPU reference agrees with the CPU reference that
// CI tests; the check fails on a wrong or NaN result; packed documents equal the same documents
// run one by one; plans are built once per shape; unsupported shapes are refused before any work.
#include "gpu/attention.hpp"

#include <cuda_bf16.h>
#include <cudnn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "gpu/attention_buffers.hpp"
#include "gpu/attention_check.hpp"
#include "model/reference/attention_cpu.hpp"
#include "require_gpu.hpp"

namespace ub::gpu {
namespace {

// The problem's buffers, inputs random normal from `seed`.
struct Buffers : AttentionBuffers {
  Buffers(const AttentionProblem& p, uint64_t seed, cudaStream_t s) : AttentionBuffers(p, true) { fill_random(seed, s); }
};

class Attention : public ::testing::Test {
 protected:
  void SetUp() override {
    UB_REQUIRE_GPU();
    stream_ = std::make_unique<Stream>();
    attn_ = std::make_unique<CudnnAttention>();
    attn_->set_stream(stream_->get());
  }
  cudaStream_t s() const { return stream_->get(); }
  AttentionCheck run_and_check(const AttentionProblem& p, Buffers& b) {
    attn_->forward(p.sdpa(), b.tensors());
    attn_->backward(p.sdpa(), b.tensors());
    return check_attention(p, b.tensors(), true, 48, s());
  }
  std::unique_ptr<Stream> stream_;
  std::unique_ptr<CudnnAttention> attn_;
};

AttentionProblem problem(int64_t heads, int64_t kv_heads, int64_t head_dim, bool causal, Dtype dtype,
                         int64_t seqlen = 384, int64_t batch = 1, std::vector<int64_t> docs = {}) {
  AttentionProblem p;
  p.batch = batch, p.seqlen = seqlen, p.heads = heads, p.kv_heads = kv_heads, p.head_dim = head_dim;
  p.causal = causal, p.dtype = dtype, p.doc_lens = std::move(docs);
  return p;
}

// NMSE between two 16-bit device buffers of `a`'s size, and how many values are not finite.
std::pair<double, size_t> nmse_between(const DeviceBuffer& a, const DeviceBuffer& b) {
  std::vector<__nv_bfloat16> x(a.bytes() / 2), y(a.bytes() / 2);
  UB_CUDA_CHECK(cudaMemcpy(x.data(), a.get(), a.bytes(), cudaMemcpyDeviceToHost));
  UB_CUDA_CHECK(cudaMemcpy(y.data(), b.get(), a.bytes(), cudaMemcpyDeviceToHost));
  double err2 = 0, ref2 = 0;
  size_t bad = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double u = __bfloat162float(x[i]), w = __bfloat162float(y[i]);
    if (!std::isfinite(u) || !std::isfinite(w)) {
      ++bad;
      continue;
    }
    err2 += (u - w) * (u - w);
    ref2 += w * w;
  }
  return {ref2 > 0 ? err2 / ref2 : 1.0, bad};
}

TEST_F(Attention, EverySupportedConfigurationValidates) {
  std::vector<AttentionProblem> cases;
  for (int64_t d : {64, 128, 256}) {
    for (bool causal : {true, false}) {
      cases.push_back(problem(8, 2, d, causal, Dtype::bf16));  // grouped-query
      cases.push_back(problem(4, 4, d, causal, Dtype::bf16));  // multi-head
    }
  }
  cases.push_back(problem(4, 1, 128, true, Dtype::bf16));         // multi-query
  cases.push_back(problem(8, 2, 128, true, Dtype::fp16));
  cases.push_back(problem(8, 2, 64, false, Dtype::fp16));
  cases.push_back(problem(8, 2, 128, true, Dtype::bf16, 300, 3));  // batch, odd length
  cases.push_back(problem(8, 2, 128, true, Dtype::bf16, 1024, 2, {256, 256, 256, 256}));  // packed, equal
  // Packed documents of different lengths (ragged), one of a single token.
  cases.push_back(problem(8, 2, 128, true, Dtype::bf16, 1000, 1, {300, 124, 512, 64}));
  cases.push_back(problem(8, 2, 128, false, Dtype::bf16, 1000, 1, {300, 124, 512, 64}));
  cases.push_back(problem(4, 4, 64, true, Dtype::fp16, 384, 2, {1, 200, 183}));
  cases.push_back(problem(4, 1, 256, true, Dtype::bf16, 640, 1, {128, 512}));
  for (const AttentionProblem& p : cases) {
    if (p.ragged() && p.head_dim > 128 && cudnnGetVersion() < 91900) {
      // cuDNN 9.14 gets these gradients wrong (measured); the gate refuses before any work.
      EXPECT_THROW(attn_->prepare(p.sdpa(), true), UsageError);
      EXPECT_NO_THROW(attn_->prepare(p.sdpa(), false));  // its forward is right
      continue;
    }
    Buffers b(p, 11, s());
    const AttentionCheck c = run_and_check(p, b);
    const std::string what = testing::PrintToString(p.heads) + "/" + testing::PrintToString(p.kv_heads) +
                             " heads, d " + testing::PrintToString(p.head_dim) + (p.causal ? " causal " : " ") +
                             std::string(to_string(p.dtype)) + " s " + testing::PrintToString(p.seqlen) +
                             " docs " + testing::PrintToString(p.doc_lens);
    EXPECT_TRUE(c.ok()) << what << ": " << c.summary();
    ASSERT_EQ(c.tensors.size(), 5u);
    for (const TensorCheck& t : c.tensors) {
      EXPECT_GT(t.nmse, 0.0) << what << " " << t.name << ": no error at all is suspicious for 16-bit outputs";
      EXPECT_GT(t.max_ref, 0.0) << what << " " << t.name;
    }
  }
}

TEST_F(Attention, GpuReferenceAgreesWithTheCpuReference) {
  // Feed the check the CPU reference's results (rounded to bf16) as if a kernel had produced them.
  // Packed documents of different lengths: the reference's masks and the statistic's layout;
  // then with a sliding window narrower than two of the documents.
  for (const int64_t window : {0, 16}) {
    AttentionProblem p = problem(4, 2, 64, true, Dtype::bf16, 96, 1, {40, 24, 32});
    p.window = window;
    SCOPED_TRACE(testing::Message() << "window " << window);
    Buffers b(p, 5, s());
    auto download = [&](const DeviceBuffer& d, size_t n) {
      std::vector<__nv_bfloat16> h(n);
      UB_CUDA_CHECK(cudaMemcpyAsync(h.data(), d.get(), n * 2, cudaMemcpyDeviceToHost, s()));
      UB_CUDA_CHECK(cudaStreamSynchronize(s()));
      std::vector<double> out(n);
      for (size_t i = 0; i < n; ++i) out[i] = static_cast<double>(__bfloat162float(h[i]));
      return out;
    };
    auto upload = [&](const std::vector<double>& v, const DeviceBuffer& d) {
      std::vector<__nv_bfloat16> h(v.size());
      for (size_t i = 0; i < v.size(); ++i) h[i] = __float2bfloat16(static_cast<float>(v[i]));
      UB_CUDA_CHECK(cudaMemcpyAsync(d.get(), h.data(), h.size() * 2, cudaMemcpyHostToDevice, s()));
      UB_CUDA_CHECK(cudaStreamSynchronize(s()));
    };
    const AttentionShape shape = p.shape();
    const auto q = download(b.q, shape.q_elems()), k = download(b.k, shape.kv_elems());
    const auto v = download(b.v, shape.kv_elems()), d_o = download(b.d_o, shape.q_elems());
    const AttentionForward f = attention_forward(shape, q, k, v);
    const AttentionGrads g = attention_backward(shape, q, k, v, f, d_o);
    upload(f.out, b.o), upload(g.dq, b.dq), upload(g.dk, b.dk), upload(g.dv, b.dv);
    // The statistic in cuDNN's layout (documents folded into the batch): [docs, heads, longest].
    const int64_t longest = 40;
    std::vector<float> lse(static_cast<size_t>(3 * p.heads * longest));
    ASSERT_GE(b.stats.bytes(), lse.size() * sizeof(float));
    for (int64_t h = 0; h < p.heads; ++h) {
      for (int64_t i = 0; i < p.seqlen; ++i) {
        const int64_t doc = i < 40 ? 0 : i < 64 ? 1 : 2, start = doc == 0 ? 0 : doc == 1 ? 40 : 64;
        lse[static_cast<size_t>((doc * p.heads + h) * longest + i - start)] =
            static_cast<float>(f.lse[static_cast<size_t>(h * p.seqlen + i)]);
      }
    }
    UB_CUDA_CHECK(cudaMemcpy(b.stats.get(), lse.data(), lse.size() * sizeof(float), cudaMemcpyHostToDevice));
    const AttentionCheck c = check_attention(p, b.tensors(), true, 1000, s());
    EXPECT_TRUE(c.ok()) << c.summary();
    EXPECT_EQ(c.rows, 96);
    for (const TensorCheck& t : c.tensors) {
      // Only the rounding of the CPU result to bf16 (or fp32 for the statistic) separates them.
      EXPECT_LT(t.nmse, t.name == "LSE" ? 1e-12 : 2e-5) << t.name;
    }
  }
}

// A causal sliding window (query i sees keys i - w < j <= i) through cuDNN's fused attention:
// validated against the reference forward and backward, alone, with batches, packed documents
// (equal and ragged) and fp16; a window as long as the sequence is full causal attention, and a
// narrower one really drops the keys before it. (Not a window of 1: each query sees only its own
// key, P is 1, and dQ and dK are zero but for rounding, which no relative error can judge.)
TEST_F(Attention, SlidingWindowsValidateAndDropTheKeysBeforeThem) {
  const auto windowed = [](AttentionProblem p, int64_t w) {
    p.window = w;
    return p;
  };
  std::vector<AttentionProblem> cases = {
      windowed(problem(8, 2, 128, true, Dtype::bf16), 2),   windowed(problem(8, 2, 128, true, Dtype::bf16), 64),
      windowed(problem(8, 2, 128, true, Dtype::bf16), 383), windowed(problem(4, 4, 64, true, Dtype::bf16, 300, 3), 100),
      windowed(problem(8, 2, 128, true, Dtype::fp16), 64),
      windowed(problem(8, 2, 128, true, Dtype::bf16, 1024, 2, {256, 256, 256, 256}), 100),
      windowed(problem(8, 2, 128, true, Dtype::bf16, 1000, 1, {300, 124, 512, 64}), 128)};
  for (const AttentionProblem& p : cases) {
    Buffers b(p, 17, s());
    const AttentionCheck c = run_and_check(p, b);
    EXPECT_TRUE(c.ok()) << "window " << p.window << " s " << p.seqlen << " docs " << testing::PrintToString(p.doc_lens)
                        << ": " << c.summary();
  }
  EXPECT_THROW(attn_->prepare(windowed(problem(8, 2, 128, false, Dtype::bf16), 64).sdpa(), false), UsageError);

  const AttentionProblem full = problem(8, 2, 128, true, Dtype::bf16, 512);
  Buffers a(full, 23, s());
  attn_->forward(full.sdpa(), a.tensors());
  DeviceBuffer o_full(a.o.bytes());
  UB_CUDA_CHECK(cudaMemcpyAsync(o_full.get(), a.o.get(), a.o.bytes(), cudaMemcpyDeviceToDevice, s()));
  attn_->forward(windowed(full, 512).sdpa(), a.tensors());
  UB_CUDA_CHECK(cudaStreamSynchronize(s()));
  EXPECT_LT(nmse_between(a.o, o_full).first, 1e-6) << "a window of the whole sequence";
  attn_->forward(windowed(full, 32).sdpa(), a.tensors());
  UB_CUDA_CHECK(cudaStreamSynchronize(s()));
  EXPECT_GT(nmse_between(a.o, o_full).first, 1e-2) << "a window of 32 keys changes what rows past 32 see";
}

TEST_F(Attention, CheckFailsOnWrongOrNanResults) {
  const AttentionProblem p = problem(8, 2, 128, true, Dtype::bf16, 512);
  Buffers b(p, 3, s());
  ASSERT_TRUE(run_and_check(p, b).ok());
  // A forward run with the wrong keys: O is wrong everywhere.
  SdpaTensors wrong = b.tensors();
  wrong.k = b.v.get();
  attn_->forward(p.sdpa(), wrong);
  AttentionCheck c = check_attention(p, b.tensors(), false, 48, s());
  EXPECT_FALSE(c.ok());
  EXPECT_GT(c.tensors.at(0).nmse, 0.1) << c.summary();
  // A NaN in dQ never passes, whatever the rest.
  attn_->forward(p.sdpa(), b.tensors());
  attn_->backward(p.sdpa(), b.tensors());
  UB_CUDA_CHECK(cudaMemsetAsync(b.dq.get(), 0xFF, 2 * p.head_dim * p.heads, s()));  // row 0: NaN in bf16
  c = check_attention(p, b.tensors(), true, 48, s());
  EXPECT_FALSE(c.ok());
  EXPECT_GT(c.tensors.at(2).non_finite, 0u) << c.summary();
}

// Runs `packed` (forward and backward), then each of its documents alone on the same inputs, and
// returns the NMSE of the packed run's O, dQ, dK, dV against the one-by-one results.
std::vector<double> packed_against_one_by_one(CudnnAttention& attn, const AttentionProblem& packed, cudaStream_t s) {
  Buffers b(packed, 21, s);
  attn.forward(packed.sdpa(), b.tensors());
  attn.backward(packed.sdpa(), b.tensors());
  Buffers one(packed, 21, s);  // same inputs
  const size_t q_tok = static_cast<size_t>(packed.heads * packed.head_dim) * 2;
  const size_t kv_tok = static_cast<size_t>(packed.kv_heads * packed.head_dim) * 2;
  int64_t start = 0;
  for (int64_t len : packed.doc_lens) {
    const AttentionProblem single = problem(packed.heads, packed.kv_heads, packed.head_dim, packed.causal,
                                            packed.dtype, len);
    auto at = [start](const DeviceBuffer& buf, size_t per) { return static_cast<char*>(buf.get()) + start * per; };
    DeviceBuffer stats(static_cast<size_t>(len * packed.heads) * sizeof(float));
    SdpaTensors t{at(one.q, q_tok),   at(one.k, kv_tok),  at(one.v, kv_tok),  at(one.o, q_tok), stats.as<float>(),
                  at(one.d_o, q_tok), at(one.dq, q_tok),  at(one.dk, kv_tok), at(one.dv, kv_tok)};
    attn.forward(single.sdpa(), t);
    attn.backward(single.sdpa(), t);
    UB_CUDA_CHECK(cudaStreamSynchronize(s));
    start += len;
  }
  std::vector<double> out;
  for (auto [x, y] : {std::pair{&b.o, &one.o}, {&b.dq, &one.dq}, {&b.dk, &one.dk}, {&b.dv, &one.dv}}) {
    const auto [nmse, bad] = nmse_between(*x, *y);
    EXPECT_EQ(bad, 0u);
    out.push_back(nmse);
  }
  return out;
}

TEST_F(Attention, PackedDocumentsEqualTheDocumentsRunOneByOne) {
  // Equal lengths: the same memory seen as a batch, the same kernel on the same numbers:
  // identical bits or nearly (block scheduling may change the order of the fp32 dQ sums).
  for (double nmse : packed_against_one_by_one(*attn_, problem(8, 2, 128, true, Dtype::bf16, 1024, 1,
                                                                {256, 256, 256, 256}), s())) {
    EXPECT_LT(nmse, 1e-7);
  }
  // Different lengths (ragged offsets and a padding mask): rounding-level differences only,
  // far below the validation tolerance (1e-3); a document leaking into its neighbour gives ~1.
  for (bool causal : {true, false}) {
    for (double nmse : packed_against_one_by_one(*attn_, problem(8, 2, 128, causal, Dtype::bf16, 1024, 1,
                                                                  {300, 124, 512, 88}), s())) {
      EXPECT_LT(nmse, 1e-5) << (causal ? "causal" : "non-causal");
    }
  }
}

TEST_F(Attention, PlansAreBuiltOncePerShape) {
  const AttentionProblem p = problem(8, 2, 64, true, Dtype::bf16, 256);
  Buffers b(p, 1, s());
  attn_->prepare(p.sdpa(), true);
  EXPECT_EQ(attn_->plans_built(), 2);
  const int hits = attn_->cache_hits();
  attn_->forward(p.sdpa(), b.tensors());
  attn_->backward(p.sdpa(), b.tensors());
  attn_->prepare(p.sdpa(), true);
  EXPECT_EQ(attn_->plans_built(), 2);
  EXPECT_EQ(attn_->cache_hits(), hits + 4);
  EXPECT_FALSE(attn_->engine(p.sdpa(), false).empty());
  attn_->prepare(problem(8, 2, 64, true, Dtype::bf16, 512).sdpa(), false);
  EXPECT_EQ(attn_->plans_built(), 3);
}

TEST_F(Attention, AutotunedPlansValidate) {
  // Every configuration cuDNN offers computes the same attention; the fastest is kept per shape.
  attn_->set_autotune(16);
  for (const AttentionProblem& p : {problem(8, 2, 128, true, Dtype::bf16, 2048),
                                    problem(8, 2, 128, true, Dtype::bf16, 1000, 1, {300, 124, 512, 64})}) {
    Buffers b(p, 7, s());
    const AttentionCheck c = run_and_check(p, b);
    EXPECT_TRUE(c.ok()) << c.summary();
    for (bool backward : {false, true}) {
      const std::string engine = attn_->engine(p.sdpa(), backward);
      EXPECT_FALSE(engine.empty());
      std::cout << (backward ? "backward: " : "forward: ") << engine << "\n";
      for (const auto& [candidate, ms] : attn_->timed_candidates(p.sdpa(), backward)) {
        std::cout << "  candidate " << candidate << ": " << ms << " ms\n";
      }
    }
    // Timed once: a second run keeps the choice and builds nothing.
    const int built = attn_->plans_built();
    const std::string chosen = attn_->engine(p.sdpa(), true);
    run_and_check(p, b);
    EXPECT_EQ(attn_->plans_built(), built);
    EXPECT_EQ(attn_->engine(p.sdpa(), true), chosen);
  }
}

TEST_F(Attention, UnsupportedShapesAreRefusedBeforeAnyWork) {
  EXPECT_THROW(attn_->prepare(problem(32, 5, 128, true, Dtype::bf16).sdpa(), false), UsageError);
  EXPECT_THROW(attn_->prepare(problem(8, 2, 320, true, Dtype::bf16).sdpa(), false), UsageError);
  EXPECT_THROW(attn_->prepare(problem(8, 2, 100, true, Dtype::bf16).sdpa(), false), UsageError);
  EXPECT_THROW(attn_->prepare(problem(8, 2, 128, true, Dtype::fp32).sdpa(), false), UsageError);
  EXPECT_EQ(attn_->plans_built(), 0);
}

}  // namespace
}  // namespace ub::gpu
