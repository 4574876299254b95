// One GPU card under two names: two inputs whose records name the same card (its UUID) as two GPU
// models. One of them misnames it, and a comparison of the two would call one card's figures an
// upgrade. Under one name it is one GPU measured twice, which `decide` says as SAME GPU.
#pragma once

#include <set>
#include <string>

#include "base/line_source.hpp"

namespace ub::cli {

struct GpuSide {
  std::string where, name;      // the input, and the GPU model it names
  std::set<std::string> uuids;  // the cards its records name
};

// The cards our records' context records name in `t`, and the GPU model of the first (empty for a
// peer's log, which names no card).
GpuSide gpu_side(const LineSource& t);

// UsageError "<command>: A (GPU) and B (GPU) were measured on one GPU, UUID, under two names" when
// a card of `a` is one of `b`'s and they name two models. A UUID as NVML writes it ("GPU-5d5e…")
// or as PyTorch does (without "GPU-"), in any case, with dashes, braces or spaces: its hex digits.
void refuse_one_card_two_names(const GpuSide& a, const GpuSide& b, const std::string& command);

}  // namespace ub::cli
