// Reading the fields of one JSON record with errors that name the file, the line and the field,
// so a record of the wrong shape is a one-line WorkError and never a crash or a silent default.
// Every typed record's from_json reads through this; writing needs nothing (nlohmann's to_json).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace ub {

class Fields {
 public:
  // `where` is "path:line" (or any text naming the record) for the messages.
  Fields(const nlohmann::json& record, std::string where);

  const nlohmann::json& raw() const { return j_; }
  const std::string& where() const { return where_; }
  bool has(const char* key) const;  // present and not null

  // A number (JSON number); required ones throw when absent or of another type.
  double number(const char* key) const;
  std::optional<double> optional_number(const char* key) const;
  // A positive finite number (times, rates).
  double positive(const char* key) const;
  // A whole number from 0 to 1e15 (sequence lengths, step indices, byte counts); a double out of
  // the int64 range would be undefined behaviour to convert, so it is refused instead.
  int64_t count(const char* key) const;
  std::optional<int64_t> optional_count(const char* key) const;
  // A whole number from 1 to 1e15 (a sequence length).
  int64_t positive_count(const char* key) const;
  std::string string(const char* key) const;
  std::string string_or(const char* key, const std::string& fallback) const;
  bool boolean_or(const char* key, bool fallback) const;
  // A nested object, read with the same location.
  Fields object(const char* key) const;
  std::optional<Fields> optional_object(const char* key) const;

 private:
  const nlohmann::json& j_;
  std::string where_;
};

// null for an empty optional, the value otherwise (what every writer puts for "unknown").
template <class T>
nlohmann::json or_null(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

}  // namespace ub
