// What a file's numbers are; see provenance.hpp.
#include "records/provenance.hpp"

#include <nlohmann/json.hpp>

#include "base/text.hpp"

namespace ub {

namespace {

constexpr size_t kHeadLines = 32;  // provenance is said at the top

}  // namespace

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
    if (text.rfind("# provenance:", 0) == 0) {
      p.origin = Origin::example, p.note = trim(text.substr(13));
      return false;
    }
    if (!text.empty() && text.front() == '{') {
      const auto j = nlohmann::json::parse(text, nullptr, false);
      const std::string type = j.is_object() && j.contains("type") && j["type"].is_string() ? j["type"].get<std::string>() : "";
      if (type == "context" && j.contains("provenance") && j["provenance"].is_string()) {
        p.origin = Origin::example, p.note = j["provenance"].get<std::string>();
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
