// Flat parameter layout, initial values and synthetic tokens; see llama_layout.hpp.
#include "model/llama_layout.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "base/error.hpp"
#include "model/counter_rng.hpp"
#include "model/rope.hpp"

namespace ub {

LlamaLayout llama_layout(const ModelShape& m) {
  LlamaLayout l;
  auto add = [&](std::string name, int64_t rows, int64_t cols, bool norm) {
    ParamTensor t{std::move(name), rows, cols, l.total, norm, norm, l.total};
    l.total += (t.count() + kParamAlign - 1) / kParamAlign * kParamAlign;
    l.tensors.push_back(std::move(t));
    return l.tensors.size() - 1;
  };
  const int64_t h = m.hidden, q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim;
  l.embed = add("embed_tokens", m.vocab, h, false);
  for (int64_t i = 0; i < m.layers; ++i) {
    const std::string p = fmt::format("layers.{}.", i);
    LayerParams lp{};
    lp.attn_norm = add(p + "input_layernorm", h, 1, true);
    lp.qkv = add(p + "self_attn.qkv_proj", q + 2 * kv, h, false);
    if (m.qk_norm) {
      lp.q_norm = add(p + "self_attn.q_norm", m.head_dim, 1, true);
      lp.k_norm = add(p + "self_attn.k_norm", m.head_dim, 1, true);
    }
    lp.o = add(p + "self_attn.o_proj", h, q, false);
    lp.mlp_norm = add(p + "post_attention_layernorm", h, 1, true);
    if (m.is_moe_layer(i)) {
      const MoeShape& e = *m.moe;
      lp.router = add(p + "mlp.gate", e.experts, h, false);
      lp.gate_up = add(p + "mlp.experts.gate_up_proj", e.experts * 2 * e.intermediate, h, false);
      lp.down = add(p + "mlp.experts.down_proj", e.experts * h, e.intermediate, false);
      if (const int64_t is = e.shared_experts * e.shared_intermediate; is > 0) {
        lp.shared_gate_up = add(p + "mlp.shared_expert.gate_up_proj", 2 * is, h, false);
        lp.shared_down = add(p + "mlp.shared_expert.down_proj", h, is, false);
        if (e.shared_gate) {
          lp.shared_expert_gate = add(p + "mlp.shared_expert_gate", 1, h, false);
          l.tensors.back().summed_in_fp32 = true;
        }
      }
    } else {
      lp.gate_up = add(p + "mlp.gate_up_proj", 2 * m.intermediate, h, false);
      lp.down = add(p + "mlp.down_proj", h, m.intermediate, false);
    }
    lp.last = l.tensors.size() - 1;
    l.layers.push_back(lp);
  }
  l.final_norm = add("norm", h, 1, true);
  l.lm_head = m.tied_embeddings ? l.embed : add("lm_head", m.vocab, h, false);
  return l;
}

float llama_init_value(const LlamaLayout& layout, uint64_t seed, size_t i) {
  // Binary search for the tensor holding element i.
  auto it = std::upper_bound(layout.tensors.begin(), layout.tensors.end(), i,
                             [](size_t x, const ParamTensor& t) { return x < t.offset; });
  if (it == layout.tensors.begin()) return 0;
  const ParamTensor& t = *std::prev(it);
  if (i >= t.offset + t.count()) return 0;  // padding
  return t.is_norm ? 1.0f : normal_at(seed, t.init_index + (i - t.offset)) * static_cast<float>(kInitStd);
}

std::vector<float> llama_init_parameters(const LlamaLayout& layout, uint64_t seed) {
  std::vector<float> p(layout.total, 0.0f);
  for (const ParamTensor& t : layout.tensors) {
    for (size_t j = 0; j < t.count(); ++j) {
      const size_t i = t.offset + j;
      p[i] = t.is_norm ? 1.0f : normal_at(seed, t.init_index + j) * static_cast<float>(kInitStd);
    }
  }
  return p;
}

int64_t synthetic_token_bound(int64_t vocab) { return vocab > 512 ? vocab - 256 : vocab; }

std::vector<int32_t> synthetic_tokens(uint64_t seed, int64_t batch, int64_t seqlen, int64_t vocab,
                                      int64_t first_sequence) {
  const auto bound = static_cast<uint64_t>(synthetic_token_bound(vocab));
  const auto first = static_cast<uint64_t>(first_sequence * seqlen);
  std::vector<int32_t> t(static_cast<size_t>(batch * seqlen));
  for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<int32_t>(random_bits(seed, first + i) % bound);
  return t;
}

std::vector<std::string> untrained_features(const ModelShape& m) {
  std::vector<std::string> f;
  if (m.mlp_activation != "silu" && m.mlp_activation != "swish") f.push_back(fmt::format("a {} MLP", m.mlp_activation));
  if (m.norms_per_layer != 2) f.push_back("norms after attention and the MLP");
  if (m.query_scale && *m.query_scale != static_cast<double>(m.head_dim)) {
    f.push_back(fmt::format("query_pre_attn_scalar {}", *m.query_scale));
  }
  if (m.softcapping) f.push_back("logit soft-capping");
  if (m.attention_bias || m.mlp_bias) f.push_back("biases in its projections");
  return f;
}

void check_trainable(const ModelShape& m) {
  auto refuse = [&](const std::string& why) {
    throw UsageError(fmt::format("train: model {} cannot be trained by the engine: {}", m.id, why));
  };
  if (const auto f = untrained_features(m); !f.empty()) {
    refuse(fmt::format("it has {}; the engine trains Llama-family decoders (SwiGLU MLPs, dense or a mixture of "
                       "experts; causal attention, full or in a window) today; flops, memfit and predict count this "
                       "model", fmt::join(f, ", ")));
  }
  if (m.head_dim % 8 != 0 || m.head_dim > 256) refuse(fmt::format("head_dim {} (multiples of 8 up to 256)", m.head_dim));
  if (m.kv_heads <= 0 || m.heads % m.kv_heads != 0) {
    refuse(fmt::format("{} attention heads are not a multiple of {} key/value heads", m.heads, m.kv_heads));
  }
  if (m.hidden % 8 != 0 || m.intermediate % 8 != 0) {
    refuse(fmt::format("hidden {} and intermediate {} must be multiples of 8", m.hidden, m.intermediate));
  }
  if (m.vocab > (int64_t{1} << 31) - 1) refuse("vocabulary beyond 2^31 ids");
  if (m.layers < 1) refuse("no layers");
  (void)rope_inverse_frequencies(m);  // an unsupported rope_scaling type is refused here
}

void check_training_step(const ModelShape& m, int64_t batch, int64_t seqlen, int64_t loss_chunk) {
  check_trainable(m);
  if (seqlen < 2 || seqlen > (int64_t{1} << 24)) {
    throw UsageError(fmt::format("train: --seqlen {} is out of range (2..16M)", seqlen));
  }
  if (batch < 1 || batch > 4096) throw UsageError(fmt::format("train: --batch {} is out of range (1..4096)", batch));
  if (loss_chunk < 0 || loss_chunk > (int64_t{1} << 24)) {
    throw UsageError(fmt::format("train: --loss-chunk {} is out of range (0..16M tokens; 0: no chunks)", loss_chunk));
  }
}

void check_step_options(const StepOptions& o) {
  if (o.zero < 0 || o.zero > 3) throw UsageError(fmt::format("train: --zero {} is not a ZeRO stage (0, 1, 2 or 3)", o.zero));
  if (o.offload_optimizer && !o.master_weights) {
    throw UsageError("train: --offload-optimizer keeps fp32 master weights and AdamW state in host memory "
                     "(DeepSpeed's CPU Adam): it does not go with --precision bf16");
  }
  if (o.offload_optimizer && o.zero == 0) {
    throw UsageError("train: --offload-optimizer moves this rank's shard of the optimizer to host memory: give "
                     "--zero 1, 2 or 3");
  }
  if (o.selective && !o.checkpointing) throw UsageError("train: --selective-checkpointing is a kind of --checkpointing: give both");
  if (o.offload_checkpoints && !o.checkpointing) {
    throw UsageError("train: --offload-checkpoints moves the layer inputs that --checkpointing keeps: give both");
  }
  if (o.mlp_tile < 0 || o.mlp_tile > (int64_t{1} << 24)) {
    throw UsageError(fmt::format("train: --mlp-tile {} is out of range (0..16M tokens; 0: no tiles)", o.mlp_tile));
  }
}

}  // namespace ub
