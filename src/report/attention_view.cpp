// The view of `attention` records; see measurement_views.hpp.
#include <fmt/format.h>

#include <algorithm>

#include "report/format.hpp"
#include "report/measurement_views.hpp"

namespace ub::report {

namespace {

using nlohmann::json;

// ", packed documents of 8192" or ", 32 packed documents (longest 12288)" for the heading.
std::string packing(const AttentionConfig& c) {
  if (!c.docs.empty()) {
    return fmt::format(", {} packed documents (longest {})", c.docs.size(), *std::max_element(c.docs.begin(), c.docs.end()));
  }
  return c.doc_len ? fmt::format(", packed documents of {}", c.doc_len) : "";
}

// The stable --json keys of a point (docs/json.md), and the whole record under "record".
json point_json(const AttentionRecord& p, bool fwd_only) {
  json pj = {{"device", p.device}, {"seqlen", p.seqlen}, {"ok", p.ok}, {"oom", p.oom}};
  if (p.ok) {
    pj["fwd_ms"] = p.fwd_ms;
    pj["fwd_tflops"] = p.fwd_tflops;
    if (!fwd_only) pj["fwd_bwd_ms"] = or_null(p.fwd_bwd_ms), pj["fwd_bwd_tflops"] = or_null(p.fwd_bwd_tflops);
    pj["check"] = p.check ? p.check->summary() : "";
  } else {
    pj["error"] = p.error;
  }
  pj["record"] = p;
  return pj;
}

}  // namespace

View attention_view(const std::vector<OnGpu<std::vector<AttentionRecord>>>& runs, const AttentionConfig& cfg) {
  View v;
  for (const auto& [device, gpu, points] : runs) {
    auto& b = v.doc.add(fmt::format("GPU {}: {}, cuDNN fused attention, {} heads / {} kv heads, head dim {}, {}{}{}",
                                    device, gpu, cfg.heads, cfg.kv_heads, cfg.head_dim, to_string(cfg.dtype),
                                    cfg.causal ? ", causal" : "", packing(cfg)));
    b.table.columns = {{"seqlen"}, {"fwd ms"}, {"fwd TFLOPS"}, {"fwd+bwd ms"}, {"fwd+bwd TFLOPS"}, {"check", Align::left}};
    for (const AttentionRecord& p : points) {
      const bool both = p.ok && p.fwd_bwd_ms.has_value();
      b.table.add_row({fmt::format("{}", p.seqlen), p.ok ? num(p.fwd_ms, 3) : "-", p.ok ? num(p.fwd_tflops) : "-",
                       both ? num(*p.fwd_bwd_ms, 3) : "-", both ? num(*p.fwd_bwd_tflops) : "-",
                       p.ok ? "ok (NMSE " + (p.check ? p.check->summary() : "") + ")" : p.error});
      v.json.push_back(point_json(p, cfg.fwd_only));
    }
    b.notes.push_back("TFLOPS by bench_flash_attn.py's convention: 4 * s^2 * heads * head_dim per sequence, halved "
                      "when causal, sum of len^2 over packed documents; forward+backward counts 3.5x the forward. "
                      "Times are medians; each point was checked against an fp32 reference first.");
  }
  return v;
}

}  // namespace ub::report
