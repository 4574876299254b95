// A suite folder's manifest; see suite_manifest.hpp.
#include "records/suite_manifest.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include "base/error.hpp"
#include "base/file_place.hpp"
#include "base/json_text.hpp"
#include "base/text.hpp"
#include "records/fields.hpp"

namespace ub {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kFile = "manifest.json";
constexpr const char* kType = "upgradebench_suite";
constexpr int64_t kVersion = 1;

PartStatus status_named(const std::string& s, const std::string& where) {
  for (PartStatus p : {PartStatus::pending, PartStatus::done, PartStatus::failed, PartStatus::interrupted,
                       PartStatus::skipped}) {
    if (s == to_string(p)) return p;
  }
  throw WorkError(fmt::format("{}: a part's status \"{}\" is none of pending, done, failed, interrupted, skipped", where, s));
}

std::vector<std::string> strings(const Fields& f, const char* key) {
  std::vector<std::string> out;
  if (!f.has(key)) return out;
  if (!f.raw().at(key).is_array()) throw WorkError(fmt::format("{}: \"{}\" must be a list", f.where(), key));
  for (const json& x : f.raw().at(key)) {
    if (!x.is_string()) throw WorkError(fmt::format("{}: \"{}\" must be a list of strings", f.where(), key));
    out.push_back(x.get<std::string>());
  }
  return out;
}

SuiteWorkload read_workload(const Fields& f) {
  SuiteWorkload w;
  w.model = f.string("model");
  w.layers = f.count("layers");
  w.batch = f.count("batch");
  if (!f.raw().contains("seqlens") || !f.raw().at("seqlens").is_array()) {
    throw WorkError(fmt::format("{}: the workload has no list of \"seqlens\"", f.where()));
  }
  for (const json& s : f.raw().at("seqlens")) w.seqlens.push_back(Fields(json{{"seqlen", s}}, f.where()).count("seqlen"));
  w.checkpointing = f.boolean_or("checkpointing", false);
  w.master_weights = f.boolean_or("master_weights", true);
  w.mlp_tile = f.optional_count("mlp_tile").value_or(0);
  w.loss_chunk = f.optional_count("loss_chunk").value_or(0);
  w.train_args = strings(f, "train_args");
  return w;
}

ManifestPart read_part(const Fields& f) {
  ManifestPart p;
  p.name = f.string("name");
  // A part's name makes its log's and earlier records' file names: letters, digits and dashes.
  if (p.name.empty() || p.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos) {
    throw WorkError(fmt::format("{}: a part's name \"{}\" is not one a suite writes (lower-case letters, digits and "
                                "dashes): the manifest was edited", f.where(), printable(p.name)));
  }
  p.what = f.string_or("what", "");
  p.command = strings(f, "command");
  p.records = f.string("records");
  if (p.records.find('/') != std::string::npos || p.records == "..") {
    throw WorkError(fmt::format("{}: a part's records \"{}\" must be a file of the folder", f.where(), p.records));
  }
  p.estimate_s = f.optional_number("estimate_s").value_or(0);
  p.status = status_named(f.string("status"), f.where());
  if (auto c = f.optional_count("exit_code")) p.exit_code = static_cast<int>(*c);
  p.started = f.string_or("started", "");
  p.seconds = f.optional_number("seconds").value_or(0);
  p.why = f.string_or("why", "");
  return p;
}

}  // namespace

const char* to_string(PartStatus s) {
  switch (s) {
    case PartStatus::pending: return "pending";
    case PartStatus::done: return "done";
    case PartStatus::failed: return "failed";
    case PartStatus::interrupted: return "interrupted";
    case PartStatus::skipped: return "skipped";
  }
  return "?";
}

std::string SuiteWorkload::differs_from(const SuiteWorkload& o) const {
  std::vector<std::string> d;
  auto check = [&](const char* what, const auto& here, const auto& there) {
    if (here != there) d.push_back(fmt::format("{} {} vs {}", what, here, there));
  };
  check("model", model, o.model);
  check("layers", layers, o.layers);
  check("batch", batch, o.batch);
  check("checkpointing", checkpointing, o.checkpointing);
  check("master weights", master_weights, o.master_weights);
  check("MLP tile", mlp_tile, o.mlp_tile);
  check("loss chunk", loss_chunk, o.loss_chunk);
  return fmt::format("{}", fmt::join(d, "; "));
}

std::vector<int64_t> ManifestPart::lengths_asked() const {
  std::vector<int64_t> lengths;
  const auto flag = std::find(command.begin(), command.end(), "--seqlens");
  if (flag == command.end() || flag + 1 == command.end()) return lengths;
  for (const std::string& item : split(*(flag + 1), ',')) {
    int64_t v = 0;
    if (std::from_chars(item.data(), item.data() + item.size(), v).ptr == item.data() + item.size()) lengths.push_back(v);
  }
  return lengths;
}

