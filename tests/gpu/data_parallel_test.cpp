// The data-parallel step against what it claims to shard, with the real NCCL: on one GPU, a job
// of one rank at every ZeRO stage (and with the optimizer offloaded) trains exactly as the
// engine does alone; on two GPUs, two ranks with one sequence each train as one GPU with both
// sequences in its batch (same losses, same weights after several steps, within bf16's
// tolerance), at every stage, buckets splitting layers, tied and untied. Selective
// checkpointing and MLP tiles change memory, not the gradients. The two-GPU tests skip on one.
#include <gtest/gtest.h>

#include <cmath>
#include <exception>
#include <thread>

#include "facts/model_shape.hpp"
#include "gpu/cuda_raii.hpp"
#include "gpu/model/llama_engine.hpp"
#include "gpu/nccl_comm.hpp"
#include "model/llama_layout.hpp"
#include "require_gpu.hpp"

namespace ub::gpu {
namespace {

ModelShape tiny(bool tied) {
  ModelShape m = load_model("llama-tiny", UB_DATA_DIR "/models");
  m.tied_embeddings = tied;
  return m;
}

int gpus() { return static_cast<int>(list_devices().devices.size()); }

// Relative L2 distance over the elements of every tensor of `L` (padding left out).
double rel_l2(const std::vector<float>& got, const std::vector<float>& want, const LlamaLayout& L) {
  double num = 0, den = 0;
  for (const ParamTensor& t : L.tensors) {
    for (size_t j = 0; j < t.count(); ++j) {
      const double g = got[t.offset + j], w = want[t.offset + j];
      if (!std::isfinite(g)) return INFINITY;
      num += (g - w) * (g - w);
      den += w * w;
    }
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

// The same tensors of two layouts side by side: `b`'s values at `a`'s offsets.
std::vector<float> relaid(const std::vector<float>& values, const LlamaLayout& from, const LlamaLayout& to) {
  std::vector<float> out(to.total, 0.0f);
  for (size_t t = 0; t < to.tensors.size(); ++t) {
    for (size_t j = 0; j < to.tensors[t].count(); ++j) out[to.tensors[t].offset + j] = values[from.tensors[t].offset + j];
  }
  return out;
}

struct Trained {
  std::vector<double> losses;
  std::vector<float> params, first_grads;
  LlamaLayout layout;
  double exposed_comm_ms = 0;
};

constexpr int kSteps = 4;
constexpr int64_t kSeqlen = 64;

EngineOptions options(int64_t batch) {
  EngineOptions o;
  o.batch = batch, o.seqlen = kSeqlen;
  o.adam.lr = 3e-3;
  return o;
}

// kSteps steps of the sequences [first, first + batch) of one synthetic stream.
Trained train(const ModelShape& m, EngineOptions o, int64_t first_sequence, cudaStream_t s) {
  LlamaEngine e(m, o, s);
  e.init_parameters(91);
  e.set_tokens(synthetic_tokens(92, o.batch, kSeqlen, m.vocab, first_sequence));
  Trained t;
  for (int step = 0; step < kSteps; ++step) {
    e.forward_backward();
    if (step == 0) t.first_grads = e.gradients();
    e.optimizer_step();
    t.losses.push_back(e.loss());
  }
  t.params = e.parameters();
  t.layout = e.layout();
  t.exposed_comm_ms = e.exposed_comm_ms();
  return t;
}

struct Variant {
  const char* name;
  int zero;
  bool offload, master;
  size_t bucket;
};

const Variant kVariants[] = {
    {"zero 1", 1, false, true, 0},           {"zero 2", 2, false, true, 0},
    {"zero 3", 3, false, true, 0},           {"zero 3, buckets split layers", 3, false, true, 3000},
    {"zero 2, pure bf16", 2, false, false, 3000}, {"zero 3, pure bf16", 3, false, false, 0},
    {"zero 1, offloaded", 1, true, true, 0}, {"zero 3, offloaded", 3, true, true, 3000},
};

// One rank: the collectives are NCCL's on a communicator of one, and every stage must give what
// the engine gives alone, up to the order of the norm's sum (and float rounding of the CPU AdamW).
TEST(DataParallel, AJobOfOneRankTrainsAsTheEngineAlone) {
  UB_REQUIRE_GPU();
  Stream stream;
  NcclComm comm(nccl_unique_id(), 1, 0);
  for (const bool tied : {false, true}) {
    const ModelShape m = tiny(tied);
    for (const Variant& v : kVariants) {
      SCOPED_TRACE(testing::Message() << v.name << (tied ? ", tied" : ", untied"));
      EngineOptions alone = options(1);
      alone.master_weights = v.master;
      const Trained want = train(m, alone, 0, stream.get());
      EngineOptions o = alone;
      o.comm = &comm, o.zero = v.zero, o.offload_optimizer = v.offload, o.bucket_elems = v.bucket;
      const Trained got = train(m, o, 0, stream.get());
      // In pure bf16 a norm summed in another order can move a weight by one bf16 step (2^-8).
      const double tol = v.master ? 1e-5 : 2e-3;
      for (int i = 0; i < kSteps; ++i) EXPECT_NEAR(got.losses[i], want.losses[i], tol * want.losses[i]) << "step " << i;
      const std::vector<float> params = relaid(got.params, got.layout, want.layout);
      EXPECT_LT(rel_l2(params, want.params, want.layout), tol);
      EXPECT_LT(rel_l2(relaid(got.first_grads, got.layout, want.layout), want.first_grads, want.layout), 1e-6);
    }
  }
}

// Offloaded checkpoints go with every stage and with the offloaded optimizer: on one rank the
// step is the one that keeps the checkpoints on the GPU (the same copies of the same bytes), up
// to the order of the norm's sum.
TEST(DataParallel, OffloadedCheckpointsGoWithTheStagesAndTheOffloadedOptimizer) {
  UB_REQUIRE_GPU();
  Stream stream;
  NcclComm comm(nccl_unique_id(), 1, 0);
  ModelShape m = tiny(false);
  m.layers = 4;
  for (const Variant& v : {kVariants[2], kVariants[7]}) {  // zero 3; zero 3 offloaded
    SCOPED_TRACE(v.name);
    EngineOptions kept = options(1);
    kept.comm = &comm, kept.zero = v.zero, kept.offload_optimizer = v.offload, kept.bucket_elems = v.bucket;
    kept.checkpointing = true;
    EngineOptions offloaded = kept;
    offloaded.offload_checkpoints = true;
    const Trained want = train(m, kept, 0, stream.get());
    const Trained got = train(m, offloaded, 0, stream.get());
    for (int i = 0; i < kSteps; ++i) EXPECT_NEAR(got.losses[i], want.losses[i], 1e-6 * want.losses[i]) << "step " << i;
    EXPECT_LT(rel_l2(got.params, want.params, want.layout), 1e-6);
    EXPECT_LT(rel_l2(got.first_grads, want.first_grads, want.layout), 1e-6);
  }
}

// Selective checkpointing recomputes without attention; MLP tiles run the MLP a tile at a time
// and recompute gate|up in backward: neither changes the gradients beyond fp32 summation order,
// and each takes less memory than the step it replaces.
TEST(DataParallel, SelectiveCheckpointingAndMlpTilesKeepTheGradients) {
  UB_REQUIRE_GPU();
  Stream stream;
  ModelShape m = tiny(false);
  m.intermediate = 1024;  // MLP activations large beside the rest, so tiles show in the peak
  auto step = [&](EngineOptions o) {
    LlamaEngine e(m, o, stream.get());
    e.init_parameters(5);
    e.set_tokens(synthetic_tokens(6, o.batch, o.seqlen, m.vocab));
    e.forward_backward();
    return std::tuple{e.loss(), e.gradients(), e.memory().peak};
  };
  const EngineOptions plain = options(2);
  const auto [loss, grads, peak] = step(plain);
  EngineOptions full = plain, selective = plain, tiled = plain, tiled_full = plain, tiled_odd = plain;
  full.checkpointing = true;
  selective.checkpointing = selective.selective = true;
  tiled.mlp_tile = 32;
  tiled_full.mlp_tile = 48, tiled_full.checkpointing = true;
  tiled_odd.mlp_tile = 23, tiled_odd.checkpointing = tiled_odd.selective = true;  // does not divide 128 tokens
  const LlamaLayout L = llama_layout(m);
  size_t full_peak = 0;
  for (const auto& [name, o] : {std::pair{"checkpointing", full}, {"selective", selective}, {"mlp tiles", tiled},
                                {"tiles + checkpointing", tiled_full}, {"odd tiles + selective", tiled_odd}}) {
    const auto [l, g, p] = step(o);
    EXPECT_NEAR(l, loss, 1e-6 * loss) << name;
    EXPECT_LT(rel_l2(g, grads, L), 1e-5) << name;
    std::printf("  %-24s peak %.2f MiB (plain %.2f)\n", name, static_cast<double>(p) / 1048576.0,
                static_cast<double>(peak) / 1048576.0);
    const std::string n = name;
    if (n == "checkpointing") full_peak = p;
    if (n == "mlp tiles") {
      EXPECT_LT(p, peak) << name;
    }
    if (n == "tiles + checkpointing") {
      EXPECT_LT(p, full_peak) << name;
    }
    if (n == "selective") {
      EXPECT_GT(p, full_peak) << "selective keeps more than full checkpointing";
    }
  }
}

#define UB_REQUIRE_TWO_GPUS()                                                                       \
  do {                                                                                              \
    UB_REQUIRE_GPU();                                                                               \
    if (gpus() < 2) GTEST_SKIP() << "this test needs two GPUs (this machine has " << gpus() << ")"; \
  } while (0)

// Two ranks, one thread each on its own GPU, each training its own sequence.
std::vector<Trained> train_two_ranks(const ModelShape& m, const EngineOptions& o) {
  const std::string id = nccl_unique_id();
  std::vector<Trained> out(2);
  std::exception_ptr errors[2];
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      try {
        UB_CUDA_CHECK(cudaSetDevice(r));
        Stream stream;
        NcclComm comm(id, 2, r);
        EngineOptions mine = o;
        mine.comm = &comm;
        out[static_cast<size_t>(r)] = train(m, mine, r, stream.get());
      } catch (...) {
        errors[r] = std::current_exception();
      }
    });
  }
  for (std::thread& t : ranks) t.join();
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  return out;
}

TEST(DataParallel, TwoRanksTrainAsOneGpuWithBothSequences) {
  UB_REQUIRE_TWO_GPUS();
  Stream stream;
  for (const bool tied : {false, true}) {
    const ModelShape m = tiny(tied);
    const Trained one = train(m, options(2), 0, stream.get());  // both sequences in one batch
    const std::vector<float> init = [&] {
      LlamaEngine e(m, options(2), stream.get());
      e.init_parameters(91);
      return e.parameters();
    }();
    const Variant zero0{"zero 0", 0, false, true, 0};
    std::vector<Variant> variants(std::begin(kVariants), std::end(kVariants));
    variants.insert(variants.begin(), zero0);
    for (const Variant& v : variants) {
      if (!v.master) continue;  // the batch-2 reference keeps master weights
      SCOPED_TRACE(testing::Message() << v.name << (tied ? ", tied" : ", untied"));
      EngineOptions o = options(1);
      o.zero = v.zero, o.offload_optimizer = v.offload, o.bucket_elems = v.bucket;
      const std::vector<Trained> ranks = train_two_ranks(m, o);
      for (int i = 0; i < kSteps; ++i) {
        const double mean = (ranks[0].losses[i] + ranks[1].losses[i]) / 2;
        EXPECT_NEAR(mean, one.losses[i], 1e-3 * one.losses[i]) << "step " << i;
      }
      // Both ranks hold the same weights, and they moved from the start as one GPU's did.
      EXPECT_EQ(ranks[0].params, ranks[1].params);
      const std::vector<float> got = relaid(ranks[0].params, ranks[0].layout, one.layout);
      std::vector<float> moved_got(got.size()), moved_want(got.size());
      for (size_t i = 0; i < got.size(); ++i) moved_got[i] = got[i] - init[i], moved_want[i] = one.params[i] - init[i];
      EXPECT_LT(rel_l2(moved_got, moved_want, one.layout), 2e-2);
      EXPECT_LT(rel_l2(relaid(ranks[0].first_grads, ranks[0].layout, one.layout), one.first_grads, one.layout), 1e-2);
      std::printf("  %-32s exposed communication %.3f ms (rank 0, last step)\n", v.name, ranks[0].exposed_comm_ms);
    }
  }
}

}  // namespace
}  // namespace ub::gpu
