// What a file's numbers are; see provenance.hpp.
#include "records/provenance.hpp"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/text.hpp"

namespace ub {

namespace {

constexpr size_t kHeadLines = 32;  // provenance is said at the top
constexpr const char* kNoWords = "says it is not measurements, in no more words";

}  // namespace

std::optional<std::string> provenance_line_note(std::string_view line) {
  const std::string text = trim(std::string(line));
  if (text.empty() || text[0] != '#') return std::nullopt;
  const std::string rest = trim(text.substr(1));
  constexpr std::string_view word = "provenance";
  if (rest.size() < word.size() || to_lower(rest.substr(0, word.size())) != word) return std::nullopt;
  const std::string after = trim(rest.substr(word.size()));
  if (after.empty() || after[0] != ':') return std::nullopt;
  const std::string note = trim(after.substr(1));
  return note.empty() ? std::string(kNoWords) : note;
}

std::optional<std::string> provenance_field_note(const nlohmann::json& value, const std::string& where) {
  if (value.is_null()) return std::nullopt;
  if (!value.is_string()) {
    throw WorkError(fmt::format("{}: \"provenance\" is {}, not text: what the numbers are cannot be read", where,
                                value.dump()));
  }
  const std::string note = trim(value.get<std::string>());
  return note.empty() ? std::string(kNoWords) : note;
}

const char* Provenance::tag() const {
  switch (origin) {
    case Origin::measured: return "MEASURED";
    case Origin::predicted: return "PREDICTED";
    case Origin::example: return "EXAMPLE DATA";
  }
  return "?";
}

Provenance read_provenance(const LineSource& t) {
  Provenance p;
  size_t n = 0;
  t.scan([&](const Line& line) {
    const std::string text = trim(std::string(line.text));
    if (const auto note = provenance_line_note(text)) {
      p.origin = Origin::example, p.note = *note;
      return false;
    }
    if (!text.empty() && text.front() == '{') {
      const auto j = nlohmann::json::parse(text, nullptr, false);
      const std::string type = j.is_object() && j.contains("type") && j["type"].is_string() ? j["type"].get<std::string>() : "";
      if (type == "context" && j.contains("provenance") && !j["provenance"].is_null()) {
        p.origin = Origin::example;
        p.note = j["provenance"].is_string() ? provenance_field_note(j["provenance"], "").value_or("") : j["provenance"].dump();
        return false;
      }
      if (type.rfind("prediction", 0) == 0) {
        p.origin = Origin::predicted, p.note = "predicted by upgradebench predict, not measured";
        return false;
      }
    }
    return ++n < kHeadLines;
  });
  return p;
}

std::string not_measured_line(const std::string& path, const Provenance& p) {
  return std::string(p.tag()) + ": " + printable(path) + ": " + p.note;
}

Provenance weaker(const Provenance& a, const Provenance& b) {
  auto rank = [](Origin o) { return o == Origin::example ? 2 : o == Origin::predicted ? 1 : 0; };
  return rank(b.origin) > rank(a.origin) ? b : a;
}

}  // namespace ub
