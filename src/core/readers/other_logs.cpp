// Readers of attention, decomposition and MAMF logs; the formats are stated in other_logs.hpp.
#include "core/readers/other_logs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <cstdlib>
#include <regex>

#include "core/error.hpp"
#include "core/key_values.hpp"
#include "core/readers/records_reader.hpp"
#include "core/readers/seed_sweep.hpp"
#include "core/text.hpp"

namespace ub {

namespace {

using nlohmann::json;

const std::regex kShapeLine(R"(^\s*(\d+)\s*\|\s*([\d.]+)\(mean\)\s+([\d.]+)\(median\)\s+([\d.]+)\(max\)\s*@\s*(\d+)x(\d+)x(\d+))");
const std::regex kFooterLine(R"(^(mean|median|max):\s+([\d.]+)\s+TFLOPS\s+@\s+(\d+)x(\d+)x(\d+))");
const std::regex kBucketLine(R"(^(.+?)\s+([\d.]+)\s+TFLOP\s+([\d.]+)\s+ms\s+([\d.]+)\s+TFLOPS(?:\s+MFU\s+([\d.]+)%)?\s*$)");

double finite(double v, const std::string& where, const char* what) {
  if (!std::isfinite(v) || v < 0) throw WorkError(fmt::format("{}: {} must be a finite non-negative number", where, what));
  return v;
}

// A number matched by a [\d.]+ pattern ("..5" and "." match too): parsed, or a WorkError.
double parse_number(const std::string& text, const std::string& where, const char* what) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) {
    throw WorkError(fmt::format("{}: {} '{}' is not a number", where, what, text));
  }
  return finite(v, where, what);
}

double json_number(const json& o, const char* key, const std::string& where) {
  if (!o.contains(key) || !o.at(key).is_number()) {
    throw WorkError(fmt::format("{}: expected a number \"{}\"", where, key));
  }
  return finite(o.at(key).get<double>(), where, key);
}

bool any_line(const TextLines& t, const std::function<bool(const std::string&)>& f) {
  return std::any_of(t.lines.begin(), t.lines.end(), f);
}

int64_t count(const std::string& digits, const std::string& where) {
  if (digits.size() > 15) throw WorkError(fmt::format("{}: {} is too large", where, digits));
  return std::stoll(digits);
}

}  // namespace

std::string_view to_string(LogKind k) {
  switch (k) {
    case LogKind::training: return "a training log";
    case LogKind::attention: return "an attention micro-benchmark log";
    case LogKind::decomposition: return "a step decomposition";
    case LogKind::mamf: return "a MAMF log";
    case LogKind::unknown: return "not a log compare reads";
  }
  return "not a log compare reads";
}

namespace {

// Whether a line holds a record whose type starts with `type` ("mamf" finds mamf_summary too).
bool has_record_type(const TextLines& t, const std::string& type) {
  const std::string compact = "\"type\":\"" + type, spaced = "\"type\": \"" + type;
  return any_line(t, [&](const std::string& l) {
    return l.find(compact) != std::string::npos || l.find(spaced) != std::string::npos;
  });
}

}  // namespace

LogKind detect_log_kind(const TextLines& t) {
  if (looks_like_records(t)) {
    const bool train = any_line(t, [](const std::string& l) { return l.find("\"train_step\"") != std::string::npos || l.find("\"train_oom\"") != std::string::npos; });
    const bool mamf = has_record_type(t, "mamf");
    const bool attention = has_record_type(t, "attention");
    if (train) return LogKind::training;
    if (mamf) return LogKind::mamf;
    if (attention) return LogKind::attention;
    return LogKind::unknown;
  }
  if (looks_like_seed_sweep(t)) return LogKind::training;
  if (any_line(t, [](const std::string& l) { return l.find("\"fwd_tflops\"") != std::string::npos; })) return LogKind::attention;
  if (any_line(t, [](const std::string& l) { return trim(l).rfind("# wall step=", 0) == 0; })) return LogKind::decomposition;
  if (any_line(t, [](const std::string& l) { return l.find("(median)") != std::string::npos || l.find("=> the best outcomes were") != std::string::npos; })) {
    return LogKind::mamf;
  }
  return LogKind::unknown;
}

