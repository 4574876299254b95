// Reader of mamf-finder.py's output and of our `mamf` records; see mamf_log.hpp.
#include "records/readers/mamf_log.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <tuple>

#include "base/error.hpp"
#include "base/text.hpp"
#include "facts/dtype.hpp"
#include "base/text_cursor.hpp"
#include "records/context_record.hpp"
#include "records/measurement_bounds.hpp"
#include "records/record_file.hpp"

namespace ub {

namespace {

// The dtype of a `** dtype:` line, one the catalog has peaks for: another (a typo, a dtype newer
// than this build) would be held to no peak, and is refused naming the line.
std::string known_dtype(const std::string& said, const std::string& where) {
  const std::string d = dtype_from_torch_name(said);
  if (!parse_dtype(d.substr(0, d.find(" (")))) {
    throw WorkError(fmt::format("{}: dtype \"{}\" is none upgradebench knows (bf16, fp16, fp32, tf32, fp8, fp4, ...)",
                                where, printable(said)));
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

// The shapes read so far, each with where it stands: a shape measured twice on one GPU (a run
// appended again to its --out, a line pasted) is read as its later measurement, in the earlier
// one's place, with a warning naming both (repeated_points.hpp's rule), never counted twice.
struct ShapesRead {
  std::map<std::tuple<int, int64_t, int64_t, int64_t, std::string>, size_t> index;
  std::vector<std::string> wheres;
};

void add_shape(MamfLog& log, MamfShape s, const std::string& where, ShapesRead& read) {
  auto& shapes = log.outcome.shapes;
  const auto key = std::tuple{s.device, s.m, s.n, s.k, s.dtype};
  if (const auto it = read.index.find(key); it != read.index.end()) {
    log.warnings.push_back(fmt::format("{}: {} measured again ({}): the later one is kept", where, s.shape(),
                                       read.wheres[it->second]));
    shapes[it->second] = std::move(s);
    read.wheres[it->second] = where;
    return;
  }
  if (shapes.size() >= kMaxShapes) {
    throw WorkError(fmt::format("{}: more than {} shapes in one file: not a MAMF log upgradebench reads", where, kMaxShapes));
  }
  read.index.emplace(key, shapes.size());
  read.wheres.push_back(where);
  shapes.push_back(std::move(s));
}

int64_t count(std::string_view digits, const std::string& where) {
  if (digits.size() > 15) throw WorkError(fmt::format("{}: a size of {} digits is too large", where, digits.size()));
  return std::stoll(std::string(digits));
}

// "Tried 79 shapes => ..." or "Across 79 shapes in range: ...": the count.
std::optional<int64_t> shapes_counted(std::string_view line, const std::string& where) {
  for (std::string_view lead : {"Tried ", "Across "}) {
    if (!line.starts_with(lead)) continue;
    const std::string_view rest = line.substr(lead.size());
    const size_t digits = rest.find_first_not_of("0123456789");
    if (digits == 0 || digits == std::string_view::npos || !rest.substr(digits).starts_with(" shapes")) return std::nullopt;
    return count(rest.substr(0, digits), where);
  }
  return std::nullopt;
}

// "  12 | 712.3(mean) 715.0(median) 720.1(max) @ 4096x4096x4096 | ..."
bool shape_line(std::string_view line, const std::string& where, MamfShape& s) {
  TextCursor c(line);
  std::string_view id, mean, median, max, m, n, k;
  if (!(c.skip_space() && c.digits(id) && c.skip_space() && c.literal("|") && c.skip_space() && c.decimal(mean) &&
        c.literal("(mean)") && c.space() && c.decimal(median) && c.literal("(median)") && c.space() &&
        c.decimal(max) && c.literal("(max)") && c.skip_space() && c.literal("@") && c.skip_space() && c.digits(m) &&
        c.literal("x") && c.digits(n) && c.literal("x") && c.digits(k))) {
    return false;
  }
  s.mean_tflops = parse_decimal(mean, where, "mean");
  s.median_tflops = parse_decimal(median, where, "median");
  s.max_tflops = parse_decimal(max, where, "max");
  s.m = count(m, where);
  s.n = count(n, where);
  s.k = count(k, where);
  s.ok = true;
  return true;
}

// "  12 | ...": the start of a shape line, whatever follows (a line that starts so and does not read
// as one is a damaged shape, said so rather than dropped without a word).
bool starts_like_shape_line(std::string_view line) {
  TextCursor c(line);
  std::string_view id;
  return c.skip_space() && c.digits(id) && c.skip_space() && c.literal("|");
}

// No GPU comes near an exaflop (1e6 TFLOPS), a matrix has no side of length zero, and no GPU holds
// operands with a side past 2^20 (a bf16 square of that side is 2 TiB): a shape line saying
// otherwise is a damaged one. Empty when `s` is possible, else why not.
constexpr int64_t kMaxMatmulSide = int64_t{1} << 20;
constexpr double kMaxMatmulFlop = 1e18;
std::string impossible_shape(const MamfShape& s) {
  if (s.m < 1 || s.n < 1 || s.k < 1) return fmt::format("a side of {}x{}x{} is zero", s.m, s.n, s.k);
  // Nor one whose operands no GPU holds: a side past 2^20, or one product past an exaflop.
  if (std::max({s.m, s.n, s.k}) > kMaxMatmulSide ||
      2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) > kMaxMatmulFlop) {
    return fmt::format("{}x{}x{} is past any GPU's memory", s.m, s.n, s.k);
  }
  for (const double v : {s.mean_tflops, s.median_tflops, s.max_tflops}) {
    if (v > kMaxTflops) return fmt::format("{} TFLOPS is more than any GPU does", v);
    if (!(v > 0)) return fmt::format("{} TFLOPS is no timing of a product that ran", v);
  }
  // The fastest timing bounds the others: a mean or a median above the max is no set of timings.
  for (const auto& [v, what] : {std::pair{s.mean_tflops, "mean"}, std::pair{s.median_tflops, "median"}}) {
    if (v > s.max_tflops * (1 + 1e-9)) return fmt::format("its {} {:g} TFLOPS is above its max {:g}", what, v, s.max_tflops);
  }
  return "";
}

// Shape lines left out, counted, and the first of them named: one warning for the file.
struct LeftOutShapes {
  size_t count = 0;
  std::string first_where, first_why;
  void add(const std::string& where, const std::string& why) {
    if (count++ == 0) first_where = where, first_why = why;
  }
  void warn(std::vector<std::string>& warnings) const {
    if (count == 0) return;
    warnings.push_back(fmt::format("{}: a shape line left out, damaged or impossible ({}){}", first_where, first_why,
                                   count > 1 ? fmt::format("; {} such lines in all", count) : ""));
  }
};

// "median: 715.0 TFLOPS @ 4096x4096x4096" (trimmed); which of mean, median, max it is.
bool footer_line(std::string_view line, const std::string& where, MamfShape& s, std::string_view& which) {
  TextCursor c(line);
  std::string_view v, m, n, k;
  if (!(c.one_of({"mean:", "median:", "max:"}, which) && c.space() && c.decimal(v) && c.space() &&
        c.literal("TFLOPS") && c.space() && c.literal("@") && c.space() && c.digits(m) && c.literal("x") &&
        c.digits(n) && c.literal("x") && c.digits(k))) {
    return false;
  }
  which.remove_suffix(1);
  s.m = count(m, where);
  s.n = count(n, where);
  s.k = count(k, where);
  s.ok = true;
  const double tflops = parse_decimal(v, where, "TFLOPS");
  (which == "mean" ? s.mean_tflops : which == "median" ? s.median_tflops : s.max_tflops) = tflops;
  return true;
}

// "geometric mean: 702.1 TFLOPS" (trimmed).
bool mean_line(std::string_view line, std::string_view& which, std::string_view& value) {
  TextCursor c(line);
  return c.one_of({"arithmetic", "geometric"}, which) && c.literal(" mean:") && c.space() && c.decimal(value) &&
         c.space() && c.literal("TFLOPS");
}

// A line that begins like one of the footer's figures ("mean:", "geometric mean:", ...) but is
// not one: a damaged footer, said, not passed over.
bool starts_like_footer_line(std::string_view line) {
  for (std::string_view head : {"mean:", "median:", "max:", "arithmetic mean:", "geometric mean:"}) {
    if (line.substr(0, head.size()) == head) return true;
  }
  return false;
}

// "Across 1000 shapes in range: m=[...] in this run:" (trimmed): the ranges between.
bool ranges_line(std::string_view line, std::string& ranges) {
  TextCursor c(line);
  std::string_view shapes;
  if (!(c.literal("Across ") && c.digits(shapes) && c.literal(" shapes in range:") && c.skip_space())) return false;
  std::string_view r = c.rest();
  if (!r.empty() && r.back() == ':') r.remove_suffix(1);
  constexpr std::string_view tail = "in this run";
  if (r.size() < tail.size() || r.substr(r.size() - tail.size()) != tail) return false;
  ranges = trim(r.substr(0, r.size() - tail.size()));
  return true;
}

// "- _CudaDeviceProperties(name='NVIDIA H200', major=9, ..., uuid=95b16759-..., ...)": the name
// (the first name='...' with something between the quotes) and the uuid (36 hexadecimal digits
// and dashes, "GPU-" before them or not). False when the line names no GPU.
bool device_properties(std::string_view line, MamfLog& log) {
  std::string_view name;
  for (size_t at = line.find("name='"); at != std::string_view::npos && name.empty(); at = line.find("name='", at + 1)) {
    const size_t from = at + 6, to = line.find('\'', from);
    if (to == std::string_view::npos) break;
    name = line.substr(from, to - from);
  }
  if (name.empty()) return false;
  if (log.gpu.empty()) log.gpu = std::string(name);
  const auto uuid_at = [&](size_t from) {
    size_t n = 0;
    while (from + n < line.size() && n < 36 && (std::isxdigit(static_cast<unsigned char>(line[from + n])) || line[from + n] == '-')) ++n;
    return n == 36 ? line.substr(from, 36) : std::string_view();
  };
  for (size_t at = line.find("uuid="); at != std::string_view::npos; at = line.find("uuid=", at + 1)) {
    std::string_view uuid = line.substr(at + 5, 4) == "GPU-" ? uuid_at(at + 9) : std::string_view();
    if (uuid.empty()) uuid = uuid_at(at + 5);
    if (!uuid.empty()) {
      log.gpu_uuid = "GPU-" + std::string(uuid);
      break;
    }
  }
  return true;
}

// "- torch=2.9.1" (trimmed) in the software versions' section.
bool version_line(std::string_view line, std::string_view& name, std::string_view& version) {
  TextCursor c(line);
  if (!(c.literal("-") && c.skip_space() && c.name(name) && c.literal("="))) return false;
  version = c.rest();
  for (char ch : version) {
    if (TextCursor::is_space(ch)) return false;
  }
  return !version.empty();
}

}  // namespace

std::optional<MamfShape> MamfLog::best(MamfOutcome::By by) const {
  if (auto s = outcome.best(by)) return s;
  return by == MamfOutcome::By::mean ? footer_mean : by == MamfOutcome::By::median ? footer_median : footer_max;
}

MamfLog read_mamf_log(const LineSource& t) {
  MamfLog log;
  log.path = t.path;
  log.provenance = read_provenance(t);
  size_t lines_left_out = 0;  // mamf-finder.py shape lines that did not read as one
  ShapesRead read;
  if (looks_like_records(t)) {
    log.format = "upgradebench";
    size_t other_devices = 0;
    for_each_record(t, [&](const RecordLine& r) {
      const Fields f(r.json, r.where);
      if (r.type == "context") {
        const ContextRecord c = read_context(f);
        if (c.fingerprint.gpus.empty()) return;
        expect_one_gpu(log.gpu, c.fingerprint.gpus.front().name, r.where);
        const std::string dtype(to_string(read_mamf_config(Fields(c.config, r.where)).dtype));
        if (!log.dtype.empty() && dtype != log.dtype) {
          throw WorkError(fmt::format("{}: a run of {} after one of {}: one dtype per file (their ceilings differ)", r.where,
                                      dtype, log.dtype));
        }
        log.dtype = dtype;
        if (const auto& uuid = c.fingerprint.gpus.front().uuid) log.gpu_uuid = *uuid;
        for (const auto& [name, entry] : c.fingerprint.stack) {
          if (entry.version) log.stack.emplace_back(name, *entry.version);
        }
      } else if (r.type == "mamf") {
        MamfShape s = read_mamf_shape(f);
        if (!s.ok || s.quick) return;
        if (const std::string why = impossible_shape(s); !why.empty()) throw WorkError(fmt::format("{}: {}", r.where, why));
        // Its TFLOPS are its 2MNK over its median time: a pair that disagrees is one figure said twice wrongly.
        if (s.time && s.time->ms.median > 0 && s.median_tflops > 0) {
          const double implied = s.flops() / (s.time->ms.median * 1e9);
          if (std::abs(s.median_tflops / implied - 1) > 0.05) {
            throw WorkError(fmt::format("{}: {} at a median {:.1f} TFLOPS beside a median time of {:g} ms, which is {:.1f} "
                                        "TFLOPS of its 2MNK: one of the figures is wrong", r.where, s.shape(),
                                        s.median_tflops, s.time->ms.median, implied));
          }
        }
        // The algorithm timed is the one whose result was checked: if that check failed, the
        // time is of something other than the product.
        if (s.algo) {
          const auto check = std::find_if(s.checks.begin(), s.checks.end(),
                                          [&](const GemmCheck& c) { return c.rank == s.algo->heuristic_rank; });
          if (check == s.checks.end()) {
            throw WorkError(fmt::format("{}: {}: no check of its timed algorithm (rank {}) in \"checks\": whether its "
                                        "product matched the reference is not known", r.where, s.shape(),
                                        s.algo->heuristic_rank));
          }
          if (!check->ok || check->nans > 0 || check->failures > 0) {
            log.warnings.push_back(fmt::format("{}: {} left out: its timed algorithm (rank {}) failed its check against "
                                               "the reference ({} failures, {} NaN)", r.where, s.shape(),
                                               check->rank, check->failures, check->nans));
            return;
          }
        }
        // One run measures one dtype (its context's): a shape of another is not of this ceiling.
        // A dtype is told by its name in any case ("FP8" is fp8); one we have no name for is said as written.
        const std::optional<Dtype> shape_dtype = parse_dtype(dtype_from_torch_name(s.dtype)), run_dtype = parse_dtype(log.dtype);
        if (!s.dtype.empty() && !log.dtype.empty() &&
            (shape_dtype && run_dtype ? *shape_dtype != *run_dtype : dtype_from_torch_name(s.dtype) != log.dtype)) {
          throw WorkError(fmt::format("{}: a shape in {} in a run of {} (its context record): one dtype per file", r.where,
                                      shape_dtype ? std::string(to_string(*shape_dtype)) : "\"" + printable(s.dtype) + "\"",
                                      log.dtype));
        }
        // Several GPUs measured at once (--devices all): compare the first one, count the rest.
        if (!log.outcome.shapes.empty() && s.device != log.outcome.shapes.front().device) {
          ++other_devices;
          return;
        }
        add_shape(log, std::move(s), r.where, read);
      }
    }, log.warnings);
    if (other_devices) {
      log.warnings.push_back(fmt::format("{} shapes of other GPUs in the file left out (the first GPU is compared)",
                                         other_devices));
    }
  } else {
    log.format = "mamf-finder";
    std::string section;  // the header section a line is in ("critical software versions", ...)
    LeftOutShapes left_out;
    // The footer's counts of the shapes it tried ("Tried 79 shapes", "Across 79 shapes in range"),
    // each with its line.
    std::vector<std::pair<int64_t, std::string>> counted;
    std::string device_named;  // the GPU the header's device line names
    t.for_each([&](const Line& l) {
      const std::string trimmed = trim(l.text);
      const std::string where = t.where(l.index);
      MamfShape s;
      std::string_view which, value, name;
      std::string ranges;
      if (const auto n = shapes_counted(trimmed, where)) counted.emplace_back(*n, where);  // the line is read on below
      if (shape_line(l.text, where, s)) {
        if (const std::string why = impossible_shape(s); !why.empty()) left_out.add(where, why);
        else add_shape(log, s, where, read);
      } else if (starts_like_shape_line(l.text)) {
        left_out.add(where, "not `ID | T(mean) T(median) T(max) @ MxNxK`");
      } else if (footer_line(trimmed, where, s, which)) {
        (which == "mean" ? log.footer_mean : which == "median" ? log.footer_median : log.footer_max) = s;
      } else if (mean_line(trimmed, which, value)) {
        (which == "arithmetic" ? log.arithmetic_mean : log.geometric_mean) = parse_decimal(value, where, "TFLOPS");
      } else if (starts_like_footer_line(trimmed)) {
        log.warnings.push_back(fmt::format("{}: a footer line left out, damaged ({}): the figures are the shape lines'",
                                           where, escape_control(trimmed.substr(0, 80))));
      } else if (ranges_line(trimmed, ranges)) {
        log.ranges = std::move(ranges);
      } else if (starts_with_lower(trimmed, "** dtype:")) {
        log.dtype = known_dtype(trim(trimmed.substr(9)), where);
      } else if (trimmed.find("DeviceProperties(") != std::string::npos && device_properties(trimmed, log)) {
        // the GPU's name and uuid are read from it
      } else if (starts_with_lower(trimmed, "device:")) {
        // One run measures one GPU: a second device line naming another is two logs in one.
        expect_one_gpu(device_named, trim(trimmed.substr(7)), where);
        if (log.gpu.empty()) log.gpu = device_named;
      } else if (section == "critical software versions" && version_line(trimmed, name, value)) {
        log.stack.emplace_back(std::string(name), std::string(value));
      }
      if (trimmed.rfind("** ", 0) == 0) section = to_lower(trim(trimmed.substr(3, trimmed.find(':') - 3)));
    });
    left_out.warn(log.warnings);
    lines_left_out = left_out.count;
    // One line per shape tried: a count the lines do not make was cut or pasted into; a footer
    // alone, its shape lines cut away, is no measurement to read.
    for (const auto& [n, where] : counted) {
      if (n > 0 && log.outcome.shapes.empty() && lines_left_out == 0) {
        throw WorkError(fmt::format("{}: the footer counts {} shapes and the file has no shape line: lines were cut",
                                    where, n));
      }
      if (!log.outcome.shapes.empty() && static_cast<size_t>(n) != log.outcome.shapes.size() + lines_left_out) {
        throw WorkError(fmt::format("{}: the footer counts {} shapes, the file has {} shape lines: lines were cut, pasted "
                                    "or edited", where, n, log.outcome.shapes.size() + lines_left_out));
      }
    }
  }
  // mamf-finder.py's footer says again what its shape lines say: where both are there, the
  // footer must agree with the lines (to its rounding), or one of them was edited.
  // With shape lines left out as damaged the means cannot agree, but the best must: a best shape
  // the footer names and the lines no longer hold was the damaged line, and the ceiling is unknown.
  if (!log.outcome.shapes.empty()) {
    const auto agree = [&](const char* what, std::optional<double> said, std::optional<double> lines) {
      if (said && lines && std::abs(*said - *lines) > 0.05 + 0.005 * *lines) {
        throw WorkError(fmt::format("{}: the footer's {} {:g} TFLOPS is not what its {} shape lines give ({:.1f}): the "
                                    "file was edited or damaged{}", printable(t.path), what, *said,
                                    log.outcome.shapes.size(), *lines,
                                    lines_left_out > 0 ? fmt::format(" ({} shape line{} left out as damaged: the best "
                                                                     "may be among them)", lines_left_out,
                                                                     lines_left_out == 1 ? "" : "s")
                                                       : ""));
      }
    };
    if (lines_left_out == 0) {
      agree("arithmetic mean", log.arithmetic_mean, log.outcome.arithmetic_mean(MamfOutcome::By::mean));
      agree("geometric mean", log.geometric_mean, log.outcome.geometric_mean(MamfOutcome::By::mean));
    }
    for (const auto& [footer, by, what] : {std::tuple{&log.footer_mean, MamfOutcome::By::mean, "best mean"},
                                           std::tuple{&log.footer_median, MamfOutcome::By::median, "best median"},
                                           std::tuple{&log.footer_max, MamfOutcome::By::max, "best max"}}) {
      const std::optional<MamfShape> best = log.outcome.best(by);
      if (!*footer || !best) continue;
      agree(what, tflops_by(**footer, by), tflops_by(*best, by));
      // The shape it names is a shape line of that figure (one of several tied at the best, maybe).
      const MamfShape& f = **footer;
      const MamfOutcome::By figure = by;  // a structured binding is not captured by a lambda before C++20's clang 16
      if (lines_left_out == 0 && f.m > 0 && std::none_of(log.outcome.shapes.begin(), log.outcome.shapes.end(), [&](const MamfShape& x) {
            return x.m == f.m && x.n == f.n && x.k == f.k &&
                   std::abs(tflops_by(x, figure) - tflops_by(f, figure)) <= 0.05 + 0.005 * tflops_by(f, figure);
          })) {
        throw WorkError(fmt::format("{}: the footer's {} is at {}x{}x{}, and no shape line of that shape gives {:g} TFLOPS: "
                                    "the file was edited or damaged", printable(t.path), what, f.m, f.n, f.k,
                                    tflops_by(f, by)));
      }
    }
  }
  if (!log.arithmetic_mean) log.arithmetic_mean = log.outcome.arithmetic_mean(MamfOutcome::By::mean);
  if (!log.geometric_mean) log.geometric_mean = log.outcome.geometric_mean(MamfOutcome::By::mean);
  if (log.outcome.shapes.empty() && lines_left_out > 0) {
    throw WorkError(fmt::format("{}: every shape line is damaged or impossible: no shape to read the footer against", printable(t.path)));
  }
  if (log.outcome.shapes.empty() && !log.footer_median) {
    throw WorkError(fmt::format("{}: no MAMF results (per-shape lines, a footer, or mamf records)", t.path));
  }
  return log;
}

}  // namespace ub
