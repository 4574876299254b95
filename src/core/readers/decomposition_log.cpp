// Reader of bench_decompose.py's printout; the format is stated in decomposition_log.hpp.
#include "core/readers/decomposition_log.hpp"

#include <fmt/format.h>

#include <regex>

#include "core/error.hpp"
#include "core/key_values.hpp"
#include "core/text.hpp"

namespace ub {

namespace {

const std::regex kBucketLine(R"(^(.+?)\s+([\d.]+)\s+TFLOP\s+([\d.]+)\s+ms\s+([\d.]+)\s+TFLOPS(?:\s+MFU\s+([\d.]+)%)?\s*$)");

}  // namespace

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
    if (auto header = gpu_header(line)) {
      log.gpu = header->at("gpu");
      log.header = std::move(*header);
      continue;
    }
    if (line[0] == '#') continue;
    std::smatch m;
    // std::regex backtracks recursively: a line far longer than any bucket line is not tried.
    if (line.size() <= kMaxPatternLine && std::regex_match(line, m, kBucketLine)) {
      DecompositionBucket b;
      b.name = trim(m[1].str());
      b.tflop = parse_decimal(m[2].str(), where, "TFLOP");
      b.ms = parse_decimal(m[3].str(), where, "ms");
      b.tflops = parse_decimal(m[4].str(), where, "TFLOPS");
      if (m[5].matched) b.mfu_percent = parse_decimal(m[5].str(), where, "MFU");
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

}  // namespace ub
