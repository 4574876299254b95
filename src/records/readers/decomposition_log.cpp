// Reader of bench_decompose.py's printout; the format is stated in decomposition_log.hpp.
#include "records/readers/decomposition_log.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string_view>
#include <vector>

#include "base/error.hpp"
#include "base/key_values.hpp"
#include "base/text.hpp"
#include "base/text_cursor.hpp"
#include "records/decomposition_records.hpp"
#include "records/measurement_bounds.hpp"
#include "records/readers/repeated_points.hpp"
#include "records/record_file.hpp"

namespace ub {

namespace {

constexpr long long kMaxDecomposedSeqlen = 16LL << 20;  // the engine's longest sequence (16M tokens)

// The last `n` words of `line` (trimmed), first to last (views into it); fewer when the line has fewer.
std::vector<std::string_view> last_words(std::string_view line, size_t n) {
  std::vector<std::string_view> words;
  size_t end = line.size();
  while (words.size() < n && end > 0) {
    size_t begin = end;
    while (begin > 0 && !TextCursor::is_space(line[begin - 1])) --begin;
    words.insert(words.begin(), line.substr(begin, end - begin));
    end = begin;
    while (end > 0 && TextCursor::is_space(line[end - 1])) --end;
  }
  return words;
}

// "NAME <tflop> TFLOP <ms> ms <tflops> TFLOPS [MFU <x>%]" (trimmed): the name is what comes
// before the last six words (eight with MFU), and is not empty. A line of that shape whose figure
// is not a number ("nan ms", "inf TFLOPS") is a WorkError naming the line and the field, not a
// line left aside.
bool bucket_line(std::string_view line, const std::string& where, DecompositionBucket& b) {
  std::vector<std::string_view> w = last_words(line, 8);
  std::string_view mfu;
  if (w.size() == 8 && w[6] == "MFU" && w[7].size() > 1 && w[7].back() == '%') {
    mfu = w[7].substr(0, w[7].size() - 1);
    w.resize(6);
  } else if (w.size() > 6) {
    w.erase(w.begin(), w.end() - 6);
  }
  if (w.size() != 6) return false;
  const size_t at = static_cast<size_t>(w.front().data() - line.data());  // where the six words start
  if (at == 0 || w[1] != "TFLOP" || w[3] != "ms" || w[5] != "TFLOPS") return false;
  b.name = trim(line.substr(0, at));
  const std::string field_at = fmt::format("{}: bucket \"{}\"", where, printable(b.name));  // a figure's errors name its bucket
  const double tflop = parse_decimal(w[0], field_at, "TFLOP"), tflops = parse_decimal(w[4], field_at, "TFLOPS");
  b.tflop = tflop, b.tflops = tflops;
  b.ms = parse_decimal(w[2], field_at, "ms");
  if (!mfu.empty()) b.mfu_percent = parse_decimal(mfu, field_at, "MFU");
  const auto past = [&](const char* field, double v, double most) {
    if (v > most) {
      throw WorkError(fmt::format("{}: bucket \"{}\": {} {:g} is beyond any measurement (at most {:g}{})", where,
                                  printable(b.name), field, v, most, std::string_view(field) == "MFU" ? "%" : ""));
    }
  };
  past("ms", b.ms, kMaxMs);
  past("TFLOPS", tflops, kMaxTflops);
  past("TFLOP", tflop, kMaxTflops * kMaxMs / 1e3);
  past("MFU", b.mfu_percent.value_or(0), 100);
  // The rate is the work over the time, as printed (each figure rounded to its last digit).
  const double rounding = 0.005 + tflops * 0.05 / 1e3 + 0.05 * b.ms / 1e3;
  if (b.ms > 0 && std::abs(tflops * b.ms / 1e3 - tflop) > 0.02 * tflop + rounding) {
    throw WorkError(fmt::format("{}: bucket \"{}\": {} TFLOPS is not its {} TFLOP over its {} ms ({:.1f} TFLOPS)", where,
                                printable(b.name), tflops, tflop, b.ms, tflop / b.ms * 1e3));
  }
  return true;
}

// The printout's summary line: `step=` and `peak_mem=` as numbers within what a measurement can
// be, the shares as percentages.
void check_summary(const std::map<std::string, std::string>& summary, const std::string& where) {
  for (const auto& [key, text] : summary) {
    const bool share = key.find("share") != std::string::npos || key == "comm";
    const std::string digits = share && !text.empty() && text.back() == '%' ? text.substr(0, text.size() - 1) : text;
    const double v = parse_decimal(digits, where, key.c_str());
    const double most = share ? 100 : key == "peak_mem" ? kMaxGib : kMaxMs;
    if (v > most) throw WorkError(fmt::format("{}: {}={} is beyond any measurement (at most {:g})", where, key, printable(text), most));
  }
}

// The TOTAL line is the buckets' sum, to the printout's rounding, and the `# wall` line's step (the
// buckets split that one wall-clock step).
void check_total(const std::vector<DecompositionBucket>& buckets, const std::map<std::string, std::string>& summary,
                 const std::string& path) {
  double sum = 0, total = -1;
  size_t parts = 0;
  for (const DecompositionBucket& b : buckets) {
    if (b.name == "TOTAL") total = b.ms;
    else sum += b.ms, ++parts;
  }
  if (total >= 0 && std::abs(sum - total) > 0.05 * static_cast<double>(parts + 1) + 0.005 * total) {
    throw WorkError(fmt::format("{}: the buckets add up to {:.1f} ms, the TOTAL line says {} ms: a decomposition's "
                                "buckets are its step", path, sum, total));
  }
  // The `# wall` line's attention shares are its attention bucket's FLOPs over all the buckets'
  // and its time over the step, to the printout's rounding (a tenth of a percent).
  double attention_ms = -1, attention_tflop = 0, tflop = 0;
  for (const DecompositionBucket& b : buckets) {
    if (b.name == "TOTAL") continue;
    if (b.name.rfind("attention", 0) == 0) attention_ms = b.ms, attention_tflop = b.tflop.value_or(0);
    tflop += b.tflop.value_or(0);
  }
  const auto share_said = [&](const char* key) -> std::optional<double> {
    const auto it = summary.find(key);
    if (it == summary.end()) return std::nullopt;
    return std::strtod(it->second.c_str(), nullptr);  // checked a number by check_summary
  };
  const double whole_ms = total >= 0 ? total : sum;
  for (const auto& [key, implied] : {std::pair{"attention FLOP share", tflop > 0 ? 100 * attention_tflop / tflop : -1.0},
                                     std::pair{"attention wall share", whole_ms > 0 && attention_ms >= 0 ? 100 * attention_ms / whole_ms : -1.0}}) {
    const std::optional<double> said = share_said(key);
    if (said && implied >= 0 && std::abs(*said - implied) > 0.5) {
      throw WorkError(fmt::format("{}: the `# wall` line's {} is {:g}%, its buckets give {:.1f}%: one of them was edited",
                                  path, key, *said, implied));
    }
  }
  if (const auto step = summary.find("step"); step != summary.end()) {
    const double wall = std::strtod(step->second.c_str(), nullptr);  // checked a number by check_summary
    const double whole = total >= 0 ? total : sum;
    if (std::abs(wall - whole) > 0.1 + 0.05 * static_cast<double>(parts) + 0.01 * whole) {
      throw WorkError(fmt::format("{}: the `# wall` line's step is {} ms, the {} {:.1f} ms: the buckets split that one step",
                                  path, step->second, total >= 0 ? "TOTAL line" : "buckets (no TOTAL line) add up to",
                                  whole));
    }
  }
}

}  // namespace

namespace {

// `decompose`'s records: the first decomposition.
DecompositionLog read_decomposition_records(const LineSource& t) {
  DecompositionLog log;
  log.path = t.path;
  size_t seen = 0;
  for_each_record(t, [&](const RecordLine& r) {
    // The run's length, depth and batch, where the decomposition does not say them (our engine's
    // records: its context's config).
    if (r.type == "context" && seen == 0 && r.json.contains("config") && r.json["config"].is_object()) {
      const auto& c = r.json["config"];
      for (const auto& [key, as] : {std::pair{"seqlen", "seq"}, std::pair{"layers", "layers"}, std::pair{"batch", "batch"}}) {
        if (c.contains(key) && c[key].is_number_integer() && c[key].get<int64_t>() > 0) {  // 0: not known
          log.header[as] = std::to_string(c[key].get<int64_t>());
          if (std::string(as) == "seq") log.seqlen = c[key].get<int64_t>();
        }
      }
    }
    if (r.type != "decomposition") return;
    log.records.push_back(read_decomposition_record(Fields(r.json, r.where)));  // each one checked
    log.record_where.push_back(r.where);
    if (seen++ > 0) return;
    const DecompositionRecord& d = log.records.back();
    log.gpu = d.gpu;
    log.header["source"] = d.source;
    log.header["file"] = d.file;
    log.header["steps"] = d.steps_from;
    if (d.seqlen) log.header["seq"] = std::to_string(*d.seqlen), log.seqlen = *d.seqlen;
    if (r.json.contains("batch")) log.header["batch"] = std::to_string(d.batch), log.batch = d.batch;
    log.summary["step"] = fmt::format("{:.2f}", d.step_ms);
    for (const DecompositionBucketRecord& b : d.buckets) {
      DecompositionBucket x;
      x.name = b.name;
      x.ms = b.ms;
      x.tflop = b.tflop;
      x.tflops = b.tflops;
      log.buckets.push_back(x);
    }
  }, log.warnings, "a record");
  if (seen == 0) throw WorkError(fmt::format("{}: no decomposition records", t.path));
  if (seen > 1) {
    const DecompositionRecord& first = log.records.front();
    log.warnings.push_back(fmt::format("{} decompositions in the file (several GPUs or ranks): the first is compared "
                                       "(GPU {}{})", seen, first.device,
                                       first.rank ? fmt::format(", rank {} of {}", *first.rank, *first.world_size) : ""));
  }
  return log;
}

}  // namespace

DecompositionLog read_decomposition_log(const LineSource& t) {
  if (looks_like_records(t)) {
    DecompositionLog log = read_decomposition_records(t);
    log.provenance = read_provenance(t);
    return log;
  }
  DecompositionLog log;
  log.path = t.path;
  log.provenance = read_provenance(t);
  size_t ignored = 0;
  t.for_each([&](const Line& l) {
    const std::string line = trim(l.text);
    const std::string where = t.where(l.index);
    if (line.empty()) return;
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
      return;
    }
    if (auto header = gpu_header(line, where)) {
      // The step's length, a whole number of tokens a step can have: another is no length at all
      // (compare would pair it by its text, the records would leave it out).
      if (const auto seq = header->find("seq"); seq != header->end()) {
        const std::string& v = seq->second;
        const bool digits = !v.empty() && v.size() <= 9 && v.find_first_not_of("0123456789") == std::string::npos;
        log.seqlen = digits ? std::stoll(v) : 0;
        if (*log.seqlen < 1 || *log.seqlen > kMaxDecomposedSeqlen) {
          throw WorkError(fmt::format("{}: seq={} is not a sequence length (1 to {} tokens)", where, printable(v),
                                      kMaxDecomposedSeqlen));
        }
      }
      // Its sequences per step (benchmark.py's and bench_decompose.py's bs=, or batch=): each step's
      // work is that many sequences'.
      for (const char* key : {"bs", "batch"}) {
        const auto it = header->find(key);
        if (it == header->end()) continue;
        const std::string& v = it->second;
        const bool digits = !v.empty() && v.size() <= 6 && v.find_first_not_of("0123456789") == std::string::npos && v[0] != '0';
        if (!digits) {
          throw WorkError(fmt::format("{}: {}={} is not a number of sequences per step (1 to 999999)", where, key, printable(v)));
        }
        const int64_t b = std::stoll(v);
        if (key == std::string("batch") && header->count("bs") && b != log.batch) {
          throw WorkError(fmt::format("{}: bs={} and batch={} say two numbers of sequences per step", where,
                                      printable(header->at("bs")), printable(v)));
        }
        log.batch = b;
      }
      log.gpu = header->at("gpu");
      log.header = std::move(*header);
      return;
    }
    if (line[0] == '#') return;
    DecompositionBucket b;
    if (bucket_line(line, where, b)) {
      if (log.buckets.size() >= kMaxPoints) {
        throw WorkError(fmt::format("{}: more than {} bucket lines: not a decomposition upgradebench reads", where, kMaxPoints));
      }
      log.buckets.push_back(b);
      return;
    }
    ++ignored;
  });
  if (log.buckets.empty()) {
    throw WorkError(fmt::format("{}: no bucket lines (`NAME <x> TFLOP <x> ms <x> TFLOPS MFU <x>%`)", t.path));
  }
  check_summary(log.summary, t.path + ": the `# wall` line");
  check_total(log.buckets, log.summary, t.path);
  if (ignored) log.warnings.push_back(fmt::format("{} other lines ignored", ignored));
  return log;
}

}  // namespace ub

