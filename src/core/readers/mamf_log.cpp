// Reader of mamf-finder.py's output and of our `mamf` records; see mamf_log.hpp.
#include "core/readers/mamf_log.hpp"

#include <fmt/format.h>

#include <regex>

#include "core/error.hpp"
#include "core/records/context_record.hpp"
#include "core/records/record_file.hpp"
#include "core/text.hpp"

namespace ub {

namespace {

const std::regex kShapeLine(R"(^\s*(\d+)\s*\|\s*([\d.]+)\(mean\)\s+([\d.]+)\(median\)\s+([\d.]+)\(max\)\s*@\s*(\d+)x(\d+)x(\d+))");
const std::regex kFooterLine(R"(^(mean|median|max):\s+([\d.]+)\s+TFLOPS\s+@\s+(\d+)x(\d+)x(\d+))");

int64_t count(const std::string& digits, const std::string& where) {
  if (digits.size() > 15) throw WorkError(fmt::format("{}: {} is too large", where, digits));
  return std::stoll(digits);
}

}  // namespace

std::optional<MamfShape> MamfLog::best(MamfOutcome::By by) const {
  if (auto s = outcome.best(by)) return s;
  return by == MamfOutcome::By::mean ? footer_mean : by == MamfOutcome::By::median ? footer_median : footer_max;
}

MamfLog read_mamf_log(const TextLines& t) {
  MamfLog log;
  log.path = t.path;
  if (looks_like_records(t)) {
    log.format = "upgradebench";
    size_t other_devices = 0;
    for_each_record(t, [&](const RecordLine& r) {
      const Fields f(r.json, r.where);
      if (r.type == "context") {
        const ContextRecord c = read_context(f);
        if (c.fingerprint.gpus.empty()) return;
        expect_one_gpu(log.gpu, c.fingerprint.gpus.front().name, r.where);
        log.dtype = to_string(read_mamf_config(Fields(c.config, r.where)).dtype);
      } else if (r.type == "mamf") {
        MamfShape s = read_mamf_shape(f);
        if (!s.ok || s.quick) return;
        // Several GPUs measured at once (--devices all): compare the first one, count the rest.
        if (!log.outcome.shapes.empty() && s.device != log.outcome.shapes.front().device) {
          ++other_devices;
          return;
        }
        log.outcome.shapes.push_back(std::move(s));
      }
    }, log.warnings);
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
      // std::regex backtracks recursively: a line far longer than any shape line is not tried.
      if (line.size() > kMaxPatternLine) continue;
      if (std::regex_search(line, m, kShapeLine)) {
        MamfShape s;
        s.mean_tflops = parse_decimal(m[2].str(), where, "mean");
        s.median_tflops = parse_decimal(m[3].str(), where, "median");
        s.max_tflops = parse_decimal(m[4].str(), where, "max");
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
        const double v = parse_decimal(m[2].str(), where, "TFLOPS");
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
