// A measured step carried to another sequence length or depth of the same model on the same GPU, before
// `predict` scales it to another GPU: each bucket times the growth of its work (GEMMs by the dense
// FLOPs, attention by the attention FLOPs, element-wise work and the loss by the tokens, the
// optimizer and exposed communication by the parameters: unchanged, idle unchanged), and the
// attention bucket also by the attention kernel's own change of speed between the two lengths
// where the old GPU's attention runs measured both. What it leaves out (GEMM efficiency changing
// with the number of rows, kernels that are not linear in tokens) is what the leave-one-out
// validation measures (docs/predict.md).
#pragma once

#include <cstdint>

#include "analysis/predict/prediction.hpp"
#include "facts/model_shape.hpp"

namespace ub {

// `in` at `seqlen` tokens. UsageError when `in` has no sequence length.
StepInput project_to_seqlen(const StepInput& in, int64_t seqlen, const ModelShape& model,
                            const MeasuredRates& measured_on_its_gpu);

// `in` (measured at `in.layers` layers of `model`) at `layers` layers, the sequence length kept:
// GEMMs by the dense FLOPs (the lm_head's share does not grow with depth), attention by the
// attention FLOPs, element-wise work by the layers, the optimizer and exposed communication by
// the parameters (the embeddings do not grow), the loss, memory copies and idle unchanged.
// UsageError when `in` has no depth or sequence length, or `layers` is beyond the model's.
StepInput project_to_layers(const StepInput& in, int64_t layers, const ModelShape& model);

}  // namespace ub
