// The shard arithmetic of data-parallel training: buckets of whole tensors within a unit, padded
// to world x alignment; every element of every tensor in exactly one rank's shard; uneven sizes;
// bucket boundaries; the layout of one GPU unchanged; initial values independent of the padding.
// Also the offloaded optimizer's CPU AdamW against the double reference, its bf16 rounding, and
// the host work pool.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "base/error.hpp"
#include "base/work_pool.hpp"
#include "facts/model_shape.hpp"
#include "model/counter_rng.hpp"
#include "model/cpu_adamw.hpp"
#include "model/llama_layout.hpp"
#include "model/reference/llama_cpu.hpp"
#include "model/shard_plan.hpp"

namespace ub {
namespace {

ModelShape tiny() { return load_model("llama-tiny", UB_DATA_DIR "/models"); }
ModelShape llama8b() { return load_model("llama-3.1-8b", UB_DATA_DIR "/models"); }

// Sizes that divide by nothing useful: a vocabulary and widths that leave remainders.
ModelShape uneven() {
  ModelShape m = tiny();
  m.vocab = 1009, m.hidden = 72, m.intermediate = 200, m.heads = 6, m.kv_heads = 2, m.head_dim = 12, m.layers = 3;
  m.tied_embeddings = false;
  return m;
}

TEST(ShardPlan, OneGpuWithBucketsPerUnitIsTheModelsOwnLayout) {
  for (const ModelShape& m : {tiny(), llama8b(), uneven()}) {
    const LlamaLayout base = llama_layout(m);
    const ShardPlan p = plan_shards(m, 1, 0);
    ASSERT_EQ(p.layout.tensors.size(), base.tensors.size());
    EXPECT_EQ(p.layout.total, base.total);
    for (size_t t = 0; t < base.tensors.size(); ++t) {
      EXPECT_EQ(p.layout.tensors[t].offset, base.tensors[t].offset) << base.tensors[t].name;
      EXPECT_EQ(p.layout.tensors[t].init_index, base.tensors[t].offset);
    }
    EXPECT_EQ(p.units.size(), static_cast<size_t>(m.layers) + 2);
    EXPECT_EQ(p.buckets.size(), p.units.size());
    EXPECT_EQ(p.shard, base.total);
  }
}

void check_partition(const ModelShape& m, int world, size_t bucket_elems) {
  SCOPED_TRACE(testing::Message() << "world " << world << ", bucket " << bucket_elems);
  const ShardPlan p = plan_shards(m, world, bucket_elems);
  const LlamaLayout& L = p.layout;
  const size_t align = static_cast<size_t>(world) * kParamAlign;
  // Buckets tile the layout in order, each a multiple of world x alignment, each within one unit.
  size_t at = 0;
  for (size_t b = 0; b < p.buckets.size(); ++b) {
    const ShardBucket& k = p.buckets[b];
    EXPECT_EQ(k.begin, at);
    EXPECT_EQ(k.size() % align, 0u);
    EXPECT_EQ(k.slice * static_cast<size_t>(world), k.size());
    EXPECT_EQ(k.slice % kParamAlign, 0u);
    EXPECT_LT(k.first_tensor, k.end_tensor);
    for (size_t t = k.first_tensor; t < k.end_tensor; ++t) {
      EXPECT_EQ(p.bucket_of[t], b);
      EXPECT_EQ(p.unit_of[t], k.unit);
      EXPECT_GE(L.tensors[t].offset, k.begin);
      EXPECT_LE(L.tensors[t].offset + L.tensors[t].count(), k.end);
      EXPECT_EQ(L.tensors[t].offset % kParamAlign, 0u);
    }
    // Bucket boundaries: more than one tensor only while the bucket stays within its size.
    if (bucket_elems > 0 && k.end_tensor - k.first_tensor > 1) {
      size_t data = 0;
      for (size_t t = k.first_tensor; t < k.end_tensor; ++t) data += (L.tensors[t].count() + kParamAlign - 1) / kParamAlign * kParamAlign;
      EXPECT_LE(data, bucket_elems);
    }
    at = k.end;
  }
  EXPECT_EQ(at, L.total);
  // Units are runs of whole buckets; the first the embedding, the last the head.
  EXPECT_EQ(p.units.front().name, "embedding");
  EXPECT_EQ(p.units.back().name, "head");
  for (const ShardUnit& u : p.units) {
    EXPECT_EQ(u.begin, p.buckets[u.first_bucket].begin);
    EXPECT_EQ(u.end, p.buckets[u.end_bucket - 1].end);
    EXPECT_LE(u.size(), p.largest_unit);
  }
  EXPECT_EQ(p.unit_of[L.layers[1].down], p.layer_unit(1));
  EXPECT_EQ(p.unit_of[L.final_norm], p.head_unit());
  // Every element of every tensor lies in exactly one rank's shard, at a place no other element takes.
  std::vector<int> owner(L.total, -1);
  for (int r = 0; r < world; ++r) {
    std::set<size_t> shard_slots;
    size_t total = 0;
    for (const ShardPiece& piece : p.pieces(r)) {
      const ParamTensor& t = L.tensors[piece.tensor];
      EXPECT_GE(piece.layout_offset, t.offset);
      EXPECT_LE(piece.layout_offset + piece.count, t.offset + t.count());
      EXPECT_EQ(piece.init_index - t.init_index, piece.layout_offset - t.offset);
      const ShardBucket& b = p.buckets[p.bucket_of[piece.tensor]];
      EXPECT_GE(piece.layout_offset, b.slice_begin(r));
      EXPECT_LE(piece.layout_offset + piece.count, b.slice_begin(r) + b.slice);
      EXPECT_EQ(piece.shard_offset - b.shard_offset, piece.layout_offset - b.slice_begin(r));
      EXPECT_LE(piece.shard_offset + piece.count, p.shard);
      for (size_t j = 0; j < piece.count; ++j) {
        EXPECT_EQ(owner[piece.layout_offset + j], -1);
        owner[piece.layout_offset + j] = r;
      }
      EXPECT_TRUE(shard_slots.insert(piece.shard_offset).second);
      total += piece.count;
    }
    EXPECT_LE(total, p.shard);
  }
  size_t data = 0;
  for (const ParamTensor& t : L.tensors) {
    for (size_t j = 0; j < t.count(); ++j) ASSERT_NE(owner[t.offset + j], -1) << t.name << " element " << j;
    data += t.count();
  }
  // Padding: the gaps of each bucket are exactly the elements no tensor holds.
  size_t gaps = 0;
  for (size_t b = 0; b < p.buckets.size(); ++b) {
    for (const ElementRange& g : p.padding_of(b)) {
      EXPECT_LT(g.begin, g.end);
      for (size_t i = g.begin; i < g.end; ++i) EXPECT_EQ(owner[p.buckets[b].begin + i], -1);
      gaps += g.end - g.begin;
    }
  }
  EXPECT_EQ(data + gaps, L.total);
}

TEST(ShardPlan, EveryElementInExactlyOneShardForUnevenSizes) {
  for (int world : {1, 2, 3, 7, 8}) {
    for (size_t bucket : {size_t{0}, size_t{1}, size_t{5000}, size_t{30000}}) check_partition(uneven(), world, bucket);
  }
  ModelShape tied = uneven();
  tied.tied_embeddings = true;
  check_partition(tied, 3, 0);
  check_partition(tiny(), 2, 0);
}

TEST(ShardPlan, BucketsOfLlama8bOnEightGpus) {
  const ShardPlan p = plan_shards(llama8b(), 8, 64ull << 20);
  const LlamaLayout& L = p.layout;
  // A layer: [attention norm, qkv, o, mlp norm] fit in 64M elements; gate_up (117M) is a bucket of
  // its own, and so is down (59M, since it does not fit beside gate_up).
  const ShardUnit& layer0 = p.units[p.layer_unit(0)];
  ASSERT_EQ(layer0.end_bucket - layer0.first_bucket, 3u);
  EXPECT_EQ(p.buckets[layer0.first_bucket].first_tensor, L.layers[0].attn_norm);
  EXPECT_EQ(p.buckets[layer0.first_bucket].end_tensor, L.layers[0].gate_up);
  EXPECT_EQ(p.buckets[layer0.first_bucket + 1].end_tensor, L.layers[0].down);
  // The shard is an eighth of the model, plus at most the padding of each bucket.
  EXPECT_LE(p.shard * 8, L.total);
  EXPECT_GE(p.shard * 8, llama_layout(llama8b()).total);
  EXPECT_EQ(p.largest_bucket, p.buckets[p.units.back().first_bucket + 1].size());  // the lm_head
  EXPECT_EQ(p.most_buckets_per_unit, 3u);
}

TEST(ShardPlan, InitialValuesDoNotDependOnTheWorld) {
  const ModelShape m = uneven();
  const LlamaLayout one = plan_shards(m, 1, 0).layout;
  const LlamaLayout seven = plan_shards(m, 7, 2000).layout;
  const std::vector<float> a = llama_init_parameters(one, 42), b = llama_init_parameters(seven, 42);
  for (size_t t = 0; t < one.tensors.size(); ++t) {
    for (size_t j = 0; j < one.tensors[t].count(); j += 7) {
      ASSERT_EQ(a[one.tensors[t].offset + j], b[seven.tensors[t].offset + j]) << one.tensors[t].name;
      ASSERT_EQ(llama_init_value(seven, 42, seven.tensors[t].offset + j), b[seven.tensors[t].offset + j]);
    }
  }
  EXPECT_GT(seven.total, one.total);
}

TEST(ShardPlan, RefusesAWorldOfNoRanks) {
  EXPECT_THROW(plan_shards(tiny(), 0, 0), UsageError);
}

TEST(CpuAdamw, Bf16RoundsToNearestEvenAndKeepsNaN) {
  EXPECT_EQ(bf16_bits(1.0f), 0x3F80);
  EXPECT_EQ(bf16_value(bf16_bits(1.00390625f)), 1.0f);        // halfway: to even (down)
  EXPECT_EQ(bf16_value(bf16_bits(1.01171875f)), 1.015625f);   // halfway: to even (up)
  EXPECT_EQ(bf16_value(bf16_bits(-2.5f)), -2.5f);
  EXPECT_TRUE(std::isnan(bf16_value(bf16_bits(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isinf(bf16_value(bf16_bits(std::numeric_limits<float>::infinity()))));
  EXPECT_TRUE(std::isinf(bf16_value(bf16_bits(3.4e38f))));  // rounds past the largest bf16
}

// Three steps of CPU AdamW in float follow the double reference (llama_cpu.hpp's adamw_cpu_step)
// within float rounding, with clipping active.
TEST(CpuAdamw, FollowsTheReferenceOverSteps) {
  const size_t n = 1037;
  std::vector<double> p(n), m(n, 0), v(n, 0);
  for (size_t i = 0; i < n; ++i) p[i] = 0.02 * normal_at(1, i);
  std::vector<float> pf(p.begin(), p.end()), mf(n, 0), vf(n, 0);
  std::vector<uint16_t> w16(n);
  AdamWParams opt;
  opt.lr = 1e-2, opt.max_grad_norm = 0.5;
  for (int step = 1; step <= 3; ++step) {
    std::vector<double> g(n);
    for (size_t i = 0; i < n; ++i) g[i] = 0.1 * normal_at(100 + static_cast<uint64_t>(step), i);
    const std::vector<float> gf(g.begin(), g.end());
    double norm = 0;
    for (float x : gf) norm += static_cast<double>(x) * x;
    norm = std::sqrt(norm);
    const double ref_norm = adamw_cpu_step(p, m, v, g, opt, step);
    EXPECT_NEAR(norm, ref_norm, 1e-6 * ref_norm);
    cpu_adamw(pf.data(), mf.data(), vf.data(), gf.data(), w16.data(), n, adamw_scalars(opt, step),
              clip_coefficient(static_cast<float>(norm), static_cast<float>(opt.max_grad_norm)));
  }
  double worst = 0;
  for (size_t i = 0; i < n; ++i) {
    worst = std::max(worst, std::abs(pf[i] - p[i]));
    EXPECT_EQ(w16[i], bf16_bits(pf[i]));
  }
  EXPECT_LT(worst, 1e-7);  // float rounding of updates of about lr
}

TEST(WorkPool, RunsEveryPartOnceAndRethrows) {
  WorkPool pool(4);
  EXPECT_EQ(pool.threads(), 4u);
  for (int round = 0; round < 50; ++round) {
    std::vector<std::atomic<int>> hits(97);
    pool.run(hits.size(), [&](size_t i) { hits[i].fetch_add(1); });
    for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  }
  EXPECT_THROW(pool.run(10, [](size_t i) {
    if (i == 3) throw std::runtime_error("part 3");
  }), std::runtime_error);
  std::atomic<int> after{0};
  pool.run(5, [&](size_t) { after.fetch_add(1); });  // still usable
  EXPECT_EQ(after.load(), 5);
  WorkPool alone(1);
  std::atomic<int> n{0};
  alone.run(3, [&](size_t) { n.fetch_add(1); });
  EXPECT_EQ(n.load(), 3);
}

}  // namespace
}  // namespace ub
