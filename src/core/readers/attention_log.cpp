// Reader of attention micro-benchmark logs; the formats are stated in attention_log.hpp.
#include "core/readers/attention_log.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "core/key_values.hpp"
#include "core/readers/records_reader.hpp"
#include "core/text.hpp"

namespace ub {

AttentionLog read_attention_log(const TextLines& t) {
  AttentionLog log;
  log.path = t.path;
  size_t ignored = 0;
  for (size_t i = 0; i < t.lines.size(); ++i) {
    const std::string line = trim(t.lines[i]);
    const std::string where = t.where(i);
    if (line.empty()) continue;
    if (auto header = gpu_header(line)) {
      expect_one_gpu(log.gpu, header->at("gpu"), where);
      log.header = std::move(*header);
      continue;
    }
    if (line[0] == '#') continue;
    if (line[0] != '{') {
      ++ignored;
      continue;
    }
    const std::optional<nlohmann::json> o = parse_record_line(t, i, log.warnings, "a result line");
    if (!o) continue;
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
        continue;
      }
      if (type != "attention") {
        if (type == "attention_oom") log.warnings.push_back(fmt::format("{}: an out-of-memory point skipped", where));
        continue;
      }
    }
    AttentionRecord p = read_attention_point(f);
    for (const AttentionRecord& q : log.points) {
      if (q.seqlen == p.seqlen) throw WorkError(fmt::format("{}: seqlen {} appears twice", where, p.seqlen));
    }
    log.points.push_back(std::move(p));
  }
  if (log.points.empty()) throw WorkError(fmt::format("{}: no attention results", t.path));
  std::sort(log.points.begin(), log.points.end(), [](const auto& a, const auto& b) { return a.seqlen < b.seqlen; });
  if (ignored) log.warnings.push_back(fmt::format("{} other lines ignored", ignored));
  return log;
}

}  // namespace ub
