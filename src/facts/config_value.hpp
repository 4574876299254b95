// Typed reads of one config.json field, each failure a WorkError naming the file and the field
// (nlohmann's own errors name neither). Shared by the trunk's parser (model_shape.cpp) and the
// per-layer one (layer_pattern.cpp).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "base/error.hpp"

namespace ub::config_value {

// Every dimension of a model is at most 2^24 (the largest vocabularies are ~2^18): products of a
// few of them (parameters, activations per token) then stay far inside 64 bits and exact in a double.
inline constexpr int64_t kMaxDimension = int64_t{1} << 24;

inline int64_t required_positive(const nlohmann::json& c, const char* key, const std::string& where) {
  if (!c.contains(key)) throw WorkError(fmt::format("{}: missing required key \"{}\"", where, key));
  const nlohmann::json& v = c.at(key);
  if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<int64_t>() > kMaxDimension) {
    throw WorkError(fmt::format("{}: \"{}\" must be a positive integer up to {}, got {}", where, key, kMaxDimension,
                                v.dump()));
  }
  return v.get<int64_t>();
}

// `fallback` when absent or null; a WorkError when the field holds another type.
template <class T>
T optional_typed(const nlohmann::json& c, const char* key, T fallback, const std::string& where) {
  if (!c.contains(key) || c.at(key).is_null()) return fallback;
  const nlohmann::json& v = c.at(key);
  const bool ok = std::is_same_v<T, bool>          ? v.is_boolean()
                  : std::is_same_v<T, std::string> ? v.is_string()
                  : std::is_integral_v<T>          ? v.is_number_integer()
                                                   : v.is_number();
  if (!ok) {
    const char* kind = std::is_same_v<T, bool>          ? "true or false"
                       : std::is_same_v<T, std::string> ? "a string"
                       : std::is_integral_v<T>          ? "an integer"
                                                        : "a number";
    throw WorkError(fmt::format("{}: \"{}\" must be {}, got {}", where, key, kind, v.dump()));
  }
  return v.get<T>();
}

inline int64_t optional_positive(const nlohmann::json& c, const char* key, int64_t fallback, const std::string& where) {
  if (!c.contains(key) || c.at(key).is_null()) return fallback;
  return required_positive(c, key, where);
}

// A non-negative integer up to kMaxDimension (counts that may be zero: shared experts, dense layers).
inline int64_t optional_count(const nlohmann::json& c, const char* key, const std::string& where) {
  const int64_t v = optional_typed(c, key, int64_t{0}, where);
  if (v < 0 || v > kMaxDimension) {
    throw WorkError(fmt::format("{}: \"{}\" must be an integer from 0 to {}, got {}", where, key, kMaxDimension, v));
  }
  return v;
}

}  // namespace ub::config_value
