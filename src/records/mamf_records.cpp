// `mamf` records; see mamf_records.hpp and docs/records.md.
#include "records/mamf_records.hpp"

#include <fmt/format.h>

#include "base/error.hpp"
#include "records/measurement_bounds.hpp"

namespace ub {

using nlohmann::json;

void MamfConfig::validate() const {
  // A step's products reach a vocabulary (128256 for Llama 3) and a sequence's tokens; a grid
  // beyond 65536 in a dimension is a typo.
  const int64_t largest = listed.empty() ? 65536 : int64_t{1} << 22;
  for (const auto* sizes : {&ms, &ns, &ks}) {
    if (sizes->empty()) throw UsageError("mamf: every dimension needs at least one size");
    for (int64_t x : *sizes) {
      if (x < 1) throw UsageError(fmt::format("matrix size {} must be positive", x));
      if (x > largest) {
        throw UsageError(fmt::format("matrix size {} is beyond {}: absurd for a MAMF {}", x, largest,
                                     listed.empty() ? "search" : "shape"));
      }
    }
  }
  if (!listed.empty() && (ms.size() != listed.size() || ns.size() != listed.size() || ks.size() != listed.size())) {
    throw UsageError("mamf: listed shapes need one m, n and k each");
  }
  if (!listed.empty() && search) throw UsageError("--search looks for the ceiling over a grid, not over listed shapes");
  if (top_k < 1 || top_k > 64) throw UsageError("--top-k must be within 1..64");
  if (check_samples < 4 || check_samples > 65536) throw UsageError("--check-samples must be within 4..65536");
  if (search_budget_s < 0) throw UsageError("--search-budget-s must not be negative");
  timing.validate();
}

std::string AlgoInfo::label() const {
  return fmt::format("algo {} tile {} stages {} splitK {} swizzle {}", id, tile, stages, split_k, swizzle);
}

std::string MamfShape::shape() const { return fmt::format("{}x{}x{}", m, n, k); }
double MamfShape::flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }

void to_json(json& j, const MamfConfig& c) {
  j = {{"dtype", to_string(c.dtype)}, {"m", c.ms}, {"n", c.ns}, {"k", c.ks}, {"top_k", c.top_k},
       {"workspace_bytes", c.workspace_bytes}, {"check_samples", c.check_samples}, {"seed", c.seed},
       {"search", c.search}, {"search_budget_s", c.search_budget_s},
       {"shapes_of", c.listed.empty() ? json() : json(c.listed_from)},
       {"l2_flush", "256 MiB memset before every sample"}, {"output", "re-randomised before every sample"}};
  put_timing(j, c.timing);
}

MamfConfig read_mamf_config(const Fields& f) {
  MamfConfig c;
  const std::string dt = f.string_or("dtype", "bf16");
  const auto d = parse_dtype(dt);
  if (!d) throw WorkError(fmt::format("{}: unknown dtype \"{}\"", f.where(), dt));
  c.dtype = *d;
  auto sizes = [&](const char* key) {
    std::vector<int64_t> v;
    if (f.raw().contains(key) && f.raw().at(key).is_array()) {
      for (const json& x : f.raw().at(key)) v.push_back(Fields(json{{"v", x}}, f.where()).count("v"));
    }
    return v;
  };
  c.ms = sizes("m"), c.ns = sizes("n"), c.ks = sizes("k");
  c.top_k = static_cast<int>(f.optional_count("top_k").value_or(c.top_k));
  c.timing = read_timing(f, c.timing);
  c.search = f.boolean_or("search", false);
  return c;
}

void to_json(json& j, const GemmCheck& c) {
  j = {{"rank", c.rank}, {"ok", c.ok}, {"worst_ratio", c.worst_ratio}, {"failures", c.failures}, {"nans", c.nans}};
}

void to_json(json& j, const AlgoInfo& a) {
  j = {{"rank", a.heuristic_rank}, {"id", a.id},           {"tile", a.tile},       {"stages", a.stages},
       {"split_k", a.split_k},     {"reduction", a.reduction}, {"swizzle", a.swizzle}, {"custom", a.custom},
       {"workspace", a.workspace}, {"waves", a.waves}};
}

void to_json(json& j, const MamfShape& s) {
  j = {{"type", "mamf"}, {"device", s.device}, {"dtype", s.dtype}, {"m", s.m}, {"n", s.n}, {"k", s.k},
       {"flop", s.flops()}, {"quick", s.quick}, {"elapsed_s", s.elapsed_s}, {"checks", s.checks}};
  if (s.listed) j["step_gemm"] = s.listed->name, j["count"] = s.listed->count;
  if (!s.ok) {
    j["error"] = s.error;
    return;
  }
  json screened = json::array();
  for (const ScreenedAlgo& a : s.screened) screened.push_back({{"rank", a.rank}, {"median_ms", a.median_ms}});
  j["screened"] = screened;
  if (s.algo) j["algo"] = *s.algo;
  j["algos_tried"] = s.algos_tried;
  j["algos_valid"] = s.algos_valid;
  if (s.time) {
    j["time_ms"] = *s.time;
    j["cv"] = s.time->ms.cv();
    j["relative_noise"] = s.time->ms.relative_noise();
    j["stop"] = s.time->stop;
  }
  j["tflops"] = {{"mean", s.mean_tflops}, {"median", s.median_tflops}, {"max", s.max_tflops}};
  j["telemetry"] = s.telemetry;
}

