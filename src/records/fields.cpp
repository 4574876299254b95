// Field access with located errors; see fields.hpp.
#include "records/fields.hpp"

#include <fmt/format.h>

#include <cmath>

#include "base/error.hpp"

namespace ub {

using nlohmann::json;

Fields::Fields(const json& record, std::string where) : j_(record), where_(std::move(where)) {
  if (!j_.is_object()) throw WorkError(fmt::format("{}: a record must be a JSON object", where_));
}

bool Fields::has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }

double Fields::number(const char* key) const {
  if (!j_.contains(key) || !j_.at(key).is_number()) {
    throw WorkError(fmt::format("{}: record has no numeric \"{}\"", where_, key));
  }
  return j_.at(key).get<double>();
}

std::optional<double> Fields::optional_number(const char* key) const {
  if (!has(key)) return std::nullopt;
  if (!j_.at(key).is_number()) {
    throw WorkError(fmt::format("{}: \"{}\" must be a number, got {}", where_, key, j_.at(key).dump()));
  }
  return j_.at(key).get<double>();
}

double Fields::positive(const char* key) const {
  const double v = number(key);
  if (!(v > 0) || !std::isfinite(v)) {
    throw WorkError(fmt::format("{}: {} must be a positive finite number", where_, key));
  }
  return v;
}

int64_t Fields::count(const char* key) const {
  const double v = number(key);
  if (!(v >= 0 && v <= 1e15) || v != std::floor(v)) {
    throw WorkError(fmt::format("{}: \"{}\" must be a whole number from 0 to 1e15, got {}", where_, key,
                                j_.at(key).dump()));
  }
  return static_cast<int64_t>(v);
}

int64_t Fields::positive_count(const char* key) const {
  const int64_t v = count(key);
  if (v == 0) throw WorkError(fmt::format("{}: \"{}\" must be a whole number from 1 to 1e15, got 0", where_, key));
  return v;
}

std::optional<int64_t> Fields::optional_count(const char* key) const {
  if (!has(key)) return std::nullopt;
  return count(key);
}

std::string Fields::string(const char* key) const {
  if (!j_.contains(key) || !j_.at(key).is_string()) {
    throw WorkError(fmt::format("{}: record has no string \"{}\"", where_, key));
  }
  return j_.at(key).get<std::string>();
}

std::string Fields::string_or(const char* key, const std::string& fallback) const {
  if (!has(key)) return fallback;
  return string(key);
}

bool Fields::boolean_or(const char* key, bool fallback) const {
  if (!has(key)) return fallback;
  if (!j_.at(key).is_boolean()) {
    throw WorkError(fmt::format("{}: \"{}\" must be true or false, got {}", where_, key, j_.at(key).dump()));
  }
  return j_.at(key).get<bool>();
}

Fields Fields::object(const char* key) const {
  if (!j_.contains(key) || !j_.at(key).is_object()) {
    throw WorkError(fmt::format("{}: record has no object \"{}\"", where_, key));
  }
  return Fields(j_.at(key), where_);
}

std::optional<Fields> Fields::optional_object(const char* key) const {
  if (!has(key)) return std::nullopt;
  return object(key);
}

}  // namespace ub
