// Reader of the canonical records as a training run; see records_reader.hpp.
#include "core/readers/records_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/text.hpp"

namespace ub {

namespace {

using nlohmann::json;

std::string scalar_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

void read_context(const json& c, RunLog& run, const std::string& where) {
  if (!c.contains("gpus") || !c.at("gpus").is_array() || c.at("gpus").empty()) {
    throw WorkError(fmt::format("{}: context record names no GPU", where));
  }
  expect_one_gpu(run.gpu, c.at("gpus").at(0).value("name", ""), where);
  if (c.contains("stack")) {
    for (const auto& [k, v] : c.at("stack").items()) {
      if (v.is_object()) {
        if (v.contains("version") && !v.at("version").is_null()) run.software[k] = scalar_text(v.at("version"));
      } else if (!v.is_null()) {
        run.software[k] = scalar_text(v);
      }
    }
  }
  if (c.contains("tool")) run.software["upgradebench"] = scalar_text(c.at("tool"));
  if (c.contains("provenance") && c.at("provenance").is_string()) run.provenance = c.at("provenance").get<std::string>();
  read_config_text(c, run.config);
  if (c.contains("config") && c.at("config").is_object()) {
    const json& cfg = c.at("config");
    if (cfg.contains("model") && cfg.at("model").is_string()) run.model = cfg.at("model").get<std::string>();
    if (cfg.contains("layers") && cfg.at("layers").is_number_integer()) run.layers = cfg.at("layers").get<int64_t>();
    if (cfg.contains("batch") && cfg.at("batch").is_number_integer()) run.batch = cfg.at("batch").get<int64_t>();
    if (cfg.contains("dtype") && cfg.at("dtype").is_string()) run.dtype = cfg.at("dtype").get<std::string>();
  }
}

RunPoint& point_for(RunLog& run, int64_t seqlen, int line) {
  for (RunPoint& p : run.points) {
    if (p.seqlen == seqlen) return p;
  }
  run.points.push_back(RunPoint{});
  run.points.back().seqlen = seqlen;
  run.points.back().line = line;
  return run.points.back();
}

// A sequence length or step index: a whole number in a sane range (a double out of the int64
// range would be undefined behaviour to convert).
int64_t required_count(const json& r, const char* key, const std::string& where) {
  if (!r.contains(key) || !r.at(key).is_number()) {
    throw WorkError(fmt::format("{}: record has no numeric \"{}\"", where, key));
  }
  const double v = r.at(key).get<double>();
  if (!(v >= 0 && v <= 1e15) || v != static_cast<double>(static_cast<int64_t>(v))) {
    throw WorkError(fmt::format("{}: \"{}\" must be a whole number from 0 to 1e15, got {}", where, key, r.at(key).dump()));
  }
  return static_cast<int64_t>(v);
}

double required_number(const json& r, const char* key, const std::string& where) {
  if (!r.contains(key) || !r.at(key).is_number()) {
    throw WorkError(fmt::format("{}: record has no numeric \"{}\"", where, key));
  }
  return r.at(key).get<double>();
}

std::optional<double> optional_number(const json& r, const char* key) {
  return r.contains(key) && r.at(key).is_number() ? std::optional<double>(r.at(key).get<double>())
                                                  : std::nullopt;
}

}  // namespace

bool looks_like_records(const TextLines& t) {
  for (const std::string& l : t.lines) {
    const std::string s = trim(l);
    if (s.empty()) continue;
    return s.rfind("{", 0) == 0 && s.find("\"type\"") != std::string::npos &&
           s.find("\"context\"") != std::string::npos;
  }
  return false;
}

void read_config_text(const json& context, std::map<std::string, std::string>& out) {
  if (!context.contains("config") || !context.at("config").is_object()) return;
  for (const auto& [k, v] : context.at("config").items()) {
    if (!v.is_structured()) out[k] = scalar_text(v);
  }
}

RunLog read_records(const TextLines& t) {
  RunLog run;
  run.path = t.path;
  run.format = "upgradebench";
  bool seen_context = false;
  size_t skipped = 0;
  for (size_t i = 0; i < t.lines.size(); ++i) {
    const std::string line = trim(t.lines[i]);
    const std::string where = t.where(i);
    if (line.empty()) continue;
    json r;
    try {
      r = json::parse(line);
    } catch (const json::exception&) {
      if (t.is_last(i) && t.last_line_unterminated) {
        run.warnings.push_back(fmt::format("{}: truncated last line ignored", where));
        continue;
      }
      throw WorkError(fmt::format("{}: a record that is not valid JSON", where));
    }
    if (!r.is_object() || !r.contains("type") || !r.at("type").is_string()) {
      throw WorkError(fmt::format("{}: a record must be a JSON object with a \"type\"", where));
    }
    // A field of the wrong type anywhere in a record is an error naming the line, not a crash.
    try {
      const std::string type = r.at("type").get<std::string>();
      if (type == "context") {
        read_context(r, run, where);
        seen_context = true;
        continue;
      }
      if (!seen_context) throw WorkError(fmt::format("{}: the first record must be the context record", where));
      if (type == "train_step") {
        RunPoint& p = point_for(run, required_count(r, "seqlen", where), static_cast<int>(i + 1));
        StepRecord s;
        s.step = required_count(r, "step", where);
        s.warmup = r.value("warmup", false);
        s.exec_time_ms = required_number(r, "exec_time_ms", where);
        if (!(s.exec_time_ms > 0) || !std::isfinite(s.exec_time_ms)) {
          throw WorkError(fmt::format("{}: exec_time_ms must be a positive finite number", where));
        }
        s.tflops = optional_number(r, "tflops");
        s.peak_mem_gib = optional_number(r, "peak_mem_gib");
        s.loss = optional_number(r, "loss");
        p.steps.push_back(s);
      } else if (type == "train_oom") {
        RunPoint& p = point_for(run, required_count(r, "seqlen", where), static_cast<int>(i + 1));
        p.oom_message = r.value("what", std::string("out of memory"));
      } else {
        ++skipped;
      }
    } catch (const json::exception& e) {
      throw WorkError(fmt::format("{}: a record field has the wrong type: {}", where, e.what()));
    }
  }
  if (!seen_context) throw WorkError(fmt::format("{}: no context record: not an upgradebench records file", t.path));
  if (run.points.empty()) throw WorkError(fmt::format("{}: no train_step or train_oom records", t.path));
  for (RunPoint& p : run.points) {
    if (p.steady().empty()) {
      if (p.oom_message.empty()) {
        throw WorkError(fmt::format("{}:{}: seqlen {} has no steady steps", t.path, p.line, p.seqlen));
      }
      p.status = PointStatus::oom;
    }
  }
  std::sort(run.points.begin(), run.points.end(),
            [](const RunPoint& a, const RunPoint& b) { return a.seqlen < b.seqlen; });
  if (skipped) run.warnings.push_back(fmt::format("{} records of other types skipped", skipped));
  return run;
}

}  // namespace ub
