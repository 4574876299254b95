// Reader of mamf-finder.py's output and of our `mamf` records; see mamf_log.hpp.
#include "core/readers/mamf_log.hpp"

#include <fmt/format.h>

#include <cctype>
#include <regex>

#include "core/error.hpp"
#include "core/records/context_record.hpp"
#include "core/records/record_file.hpp"
#include "core/text.hpp"

namespace ub {

namespace {

const std::regex kShapeLine(R"(^\s*(\d+)\s*\|\s*([\d.]+)\(mean\)\s+([\d.]+)\(median\)\s+([\d.]+)\(max\)\s*@\s*(\d+)x(\d+)x(\d+))");
const std::regex kFooterLine(R"(^(mean|median|max):\s+([\d.]+)\s+TFLOPS\s+@\s+(\d+)x(\d+)x(\d+))");
const std::regex kMeanLine(R"(^(arithmetic|geometric) mean:\s+([\d.]+)\s+TFLOPS)");
const std::regex kDeviceName(R"(name='([^']+)')");
const std::regex kDeviceUuid(R"(uuid=(?:GPU-)?([0-9a-fA-F-]{36}))");
const std::regex kVersion(R"(^-\s*([A-Za-z_][\w.-]*)=(\S+)$)");
const std::regex kRanges(R"(^Across \d+ shapes in range:\s*(.*?)\s*in this run:?$)");

// mamf-finder writes torch's dtype names; ours where there is one.
std::string dtype_name(std::string d) {
  if (d.rfind("torch.", 0) == 0) d = d.substr(6);
  static const std::pair<const char*, const char*> names[] = {
      {"bfloat16", "bf16"}, {"float16", "fp16"}, {"half", "fp16"}, {"float32", "fp32"}, {"float", "fp32"},
      {"float8_e4m3fn", "fp8"}, {"float8_e4m3fnuz", "fp8"}, {"float8_e5m2", "fp8 (e5m2)"}};
  for (const auto& [torch, ours] : names) {
    if (d == torch) return ours;
  }
  return d;
}

bool starts_with_lower(const std::string& line, const char* head) {
  const std::string h(head);
  if (line.size() < h.size()) return false;
  for (size_t i = 0; i < h.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(line[i])) != h[i]) return false;
  }
  return true;
}

// mamf-finder.py's largest sweeps measure a few hundred thousand shapes; a file with more is not
// a MAMF log (and would be held whole: a log's shapes are its figures).
constexpr size_t kMaxShapes = size_t{1} << 20;

void add_shape(MamfLog& log, MamfShape s, const std::string& where) {
  if (log.outcome.shapes.size() >= kMaxShapes) {
    throw WorkError(fmt::format("{}: more than {} shapes in one file: not a MAMF log upgradebench reads", where, kMaxShapes));
  }
  log.outcome.shapes.push_back(std::move(s));
}

int64_t count(const std::string& digits, const std::string& where) {
  if (digits.size() > 15) throw WorkError(fmt::format("{}: {} is too large", where, digits));
  return std::stoll(digits);
}

}  // namespace

std::optional<MamfShape> MamfLog::best(MamfOutcome::By by) const {
  if (auto s = outcome.best(by)) return s;
  return by == MamfOutcome::By::mean ? footer_mean : by == MamfOutcome::By::median ? footer_median : footer_max;
}

MamfLog read_mamf_log(const LineSource& t) {
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
        if (const auto& uuid = c.fingerprint.gpus.front().uuid) log.gpu_uuid = *uuid;
        for (const auto& [name, entry] : c.fingerprint.stack) {
          if (entry.version) log.stack.emplace_back(name, *entry.version);
        }
      } else if (r.type == "mamf") {
        MamfShape s = read_mamf_shape(f);
        if (!s.ok || s.quick) return;
        // Several GPUs measured at once (--devices all): compare the first one, count the rest.
        if (!log.outcome.shapes.empty() && s.device != log.outcome.shapes.front().device) {
          ++other_devices;
          return;
        }
        add_shape(log, std::move(s), r.where);
      }
    }, log.warnings);
    if (other_devices) {
      log.warnings.push_back(fmt::format("{} shapes of other GPUs in the file left out (the first GPU is compared)",
                                         other_devices));
    }
  } else {
    log.format = "mamf-finder";
    std::string section;  // the header section a line is in ("critical software versions", ...)
    t.for_each([&](const Line& l) {
      const std::string line(l.text);
      const std::string trimmed = trim(line);
      const std::string where = t.where(l.index);
      std::smatch m;
      // std::regex backtracks recursively: a line far longer than any shape line is not tried.
      if (line.size() > kMaxPatternLine) return;
      if (std::regex_search(line, m, kShapeLine)) {
        MamfShape s;
        s.mean_tflops = parse_decimal(m[2].str(), where, "mean");
        s.median_tflops = parse_decimal(m[3].str(), where, "median");
        s.max_tflops = parse_decimal(m[4].str(), where, "max");
        s.m = count(m[5].str(), where);
        s.n = count(m[6].str(), where);
        s.k = count(m[7].str(), where);
        s.ok = true;
        add_shape(log, s, where);
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
      } else if (std::regex_search(trimmed, m, kMeanLine)) {
        (m[1] == "arithmetic" ? log.arithmetic_mean : log.geometric_mean) = parse_decimal(m[2].str(), where, "TFLOPS");
      } else if (std::regex_search(trimmed, m, kRanges)) {
        log.ranges = m[1].str();
      } else if (starts_with_lower(trimmed, "** dtype:")) {
        log.dtype = dtype_name(trim(trimmed.substr(9)));
      } else if (trimmed.find("DeviceProperties(") != std::string::npos && std::regex_search(trimmed, m, kDeviceName)) {
        // "- _CudaDeviceProperties(name='NVIDIA H200', major=9, ..., uuid=95b16759-..., ...)"
        if (log.gpu.empty()) log.gpu = m[1].str();
        if (std::regex_search(trimmed, m, kDeviceUuid)) log.gpu_uuid = "GPU-" + m[1].str();
      } else if (starts_with_lower(trimmed, "device:") && log.gpu.empty()) {
        log.gpu = trim(trimmed.substr(7));
      } else if (section == "critical software versions" && std::regex_search(trimmed, m, kVersion)) {
        log.stack.emplace_back(m[1].str(), m[2].str());
      }
      if (trimmed.rfind("** ", 0) == 0) section = to_lower(trim(trimmed.substr(3, trimmed.find(':') - 3)));
    });
  }
  if (!log.arithmetic_mean) log.arithmetic_mean = log.outcome.arithmetic_mean(MamfOutcome::By::mean);
  if (!log.geometric_mean) log.geometric_mean = log.outcome.geometric_mean(MamfOutcome::By::mean);
  if (log.outcome.shapes.empty() && !log.footer_median) {
    throw WorkError(fmt::format("{}: no MAMF results (per-shape lines, a footer, or mamf records)", t.path));
  }
  return log;
}

}  // namespace ub
