// Numeric formats a GPU may execute matrix work in, by the names the catalog and the command line
// use. fp8 means the Hopper-style e4m3/e5m2 with per-tensor scales; mxfp8 / mxfp4 / nvfp4 are the
// block-scaled (microscaling) formats that Blackwell added.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ub {

enum class Dtype { fp32, tf32, fp16, bf16, fp8, int8, fp6, fp4, nvfp4, mxfp8, mxfp4 };

inline constexpr std::array<Dtype, 11> kAllDtypes = {
    Dtype::fp32, Dtype::tf32, Dtype::fp16, Dtype::bf16,  Dtype::fp8,  Dtype::int8,
    Dtype::fp6,  Dtype::fp4,  Dtype::nvfp4, Dtype::mxfp8, Dtype::mxfp4};

std::string_view to_string(Dtype d);
// Each dtype's name, in order.
std::vector<std::string> dtype_names(const std::vector<Dtype>& ds);
[[nodiscard]] std::optional<Dtype> parse_dtype(std::string_view name);
// Ours for a torch dtype name ("torch.bfloat16", "float8_e4m3fn": "bf16", "fp8"), as the guide's
// scripts write them; any other name as given.
std::string dtype_from_torch_name(std::string name);

// Parses "fp8,nvfp4"; throws UsageError naming `what` and the bad entry.
std::vector<Dtype> parse_dtype_list(std::string_view text, std::string_view what);

}  // namespace ub