std::vector<std::string> SuiteWorkload::departures_of(const RunLog& r) const {
  std::vector<std::string> differs;
  if (r.batch != batch) differs.push_back(fmt::format("batch {} vs {}", r.batch, batch));
  if (layers > 0 && r.layers && *r.layers != layers) differs.push_back(fmt::format("layers {} vs {}", *r.layers, layers));
  const auto check = [&](const char* key, const std::string& manifest) {
    const auto it = r.config.find(key);
    if (it == r.config.end()) return;
    const std::string v = it->second == "true" ? "1" : it->second == "false" ? "0" : it->second;
    if (v != manifest) differs.push_back(fmt::format("{} {} vs {}", key, printable(v), manifest));
  };
  check("activation_checkpointing", checkpointing ? "1" : "0");
  check("master_weights", master_weights ? "1" : "0");
  check("mlp_tile", std::to_string(mlp_tile));
  check("loss_chunk", std::to_string(loss_chunk));
  return differs;
}

const ManifestPart* SuiteManifest::part(const std::string& name) const {
  for (const ManifestPart& p : parts) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

bool SuiteManifest::complete() const {
  for (const ManifestPart& p : parts) {
    if (p.status != PartStatus::done && p.status != PartStatus::skipped) return false;
  }
  return !parts.empty();
}

void to_json(json& j, const SuiteManifest& m) {
  const SuiteWorkload& w = m.workload;
  json parts = json::array();
  for (const ManifestPart& p : m.parts) {
    json pj = {{"name", p.name},       {"what", p.what},         {"command", p.command},
               {"records", p.records}, {"estimate_s", p.estimate_s}, {"status", to_string(p.status)}};
    if (p.exit_code) pj["exit_code"] = *p.exit_code;
    if (!p.started.empty()) pj["started"] = p.started, pj["seconds"] = p.seconds;
    if (!p.why.empty()) pj["why"] = p.why;
    parts.push_back(pj);
  }
  j = {{"type", kType},
       {"version", kVersion},
       {"created", m.created},
       {"updated", m.updated},
       {"argv", m.argv},
       {"workload",
        {{"model", w.model},
         {"layers", w.layers},
         {"batch", w.batch},
         {"seqlens", w.seqlens},
         {"checkpointing", w.checkpointing},
         {"master_weights", w.master_weights},
         {"mlp_tile", w.mlp_tile},
         {"loss_chunk", w.loss_chunk},
         {"train_args", w.train_args}}},
       {"budget_s", m.budget_s ? json(*m.budget_s) : json()},
       {"dropped", m.dropped},
       {"parts", parts}};
}

bool is_suite_folder(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && fs::is_regular_file(dir / kFile, ec);
}

SuiteManifest read_suite_manifest(const fs::path& dir) {
  const fs::path path = dir / kFile;
  const std::string where = path.string();
  std::error_code ec;
  if (fs::exists(path, ec) && !fs::is_regular_file(path, ec)) {
    throw UsageError(fmt::format("{}: not a file: a suite's manifest is the file `suite` wrote", where));
  }
  if (!fs::exists(path, ec)) {
    throw UsageError(fmt::format("{}: not a suite folder (no {}; `upgradebench suite --out DIR` makes one)", dir.string(), kFile));
  }
  const json j = parse_json_text(read_json_file(path, "a suite's manifest"), where);
  if (!j.is_object() || !j.contains("version") || !j["version"].is_number_integer()) {
    throw UsageError(fmt::format("{}: not a suite manifest (a JSON object with a whole-number \"version\")", where));
  }
  const Fields f(j, where);
  // Not a suite's manifest, or one of another version: a folder this build does not read (exit 2).
  if (f.string_or("type", "") != kType) throw UsageError(fmt::format("{}: not a suite manifest (type is not \"{}\")", where, kType));
  if (f.count("version") != kVersion) {
    throw UsageError(fmt::format("{}: manifest version {} (this build reads {})", where, f.count("version"), kVersion));
  }
  SuiteManifest m;
  m.created = f.string_or("created", "");
  m.updated = f.string_or("updated", "");
  m.argv = strings(f, "argv");
  m.workload = read_workload(f.object("workload"));
  m.budget_s = f.optional_number("budget_s");
  m.dropped = strings(f, "dropped");
  if (!j.contains("parts") || !j.at("parts").is_array()) throw WorkError(fmt::format("{}: no list of \"parts\"", where));
  for (size_t i = 0; i < j.at("parts").size(); ++i) {
    m.parts.push_back(read_part(Fields(j.at("parts")[i], fmt::format("{}: part {}", where, i + 1))));
  }
  // `suite` writes every part of its plan before it runs one: the parts no budget leaves out are
  // in every manifest, and only a decomposition is ever skipped. A manifest without one of them,
  // or with another part skipped, would read as a finished suite that measured less.
  for (const char* always : {"env", "mamf", "mamf-step", "bandwidth", "attention", "sweep", "decompose-short"}) {
    if (!m.part(always)) {
      throw WorkError(fmt::format("{}: no part {}, which every suite's plan has: the manifest was edited", where, always));
    }
  }
  for (const ManifestPart& p : m.parts) {
    if (p.status == PartStatus::skipped && p.name.rfind("decompose-", 0) != 0) {
      throw WorkError(fmt::format("{}: part {} is skipped, where a suite skips only a decomposition: the manifest was edited",
                                  where, printable(p.name)));
    }
  }
  return m;
}

void write_suite_manifest(const fs::path& dir, const SuiteManifest& m) {
  write_file_replacing(dir / kFile, json(m).dump(2) + "\n", "the suite's manifest");
}

}  // namespace ub
