// What a Hugging Face model hands the engine to train the same thing: its weights (the
// safetensors files save_pretrained writes) and the token ids of a batch, so that our step and
// transformers' step can be compared loss for loss from the same starting point.
//
// Weights are mapped by name into the flat layout (model/llama_layout.hpp), the two fused
// projections assembled from Hugging Face's separate ones: qkv_proj from q_proj, k_proj, v_proj;
// gate_up_proj from gate_proj, up_proj. The experts of a mixture-of-experts layer are read as
// transformers 5 keeps them (mlp.experts.gate_up_proj [E, 2I, H], mlp.experts.down_proj [E, H, I])
// or as the checkpoints on the Hub store them, one expert at a time (Qwen-MoE's
// mlp.experts.<e>.gate_proj / up_proj / down_proj, Mixtral's block_sparse_moe.experts.<e>.w1 / w3 /
// w2 and block_sparse_moe.gate). Names may carry the causal-LM prefix "model." or not.
//
// Every parameter of the model must be found with its exact shape; a tensor of the file that the
// model does not have is refused by name, except the layers past the model's depth (the first
// --layers layers of a deeper checkpoint are trained, as the ml-engineering guide's recipe
// trains a slice), rotary inv_freq buffers, and lm_head beside tied embeddings.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "facts/model_shape.hpp"
#include "model/llama_layout.hpp"

namespace ub {

enum class WeightsRead { values, names_and_shapes };

struct LoadedWeights {
  std::vector<float> flat;     // layout.total elements, padding 0 (empty: names and shapes only)
  int64_t file_tensors = 0;    // tensors in the files
  int64_t skipped_layers = 0;  // layers of the checkpoint past the model's depth, not read
};

// `path`: a .safetensors file, or a folder holding model.safetensors or a sharded checkpoint's
// model.safetensors.index.json. WorkError naming the file and the tensor for anything that does
// not match the model `m` (whose layout is `layout`). names_and_shapes checks all of that
// without reading the values.
LoadedWeights load_hf_weights(const std::filesystem::path& path, const ModelShape& m, const LlamaLayout& layout,
                              WeightsRead read = WeightsRead::values);

// Token ids from a safetensors file holding one integer tensor (or one named input_ids among
// others) of shape [rows, seqlen] or [seqlen]: the rows [first_row, first_row + rows) of it, each
// id checked against the vocabulary. WorkError naming the file for a shape or an id that does
// not fit.
std::vector<int32_t> load_token_ids(const std::filesystem::path& path, int64_t first_row, int64_t rows, int64_t seqlen,
                                    int64_t vocab);

}  // namespace ub