namespace ub {

DecompositionLog with_total_line(DecompositionLog log) {
  if (!log.records.empty() ||
      std::any_of(log.buckets.begin(), log.buckets.end(), [](const DecompositionBucket& b) { return b.name == "TOTAL"; })) {
    return log;
  }
  DecompositionBucket total{"TOTAL", 0, 0.0, std::nullopt, std::nullopt};
  for (const DecompositionBucket& b : log.buckets) {
    total.ms += b.ms;
    total.tflop = total.tflop && b.tflop ? std::optional<double>(*total.tflop + *b.tflop) : std::nullopt;
  }
  if (total.tflop && total.ms > 0) total.tflops = *total.tflop / (total.ms / 1e3);
  log.buckets.push_back(total);
  return log;
}

DecompositionRecord printout_record(const DecompositionLog& d) {
  DecompositionRecord r;
  r.source = "bench_decompose.py";
  r.file = d.path;
  r.gpu = d.gpu;
  r.steps_from = "the printout's measured wall step";
  r.steps = 1;
  r.step = "wall step";
  if (d.seqlen) r.seqlen = *d.seqlen;
  r.batch = d.batch;
  for (const DecompositionBucket& b : d.buckets) {
    if (b.name == "TOTAL") {
      r.step_ms = b.ms;
      continue;
    }
    DecompositionBucketRecord x;
    x.name = b.name;
    x.ms = x.min_ms = x.max_ms = b.ms;
    x.tflop = b.tflop;
    x.tflops = b.tflops;
    r.buckets.push_back(std::move(x));
  }
  if (r.step_ms <= 0) {  // no TOTAL line: the buckets' sum (check_total held the `# wall` step to it)
    for (const auto& x : r.buckets) r.step_ms += x.ms;
  }
  for (auto& x : r.buckets) x.share = r.step_ms > 0 ? x.ms / r.step_ms : 0;
  return r;
}

}  // namespace ub