AttentionLog read_attention_log(const TextLines& t) {
  AttentionLog log;
  log.path = t.path;
  size_t ignored = 0;
  for (size_t i = 0; i < t.lines.size(); ++i) {
    const std::string line = trim(t.lines[i]);
    const std::string where = t.where(i);
    if (line.empty()) continue;
    if (line[0] == '#') {
      auto kv = parse_key_values(line.substr(1));
      if (kv.contains("gpu")) {
        expect_one_gpu(log.gpu, kv["gpu"], where);
        log.header = kv;
      }
      continue;
    }
    if (line[0] != '{') {
      ++ignored;
      continue;
    }
    json o;
    try {
      o = json::parse(line);
    } catch (const json::exception&) {
      if (t.is_last(i) && t.last_line_unterminated) {
        log.warnings.push_back(fmt::format("{}: truncated last line ignored", where));
        continue;
      }
      throw WorkError(fmt::format("{}: a result line that is not valid JSON", where));
    }
    if (!o.is_object()) throw WorkError(fmt::format("{}: a result line must be a JSON object", where));
    // Our own records (docs/records.md): the context record names the GPU; attention records carry
    // the same fields as the seed's lines; out-of-memory and other records are not results.
    if (o.contains("type")) {
      const std::string type = o.at("type").is_string() ? o.at("type").get<std::string>() : "";
      if (type == "context") {
        if (o.contains("gpus") && o.at("gpus").is_array() && !o.at("gpus").empty() &&
            o.at("gpus")[0].is_object() && o.at("gpus")[0].contains("name") && o.at("gpus")[0].at("name").is_string()) {
          expect_one_gpu(log.gpu, o.at("gpus")[0].at("name").get<std::string>(), where);
          read_config_text(o, log.header);
          log.header["backend"] = "cudnn";
        }
        continue;
      }
      if (type != "attention") {
        if (type == "attention_oom") log.warnings.push_back(fmt::format("{}: an out-of-memory point skipped", where));
        continue;
      }
    }
    AttentionPoint p;
    const double s = json_number(o, "seqlen", where);
    if (s < 1 || s > 1e12 || s != std::floor(s)) throw WorkError(fmt::format("{}: seqlen must be a positive whole number", where));
    p.seqlen = static_cast<int64_t>(s);
    p.fwd_ms = json_number(o, "fwd_ms", where);
    p.fwd_tflops = json_number(o, "fwd_tflops", where);
    if (o.contains("fwd_bwd_ms") && !o.at("fwd_bwd_ms").is_null()) p.fwd_bwd_ms = json_number(o, "fwd_bwd_ms", where);
    if (o.contains("fwd_bwd_tflops") && !o.at("fwd_bwd_tflops").is_null()) p.fwd_bwd_tflops = json_number(o, "fwd_bwd_tflops", where);
    for (const AttentionPoint& q : log.points) {
      if (q.seqlen == p.seqlen) throw WorkError(fmt::format("{}: seqlen {} appears twice", where, p.seqlen));
    }
    log.points.push_back(p);
  }
  if (log.points.empty()) throw WorkError(fmt::format("{}: no attention results", t.path));
  std::sort(log.points.begin(), log.points.end(), [](const auto& a, const auto& b) { return a.seqlen < b.seqlen; });
  if (ignored) log.warnings.push_back(fmt::format("{} other lines ignored", ignored));
  return log;
}

DecompositionLog read_decomposition_log(const TextLines& t) {
  DecompositionLog log;
  log.path = t.path;
  size_t ignored = 0;
  for (size_t i = 0; i < t.lines.size(); ++i) {
    const std::string line = trim(t.lines[i]);
    const std::string where = t.where(i);
    if (line.empty()) continue;
    if (line.rfind("# wall", 0) == 0) {
      // "# wall step=123.4 ms   peak_mem=16.3 GiB   attention FLOP share=12.5% ..."
      for (const std::string& part : {std::string("step="), std::string("peak_mem="), std::string("attention FLOP share="),
                                      std::string("attention wall share="), std::string("comm=")}) {
        const size_t at = line.find(part);
        if (at == std::string::npos) continue;
        const size_t v = at + part.size();
        const size_t end = line.find_first_of(" \t", v);
        log.summary[part.substr(0, part.size() - 1)] = line.substr(v, end == std::string::npos ? std::string::npos : end - v);
      }
      continue;
    }
    if (line[0] == '#') {
      auto kv = parse_key_values(line.substr(1));
      if (kv.contains("gpu")) {
        log.gpu = kv["gpu"];
        log.header = kv;
      }
      continue;
    }
    std::smatch m;
    if (std::regex_match(line, m, kBucketLine)) {
      DecompositionBucket b;
      b.name = trim(m[1].str());
      b.tflop = parse_number(m[2].str(), where, "TFLOP");
      b.ms = parse_number(m[3].str(), where, "ms");
      b.tflops = parse_number(m[4].str(), where, "TFLOPS");
      if (m[5].matched) b.mfu_percent = parse_number(m[5].str(), where, "MFU");
      log.buckets.push_back(b);
      continue;
    }
    ++ignored;
  }
  if (log.buckets.empty()) {
    throw WorkError(fmt::format("{}: no bucket lines (`NAME <x> TFLOP <x> ms <x> TFLOPS MFU <x>%`)", t.path));
  }
  if (ignored) log.warnings.push_back(fmt::format("{} other lines ignored", ignored));
  return log;
}

