// Dtype names: one table, read both ways.
#include "facts/dtype.hpp"

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/text.hpp"

namespace ub {

namespace {
constexpr std::array<std::string_view, kAllDtypes.size()> kNames = {
    "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp6", "fp4", "nvfp4", "mxfp8", "mxfp4"};
}  // namespace

std::string_view to_string(Dtype d) { return kNames[static_cast<size_t>(d)]; }

std::vector<std::string> dtype_names(const std::vector<Dtype>& ds) {
  std::vector<std::string> out;
  for (Dtype d : ds) out.emplace_back(to_string(d));
  return out;
}

std::optional<Dtype> parse_dtype(std::string_view name) {
  const std::string lowered = to_lower(trim(name));
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (lowered == kNames[i]) return kAllDtypes[i];
  }
  return std::nullopt;
}

std::string dtype_from_torch_name(std::string name) {
  if (name.rfind("torch.", 0) == 0) name = name.substr(6);
  static const std::pair<const char*, const char*> names[] = {
      {"bfloat16", "bf16"}, {"float16", "fp16"}, {"half", "fp16"}, {"float32", "fp32"}, {"float", "fp32"},
      {"float8_e4m3fn", "fp8"}, {"float8_e4m3fnuz", "fp8"}, {"float8_e5m2", "fp8 (e5m2)"}, {"float4_e2m1fn_x2", "fp4"}};
  for (const auto& [torch, ours] : names) {
    if (name == torch) return ours;
  }
  return name;
}

std::vector<Dtype> parse_dtype_list(std::string_view text, std::string_view what) {
  std::vector<Dtype> out;
  for (const std::string& item : split(text, ',')) {
    auto d = parse_dtype(item);
    if (!d) {
      throw UsageError(fmt::format("{}: unknown dtype '{}' (known: {})", what, item,
                                   fmt::join(kNames, ", ")));
    }
    out.push_back(*d);
  }
  if (out.empty()) throw UsageError(fmt::format("{}: no dtype given", what));
  return out;
}

}  // namespace ub
