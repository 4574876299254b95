// The seed's sweep-log reader; the format is stated in seed_sweep.hpp.
#include "core/readers/seed_sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/key_values.hpp"
#include "core/text.hpp"

namespace ub {

namespace {

using nlohmann::json;

constexpr std::string_view kBlockStart = "===== seq_len=";

// A number that may be written as a JSON number or a JSON string ("140.60").
std::optional<double> number(const json& obj, const char* key, const std::string& where,
                             bool required) {
  if (!obj.contains(key) || obj.at(key).is_null()) {
    if (required) throw WorkError(fmt::format("{}: step has no \"{}\"", where, key));
    return std::nullopt;
  }
  const json& v = obj.at(key);
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string s = trim(v.get<std::string>());
    char* end = nullptr;
    errno = 0;
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size() && errno == 0 && std::isfinite(d)) return d;
  }
  throw WorkError(fmt::format("{}: \"{}\" is not a number: {}", where, key, v.dump()));
}

bool boolean(const json& obj, const char* key, const std::string& where) {
  if (!obj.contains(key)) return false;
  const json& v = obj.at(key);
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_string()) {
    const std::string s = to_lower(v.get<std::string>());
    if (s == "true") return true;
    if (s == "false") return false;
  }
  if (v.is_number_integer()) return v.get<int64_t>() != 0;
  throw WorkError(fmt::format("{}: \"{}\" is not a boolean: {}", where, key, v.dump()));
}

bool says_out_of_memory(const std::string& line) {
  return to_lower(line).find("out of memory") != std::string::npos ||
         line.find("Error") != std::string::npos;
}

}  // namespace

std::optional<std::string> seed_model_preset(const std::string& size) {
  const std::string s = to_lower(trim(size));
  if (s == "8b") return "llama-3.1-8b";
  if (s == "70b") return "llama-3.1-70b";
  if (s == "405b") return "llama-3.1-405b";
  if (s == "1b") return "llama-3.2-1b";
  if (s == "3b") return "llama-3.2-3b";
  return std::nullopt;
}

bool looks_like_seed_sweep(const TextLines& t) {
  return std::any_of(t.lines.begin(), t.lines.end(),
                     [](const std::string& l) { return trim(l).rfind(kBlockStart, 0) == 0; });
}