MamfLog read_mamf_log(const TextLines& t) {
  MamfLog log;
  log.path = t.path;
  if (looks_like_records(t)) {
    log.format = "upgradebench";
    size_t other_devices = 0;
    for (size_t i = 0; i < t.lines.size(); ++i) {
      const std::string line = trim(t.lines[i]);
      if (line.empty()) continue;
      json r;
      try {
        r = json::parse(line);
      } catch (const json::exception&) {
        if (t.is_last(i) && t.last_line_unterminated) continue;
        throw WorkError(fmt::format("{}: a record that is not valid JSON", t.where(i)));
      }
      try {
        const std::string type = r.value("type", "");
        if (type == "context" && r.contains("gpus") && r.at("gpus").is_array() && !r.at("gpus").empty()) {
          expect_one_gpu(log.gpu, r.at("gpus").at(0).value("name", ""), t.where(i));
          if (r.contains("config")) log.dtype = r.at("config").value("dtype", log.dtype);
        } else if (type == "mamf" && r.contains("tflops") && !r.value("quick", false)) {
          MamfShape s;
          s.device = r.value("device", 0);
          // Several GPUs measured at once (--devices all): compare the first one, count the rest.
          if (!log.outcome.shapes.empty() && s.device != log.outcome.shapes.front().device) {
            ++other_devices;
            continue;
          }
          s.m = r.value("m", int64_t{0});
          s.n = r.value("n", int64_t{0});
          s.k = r.value("k", int64_t{0});
          s.mean_tflops = r.at("tflops").value("mean", 0.0);
          s.median_tflops = r.at("tflops").value("median", 0.0);
          s.max_tflops = r.at("tflops").value("max", 0.0);
          s.ok = true;
          log.outcome.shapes.push_back(s);
        }
      } catch (const json::exception& e) {
        throw WorkError(fmt::format("{}: a record field has the wrong type: {}", t.where(i), e.what()));
      }
    }
    if (other_devices) {
      log.warnings.push_back(fmt::format("{} shapes of other GPUs in the file left out (the first GPU is compared)",
                                         other_devices));
    }
  } else {
    log.format = "mamf-finder";
    for (size_t i = 0; i < t.lines.size(); ++i) {
      const std::string line = t.lines[i];
      const std::string trimmed = trim(line);
      const std::string where = t.where(i);
      std::smatch m;
      if (std::regex_search(line, m, kShapeLine)) {
        MamfShape s;
        s.mean_tflops = parse_number(m[2].str(), where, "mean");
        s.median_tflops = parse_number(m[3].str(), where, "median");
        s.max_tflops = parse_number(m[4].str(), where, "max");
        s.m = count(m[5].str(), where);
        s.n = count(m[6].str(), where);
        s.k = count(m[7].str(), where);
        s.ok = true;
        log.outcome.shapes.push_back(s);
      } else if (std::regex_search(trimmed, m, kFooterLine)) {
        MamfShape s;
        s.m = count(m[3].str(), where);
        s.n = count(m[4].str(), where);
        s.k = count(m[5].str(), where);
        s.ok = true;
        const double v = parse_number(m[2].str(), where, "TFLOPS");
        if (m[1] == "mean") { s.mean_tflops = v; log.footer_mean = s; }
        if (m[1] == "median") { s.median_tflops = v; log.footer_median = s; }
        if (m[1] == "max") { s.max_tflops = v; log.footer_max = s; }
      } else if (line.find("device") != std::string::npos && log.gpu.empty()) {
        // mamf-finder's header names the device: "device: NVIDIA H200" or "... on NVIDIA H200".
        const size_t at = line.find("NVIDIA");
        if (at != std::string::npos) log.gpu = trim(line.substr(at));
      } else if (line.find("dtype") != std::string::npos && log.dtype.empty()) {
        for (const char* d : {"bfloat16", "float8_e4m3fn", "float16", "float32"}) {
          if (line.find(d) != std::string::npos) log.dtype = d;
        }
      }
    }
  }
  if (log.outcome.shapes.empty() && !log.footer_median) {
    throw WorkError(fmt::format("{}: no MAMF results (per-shape lines, a footer, or mamf records)", t.path));
  }
  return log;
}

}  // namespace ub