MamfShape read_mamf_shape(const Fields& f) {
  MamfShape s;
  s.device = static_cast<int>(f.optional_count("device").value_or(0));
  s.dtype = f.string_or("dtype", "");
  s.m = f.count("m"), s.n = f.count("n"), s.k = f.count("k");
  s.quick = f.boolean_or("quick", false);
  s.elapsed_s = f.optional_number("elapsed_s").value_or(0);
  s.error = f.string_or("error", "");
  if (auto t = f.optional_object("tflops")) {
    s.mean_tflops = t->number("mean");
    s.median_tflops = t->number("median");
    s.max_tflops = t->number("max");
    for (const auto& [name, v] : {std::pair{"mean", s.mean_tflops}, {"median", s.median_tflops}, {"max", s.max_tflops}}) {
      if (!(v >= 0) || !(v <= kMaxTflops)) {
        throw WorkError(fmt::format("{}: tflops \"{}\" is {:g}: from 0 to {:g} is a measurement, this is not", f.where(),
                                    name, v, kMaxTflops));
      }
    }
    s.ok = s.error.empty();
  }
  if (auto t = f.optional_object("time_ms")) {
    TimeStats ts = read_time_stats(*t);
    if (ts.stop.empty()) ts.stop = f.string_or("stop", "");
    s.time = ts;
  }
  if (auto t = f.optional_object("telemetry")) s.telemetry = read_telemetry(*t);
  s.algos_tried = static_cast<int>(f.optional_count("algos_tried").value_or(0));
  s.algos_valid = static_cast<int>(f.optional_count("algos_valid").value_or(0));
  if (f.has("step_gemm")) s.listed = ListedShape{f.string("step_gemm"), f.count("count")};
  // The winner and the checks of the algorithms: which one was timed, and whether its result
  // matched the reference (a reader leaves out a shape whose timed algorithm failed).
  if (auto a = f.optional_object("algo")) {
    AlgoInfo info;
    info.heuristic_rank = static_cast<int>(a->count("rank"));
    s.algo = info;
  }
  if (f.has("checks") && f.raw().at("checks").is_array()) {
    for (const json& c : f.raw().at("checks")) {
      if (!c.is_object()) throw WorkError(fmt::format("{}: \"checks\" holds a value that is not an object", f.where()));
      const Fields cf(c, f.where());
      GemmCheck g;
      g.rank = static_cast<int>(cf.count("rank"));
      g.ok = cf.boolean_or("ok", false);
      // Its worst error over its tolerance says what "ok" rests on: past 1 is a failed check,
      // whatever its "ok" says; without it, what it passed on is not known.
      const auto worst = cf.optional_number("worst_ratio");
      if (!worst) throw WorkError(fmt::format("{}: a check of rank {} has no \"worst_ratio\": what it passed on is not known", f.where(), g.rank));
      if (!(*worst <= 1.0)) g.ok = false;
      g.failures = static_cast<int>(cf.optional_count("failures").value_or(0));
      g.nans = static_cast<int>(cf.optional_count("nans").value_or(0));
      s.checks.push_back(g);
    }
  }
  return s;
}

namespace {
json best_json(const std::optional<MamfBest>& b) {
  return b ? json{{"tflops", b->tflops}, {"shape", b->shape}, {"device", b->device}} : json();
}
}  // namespace

void to_json(json& j, const MamfSummary& s) {
  j = {{"type", "mamf_summary"},
       {"device", s.device},
       {"shapes", s.shapes},
       {"shapes_failed", s.shapes_failed},
       {"shapes_screened", s.shapes_screened},
       {"best", {{"mean", best_json(s.best_mean)}, {"median", best_json(s.best_median)}, {"max", best_json(s.best_max)}}},
       {"arithmetic_mean_tflops", {{"mean", or_null(s.arithmetic_of_means)}, {"median", or_null(s.arithmetic_of_medians)}}},
       {"geometric_mean_tflops", {{"mean", or_null(s.geometric_of_means)}, {"median", or_null(s.geometric_of_medians)}}},
       {"step_tflops", or_null(s.step_tflops)},
       {"elapsed_s", s.elapsed_s},
       {"interrupted", s.interrupted}};
}

}  // namespace ub
