// Kernel name rules; see kernel_classes.hpp.
#include "analysis/decompose/kernel_classes.hpp"

#include <fmt/format.h>
#include <regex.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "base/error.hpp"
#include "base/json_text.hpp"
#include "base/regex_bounds.hpp"
#include "base/text.hpp"

namespace ub::trace {

std::string_view to_string(Bucket b) {
  switch (b) {
    case Bucket::gemm: return "gemm";
    case Bucket::attention: return "attention";
    case Bucket::elementwise: return "elementwise";
    case Bucket::loss: return "loss";
    case Bucket::optimizer: return "optimizer";
    case Bucket::routing: return "routing";
    case Bucket::other: return "other compute";
    case Bucket::communication: return "communication";
    case Bucket::memcpy: return "memory copies";
    case Bucket::idle: return "idle";
  }
  return "?";
}

std::optional<Bucket> parse_bucket(std::string_view name) {
  for (Bucket b : kAllBuckets) {
    if (to_string(b) == name) return b;
  }
  if (name == "other") return Bucket::other;
  if (name == "memcpy") return Bucket::memcpy;
  return std::nullopt;
}

bool is_compute(Bucket b) { return static_cast<int>(b) <= static_cast<int>(Bucket::other); }

struct KernelClasses::Rule {
  Bucket bucket = Bucket::other;
  std::string pattern;
  regex_t re{};
  bool compiled = false;
  Rule() = default;
  Rule(const Rule&) = delete;
  Rule& operator=(const Rule&) = delete;
  ~Rule() {
    if (compiled) regfree(&re);
  }
};

KernelClasses::KernelClasses() = default;
KernelClasses::~KernelClasses() = default;
KernelClasses::KernelClasses(KernelClasses&&) noexcept = default;
KernelClasses& KernelClasses::operator=(KernelClasses&&) noexcept = default;

size_t KernelClasses::rules() const { return rules_.size(); }

void KernelClasses::add_file(const std::filesystem::path& file, bool first) {
  const nlohmann::json root = parse_json_text(read_json_file(file, "a kernel classes file"), file.string());
  if (!root.is_object() || !root.contains("rules") || !root["rules"].is_array()) {
    throw UsageError(fmt::format("{}: kernel classes need {{\"rules\": [{{\"bucket\", \"pattern\"}}, ...]}}", file.string()));
  }
  for (const auto& [key, value] : root.items()) {
    if (key != "rules" && key != "about") {
      throw UsageError(fmt::format("{}: unknown key \"{}\" (a kernel classes file holds \"rules\" and an optional \"about\")",
                                   file.string(), key));
    }
  }
  // The file's patterns, before any is compiled: each within its bound, and all within theirs.
  int64_t cost = 0;
  for (const auto& r : root["rules"]) {
    if (r.is_object() && r.contains("pattern") && r["pattern"].is_string()) {
      cost += std::max<int64_t>(1, std::min(pattern_repetitions(r["pattern"].get<std::string>()), kMaxPatternRepetition));
    }
  }
  if (cost > kMaxPatternsCost) {
    throw UsageError(fmt::format("{}: its {} rules' patterns would cost too much to compile together ({} copies of "
                                 "what their {{m,n}} repetitions repeat, more than {}): fewer rules, or fewer counted "
                                 "repetitions", file.string(), root["rules"].size(), cost, kMaxPatternsCost));
  }
  std::vector<std::unique_ptr<Rule>> added;
  size_t i = 0;
  for (const auto& r : root["rules"]) {
    ++i;
    const std::string where = fmt::format("{}: rule {}", file.string(), i);
    if (!r.is_object() || !r.contains("bucket") || !r["bucket"].is_string() || !r.contains("pattern") ||
        !r["pattern"].is_string()) {
      throw UsageError(fmt::format("{}: needs a string \"bucket\" and a string \"pattern\"", where));
    }
    for (const auto& [key, value] : r.items()) {
      if (key != "bucket" && key != "pattern" && key != "covers") {
        throw UsageError(fmt::format("{}: unknown key \"{}\" (a rule holds \"bucket\", \"pattern\" and an optional \"covers\")",
                                     where, key));
      }
    }
    if (r["pattern"].get<std::string>().empty()) {
      throw UsageError(fmt::format("{}: an empty pattern would match every kernel", where));
    }
    const auto bucket = parse_bucket(r["bucket"].get<std::string>());
    if (!bucket || *bucket == Bucket::idle || *bucket == Bucket::memcpy) {
      throw UsageError(fmt::format("{}: unknown bucket \"{}\" (gemm, attention, elementwise, loss, optimizer, routing, other, "
                                   "communication)", where, r["bucket"].get<std::string>()));
    }
    auto rule = std::make_unique<Rule>();
    rule->bucket = *bucket;
    rule->pattern = r["pattern"].get<std::string>();
    if (const auto why = pattern_too_costly(rule->pattern)) {
      throw UsageError(fmt::format("{}: pattern \"{}\" would cost too much to compile: {}", where,
                                   printable(rule->pattern.substr(0, 80)), *why));
    }
    const int rc = regcomp(&rule->re, rule->pattern.c_str(), REG_EXTENDED | REG_ICASE | REG_NOSUB);
    if (rc != 0) {
      char msg[256];
      regerror(rc, &rule->re, msg, sizeof msg);
      throw UsageError(fmt::format("{}: pattern \"{}\" is not an extended regular expression: {}", where,
                                   rule->pattern, msg));
    }
    rule->compiled = true;
    added.push_back(std::move(rule));
  }
  if (first) {
    for (auto& r : rules_) added.push_back(std::move(r));
    rules_ = std::move(added);
  } else {
    for (auto& r : added) rules_.push_back(std::move(r));
  }
  cache_.clear();
}

Bucket KernelClasses::classify(const std::string& kernel_name) {
  if (const auto it = cache_.find(kernel_name); it != cache_.end()) return it->second;
  Bucket b = Bucket::other;
  for (const auto& r : rules_) {
    if (regexec(&r->re, kernel_name.c_str(), 0, nullptr, 0) == 0) {
      b = r->bucket;
      break;
    }
  }
  cache_.emplace(kernel_name, b);
  return b;
}

}  // namespace ub::trace
