// Reader of attention micro-benchmark logs; the formats are stated in attention_log.hpp.
#include "records/readers/attention_log.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "base/error.hpp"
#include "base/key_values.hpp"
#include "base/text.hpp"
#include "records/readers/records_reader.hpp"
#include "records/readers/repeated_points.hpp"

namespace ub {

AttentionLog read_attention_log(const LineSource& t) {
  AttentionLog log;
  log.path = t.path;
  log.provenance = read_provenance(t);
  size_t ignored = 0, other_devices = 0;
  std::optional<int> first_device;
  t.for_each([&](const Line& l) {
    const std::string line = trim(l.text);
    const std::string where = t.where(l.index);
    if (line.empty()) return;
    if (auto header = gpu_header(line)) {
      expect_one_gpu(log.gpu, header->at("gpu"), where);
      log.header = std::move(*header);
      return;
    }
    if (line[0] == '#') return;
    if (line[0] != '{') {
      ++ignored;
      return;
    }
    const std::optional<nlohmann::json> o = parse_record_line(t, l, log.warnings, "a result line");
    if (!o) return;
    const Fields f(*o, where);
    // Our own records: the context record names the GPU; out-of-memory and other records are
    // not results.
    if (o->contains("type")) {
      const std::string type = o->at("type").is_string() ? o->at("type").get<std::string>() : "";
      if (type == "context") {
        const ContextRecord c = read_context(f);
        if (!c.fingerprint.gpus.empty() && !c.fingerprint.gpus.front().name.empty()) {
          expect_one_gpu(log.gpu, c.fingerprint.gpus.front().name, where);
          read_config_text(c, log.header);
          log.header["backend"] = "cudnn";
        }
        return;
      }
      if (type != "attention") {
        if (type == "attention_oom") log.warnings.push_back(fmt::format("{}: an out-of-memory point skipped", where));
        return;
      }
    }
    AttentionRecord p = read_attention_point(f);
    // Several GPUs measured at once (--devices all): the first GPU's points are read.
    if (!first_device) first_device = p.device;
    if (p.device != *first_device) {
      ++other_devices;
      return;
    }
    const std::string what = fmt::format("seqlen {}", p.seqlen);
    keep_later(log.points, std::move(p), [](const AttentionRecord& a, const AttentionRecord& b) { return a.seqlen == b.seqlen; },
               [&](const AttentionRecord&) { return "first on an earlier line"; }, where, what, log.warnings);
  });
  if (log.points.empty()) throw WorkError(fmt::format("{}: no attention results", t.path));
  std::sort(log.points.begin(), log.points.end(), [](const auto& a, const auto& b) { return a.seqlen < b.seqlen; });
  if (ignored) log.warnings.push_back(fmt::format("{} other lines ignored", ignored));
  if (other_devices) {
    log.warnings.push_back(fmt::format("{} points of other GPUs measured at the same time left out: GPU {} is read",
                                       other_devices, *first_device));
  }
  return log;
}

}  // namespace ub
