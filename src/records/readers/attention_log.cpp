// Reader of attention micro-benchmark logs; the formats are stated in attention_log.hpp.
#include "records/readers/attention_log.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>
#include <optional>

#include "base/error.hpp"
#include "base/key_values.hpp"
#include "base/text.hpp"
#include "facts/dtype.hpp"
#include "model/reference/attention_cpu.hpp"
#include "records/readers/records_reader.hpp"
#include "records/readers/repeated_points.hpp"

namespace ub {

namespace {

// The FLOPs of a point's forward and forward+backward passes: our records carry them; for
// bench_flash_attn.py's lines they follow from the header's shape (one sequence, as the script
// runs, unless it says batch=), which must say it: a line under a header without it is refused, naming `where`.
std::optional<std::pair<double, double>> point_flops(const AttentionRecord& p, const std::map<std::string, std::string>& header,
                                                     const std::string& where) {
  if (p.flops_fwd > 0) {
    // Our records say their shape beside their FLOPs: one sequence's are checked against it (the
    // FLOPs of packed documents follow their lengths, which the context lists).
    if (p.docs == 1 && p.heads > 0 && p.head_dim > 0) {
      AttentionShape shape;
      shape.batch = p.batch, shape.seqlen = p.seqlen, shape.heads = p.heads, shape.kv_heads = p.kv_heads;
      shape.head_dim = p.head_dim, shape.causal = p.causal, shape.window = p.causal ? p.window : 0;
      for (const auto& [name, said, backward] : {std::tuple{"flops_fwd", p.flops_fwd, false},
                                                 std::tuple{"flops_fwd_bwd", p.flops_fwd_bwd, true}}) {
        const double expected = attention_flops(shape, backward);
        if (said > 0 && std::abs(said / expected - 1) > 1e-6) {
          throw WorkError(fmt::format("{}: {} {:g} is not the attention FLOPs of its shape ({:g}: seqlen {}, batch {}, "
                                      "{} heads, head dim {}{}{}): one of them is wrong", where, name, said, expected,
                                      p.seqlen, p.batch, p.heads, p.head_dim, p.causal ? ", causal" : "",
                                      p.window > 0 ? fmt::format(", window {}", p.window) : ""));
        }
      }
    }
    return std::pair{p.flops_fwd, p.flops_fwd_bwd};
  }
  if (header.count("heads")) return std::nullopt;  // our context, records written without their FLOPs
  const auto count = [&](const char* key) -> std::optional<int64_t> {
    const auto it = header.find(key);
    if (it == header.end() || it->second.empty() || it->second.size() > 6 ||
        it->second.find_first_not_of("0123456789") != std::string::npos || it->second[0] == '0') {
      return std::nullopt;
    }
    return std::stoll(it->second);
  };
  const auto heads = count("nheads"), head_dim = count("head_dim");
  const auto causal = header.find("causal");
  if (!header.count("nheads") || !header.count("head_dim") || causal == header.end()) {
    throw WorkError(fmt::format("{}: a result line whose `# gpu=` header above it does not give nheads=, head_dim= and "
                                "causal=: the problem it measured is not known", where));
  }
  // Given, but no count of heads or of a head's width (0, a fraction, a leading zero, past 6 digits).
  for (const auto& [key, value] : {std::pair{"nheads", heads}, std::pair{"head_dim", head_dim}}) {
    if (!value) {
      throw WorkError(fmt::format("{}: the `# gpu=` header above it gives {}={}, not a whole number from 1 to 999999: "
                                  "the problem it measured is not known", where, key, printable(header.at(key))));
    }
  }
  AttentionShape shape;
  shape.seqlen = p.seqlen, shape.heads = *heads, shape.head_dim = *head_dim;
  shape.causal = causal->second == "True" || causal->second == "true";
  // bench_flash_attn.py times one sequence; a header that says batch= timed that many.
  if (header.count("batch")) {
    const auto batch = count("batch");
    if (!batch) {
      throw WorkError(fmt::format("{}: the `# gpu=` header above it gives batch={}, not a whole number from 1 to 999999: "
                                  "the problem it measured is not known", where, printable(header.at("batch"))));
    }
    shape.batch = *batch;
  }
  if (header.count("window")) {  // ours, where the lines measured a sliding window
    const auto window = count("window");
    if (!window || !shape.causal) throw WorkError(fmt::format("{}: the header's window= is not a causal window of tokens", where));
    shape.window = *window;
  }
  return std::pair{attention_flops(shape, false), attention_flops(shape, true)};
}

// A point's time and TFLOPS are one measurement said twice (the shape's FLOPs over the time): a
// pair that disagrees is refused, since a comparison would take whichever of the two it reads.
// Times are printed to a few decimals: 5% and a microsecond of slack.
void refuse_time_beside_other_rate(const AttentionRecord& p, std::pair<double, double> flops, const std::string& where) {
  for (const auto& [name, ms, tflops, f] :
       {std::tuple{"fwd", std::optional<double>(p.fwd_ms), std::optional<double>(p.fwd_tflops), flops.first},
        std::tuple{"fwd_bwd", p.fwd_bwd_ms, p.fwd_bwd_tflops, flops.second}}) {
    if (!ms || !tflops || *tflops <= 0 || f <= 0) continue;
    const double implied_ms = f / (*tflops * 1e9);
    if (std::abs(*ms - implied_ms) > 0.05 * implied_ms + 1e-3) {
      throw WorkError(fmt::format("{}: {}_ms {:g} and {}_tflops {:g} disagree: seqlen {} is {:.4g} TFLOP, which at {:g} TFLOPS "
                                  "takes {:.4g} ms; one of the two figures is wrong",
                                  where, name, *ms, name, *tflops, p.seqlen, f / 1e12, *tflops, implied_ms));
    }
  }
}

}  // namespace

AttentionLog read_attention_log(const LineSource& t) {
  AttentionLog log;
  log.path = t.path;
  log.provenance = read_provenance(t);
  size_t ignored = 0, other_devices = 0;
  std::optional<int> first_device;
  t.for_each_json_line([&](const Line& l) {  // a damaged result line is skipped, said so
    const std::string line = trim(l.text);
    const std::string where = t.where(l.index);
    if (line.empty()) return;
    if (line[0] == '#') t.refuse_nul(l);  // a header is read as text
    if (auto header = gpu_header(line, where)) {
      expect_one_gpu(log.gpu, header->at("gpu"), where);
      if (const auto c = header->find("causal"); c != header->end() && c->second != "True" && c->second != "False" &&
                                                 c->second != "true" && c->second != "false") {
        throw WorkError(fmt::format("{}: causal={} is neither True nor False", where, printable(c->second)));
      }
      // bench_flash_attn.py's dtype by our name (dtype=torch.bfloat16 is bf16).
      if (const auto d = header->find("dtype"); d != header->end()) d->second = dtype_from_torch_name(d->second);
      log.header = std::move(*header);
      return;
    }
    if (line[0] == '#') return;
    if (line[0] != '{' && line[0] != '\0') {  // zeros where a line was (a crash) are a damaged line
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
    // Every point `attention` times is checked first, and says how: one of ours that does not may
    // be of anything (bench_flash_attn.py's lines, of no type, check nothing).
    if (o->contains("type") && !f.has("check") && !f.has("error")) {
      throw WorkError(fmt::format("{}: no \"check\": whether its outputs matched the reference is not known", where));
    }
    if (!p.error.empty()) {
      log.warnings.push_back(fmt::format("{}: seqlen {} left out: {}", where, p.seqlen, p.error));
      return;
    }
    if (const auto flops = point_flops(p, log.header, where)) refuse_time_beside_other_rate(p, *flops, where);
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
  if (log.points.empty()) {
    throw WorkError(log.warnings.empty() ? fmt::format("{}: no attention results", t.path)
                                         : fmt::format("{}: no attention result to read, {} left out (the first: {})", t.path,
                                                       log.warnings.size(), log.warnings.front()));
  }
  // bench_flash_attn.py's header (our context record) says which GPU ran which problem: without
  // it no figure can be checked against its GPU or its shape, nor paired with another's.
  if (log.gpu.empty()) {
    throw WorkError(fmt::format("{}: no `# gpu=... causal=... nheads=... head_dim=...` header (nor context record): "
                                "which GPU measured which problem is not known; give the whole log", printable(t.path)));
  }
  std::sort(log.points.begin(), log.points.end(), [](const auto& a, const auto& b) { return a.seqlen < b.seqlen; });
  if (ignored) log.warnings.push_back(fmt::format("{} other lines ignored", ignored));
  if (other_devices) {
    log.warnings.push_back(fmt::format("{} points of other GPUs measured at the same time left out: GPU {} is read",
                                       other_devices, *first_device));
  }
  return log;
}

}  // namespace ub