RunLog read_seed_sweep(const TextLines& t) {
  RunLog run;
  run.path = t.path;
  run.format = "seed-sweep";
  size_t blank = 0, other = 0, unknown_keys = 0;
  int gpu_line = 0;
  static const std::set<std::string> kStepKeys = {"step", "warmup", "exec_time_ms", "tflops",
                                                  "peak_mem_gib", "loss"};
  RunPoint* cur = nullptr;
  for (size_t i = 0; i < t.lines.size(); ++i) {
    const std::string line = trim(t.lines[i]);
    const std::string where = t.where(i);
    if (line.empty()) {
      ++blank;
      continue;
    }
    if (line.rfind(kBlockStart, 0) == 0) {
      std::string rest = line.substr(kBlockStart.size());
      const size_t eq = rest.find(' ');
      const std::string digits = trim(rest.substr(0, eq));
      if (digits.empty() || digits.size() > 15 || digits.find_first_not_of("0123456789") != std::string::npos) {
        throw WorkError(fmt::format("{}: expected `===== seq_len=<integer> =====`, got \"{}\"", where, line));
      }
      const int64_t s = std::stoll(digits);
      for (const RunPoint& p : run.points) {
        if (p.seqlen == s) {
          throw WorkError(fmt::format("{}: seq_len={} appears twice (first at line {})", where, s, p.line));
        }
      }
      run.points.push_back(RunPoint{});
      cur = &run.points.back();
      cur->seqlen = s;
      cur->line = static_cast<int>(i + 1);
      continue;
    }
    if (line.rfind("# env:", 0) == 0) {
      for (const auto& [k, v] : parse_key_values(line.substr(6))) {
        auto [it, fresh] = run.software.emplace(k, v);
        if (!fresh && it->second != v) {
          throw WorkError(fmt::format("{}: software changed within one log: {} was {}, now {}",
                                      where, k, it->second, v));
        }
      }
      continue;
    }
    if (line.rfind("# provenance:", 0) == 0) {
      run.provenance = trim(line.substr(13));
      continue;
    }
    if (line[0] == '#') {
      auto kv = parse_key_values(line.substr(1));
      if (kv.contains("gpu")) {
        if (!cur) throw WorkError(fmt::format("{}: a `# gpu=` header before any `===== seq_len=` block", where));
        if (run.gpu.empty()) gpu_line = static_cast<int>(i + 1);
        expect_one_gpu(run.gpu, kv["gpu"], fmt::format("{} (first GPU named at line {})", where, gpu_line));
        cur->header = kv;
      }
      continue;
    }
    if (line[0] == '{') {
      json obj;
      try {
        obj = json::parse(line);
      } catch (const json::exception&) {
        if (t.is_last(i) && t.last_line_unterminated) {
          run.warnings.push_back(fmt::format("{}: truncated last line ignored", where));
          continue;
        }
        throw WorkError(fmt::format("{}: a step object that is not valid JSON: {}", where,
                                    line.substr(0, 80)));
      }
      if (!cur) throw WorkError(fmt::format("{}: a step before any `===== seq_len=` block", where));
      if (!obj.is_object()) throw WorkError(fmt::format("{}: a step must be a JSON object", where));
      StepRecord s;
      const double step = number(obj, "step", where, false).value_or(static_cast<double>(cur->steps.size()));
      if (!(step >= 0 && step <= 1e15)) throw WorkError(fmt::format("{}: \"step\" out of range", where));
      s.step = static_cast<int64_t>(step);
      s.warmup = boolean(obj, "warmup", where);
      s.exec_time_ms = *number(obj, "exec_time_ms", where, true);
      if (!(s.exec_time_ms > 0) || !std::isfinite(s.exec_time_ms)) {
        throw WorkError(fmt::format("{}: exec_time_ms must be a positive finite number", where));
      }
      s.tflops = number(obj, "tflops", where, false);
      s.peak_mem_gib = number(obj, "peak_mem_gib", where, false);
      s.loss = number(obj, "loss", where, false);
      for (const auto& [k, v] : obj.items()) unknown_keys += !kStepKeys.contains(k);
      cur->steps.push_back(s);
      continue;
    }
    if (says_out_of_memory(line) && cur) {
      if (cur->oom_message.empty()) cur->oom_message = line.substr(0, 200);
      continue;
    }
    ++other;
  }
  if (run.points.empty()) {
    throw WorkError(fmt::format("{}: no `===== seq_len=<n> =====` block: not a sweep log", t.path));
  }
  for (RunPoint& p : run.points) {
    if (p.steady().empty()) {
      if (p.oom_message.empty()) {
        throw WorkError(fmt::format("{}:{}: seq_len={} has no steady steps and no out-of-memory line",
                                    t.path, p.line, p.seqlen));
      }
      p.status = PointStatus::oom;
    } else if (!p.oom_message.empty()) {
      run.warnings.push_back(fmt::format("{}:{}: seq_len={} has steps and an error line; its steps are kept",
                                         t.path, p.line, p.seqlen));
    }
  }
  std::sort(run.points.begin(), run.points.end(),
            [](const RunPoint& a, const RunPoint& b) { return a.seqlen < b.seqlen; });
  // Run-wide configuration from the first header.
  for (const RunPoint& p : run.points) {
    if (p.header.empty()) continue;
    for (const auto& [k, v] : p.header) {
      if (k != "gpu" && k != "seq_len") run.config[k] = v;
    }
    break;
  }
  if (run.config.contains("model_size")) {
    run.model = seed_model_preset(run.config["model_size"]);
    if (!run.model) run.warnings.push_back(fmt::format("model_size={} is not a size the seed names; attention share unknown", run.config["model_size"]));
  }
  if (run.config.contains("batch_size")) {
    const std::string& b = run.config["batch_size"];
    if (b.empty() || b.size() > 15 || b.find_first_not_of("0123456789") != std::string::npos || std::stoll(b) <= 0) {
      throw WorkError(fmt::format("{}: batch_size={} is not a positive integer", t.path, b));
    }
    run.batch = std::stoll(b);
  }
  if (run.gpu.empty()) run.warnings.push_back("no `# gpu=` header: the GPU is unknown");
  if (blank) run.warnings.push_back(fmt::format("{} blank lines", blank));
  if (other) run.warnings.push_back(fmt::format("{} other log lines ignored", other));
  if (unknown_keys) run.warnings.push_back(fmt::format("{} unknown step keys ignored", unknown_keys));
  return run;
}

}  // namespace ub
