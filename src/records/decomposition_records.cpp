// The decomposition record; see decomposition_records.hpp and docs/records.md.
#include "records/decomposition_records.hpp"

#include <fmt/format.h>

#include <cmath>

#include "base/error.hpp"
#include "records/measurement_bounds.hpp"

namespace ub {

using nlohmann::json;

void to_json(json& j, const DecompositionRecord& r) {
  json buckets = json::array(), unclassified = json::array();
  for (const auto& b : r.buckets) {
    json x = {{"name", b.name}, {"ms", b.ms}, {"share", b.share}, {"min_ms", b.min_ms}, {"max_ms", b.max_ms},
              {"kernel_ms", b.kernel_ms}};
    if (b.tflops) {
      x["tflop"] = or_null(b.tflop);
      x["tflops"] = *b.tflops;
    }
    if (b.gbps) {
      x["gbytes"] = or_null(b.gbytes);
      x["gbps"] = *b.gbps;
    }
    if (b.tflops || b.gbps) {
      x["of_ceiling"] = or_null(b.of_ceiling);
      x["ceiling"] = b.ceiling;
    }
    buckets.push_back(x);
  }
  for (const auto& k : r.unclassified) unclassified.push_back({{"name", k.name}, {"ms", k.ms}, {"count", k.count}});
  j = {{"type", "decomposition"}, {"source", r.source}, {"file", r.file}, {"gpu", r.gpu}, {"device", r.device},
       {"seqlen", or_null(r.seqlen)}, {"batch", r.batch}, {"steps_from", r.steps_from}, {"steps", r.steps}, {"step", r.step}, {"step_ms", r.step_ms},
       {"wall_step_ms", or_null(r.wall_step_ms)}, {"buckets", buckets}, {"communication_ms", r.communication_ms},
       {"communication_overlapped_ms", r.communication_overlapped_ms}, {"unclassified", unclassified}};
  if (r.world_size) j["rank"] = or_null(r.rank), j["world_size"] = *r.world_size;
}

DecompositionRecord read_decomposition_record(const Fields& f) {
  DecompositionRecord r;
  r.source = f.string_or("source", "");
  r.file = f.string_or("file", "");
  r.gpu = f.string_or("gpu", "");
  r.device = f.optional_count("device").value_or(0);
  if (r.device >= kMaxRanks) {
    throw WorkError(fmt::format("{}: \"device\" is {}, past any host's GPUs: a damaged record (decompose the trace "
                                "again)", f.where(), r.device));
  }
  r.rank = f.optional_count("rank");
  r.world_size = f.optional_count("world_size");
  if (r.world_size && (*r.world_size < 1 || *r.world_size > kMaxRanks)) {
    throw WorkError(fmt::format("{}: \"world_size\" is {}, where a job has 1 to {} ranks: a damaged record (decompose "
                                "the trace again)", f.where(), *r.world_size, kMaxRanks));
  }
  if (r.rank && (!r.world_size || *r.rank >= *r.world_size)) {
    throw WorkError(fmt::format("{}: \"rank\" is {}, not one of the job's {}: a damaged record (decompose the trace "
                                "again)", f.where(), *r.rank,
                                r.world_size ? fmt::format("{} ranks", *r.world_size) : "ranks (no \"world_size\")"));
  }
  r.seqlen = f.optional_count("seqlen");
  r.batch = f.optional_count("batch").value_or(1);
  r.steps_from = f.string_or("steps_from", "");
  r.steps = static_cast<size_t>(f.optional_count("steps").value_or(0));
  r.step = f.string_or("step", "");
  r.step_ms = f.positive("step_ms");
  if (r.step_ms < kMinMs || r.step_ms > kMaxMs) {
    throw WorkError(fmt::format("{}: step_ms {} is beyond any measurement ({:g} to {:g} ms)", f.where(), r.step_ms, kMinMs, kMaxMs));
  }
  r.wall_step_ms = f.optional_number("wall_step_ms");
  r.communication_ms = f.optional_number("communication_ms").value_or(0);
  r.communication_overlapped_ms = f.optional_number("communication_overlapped_ms").value_or(0);
  const json& buckets = f.raw().contains("buckets") ? f.raw().at("buckets") : json();
  if (!buckets.is_array() || buckets.empty()) throw WorkError(f.where() + ": a decomposition without buckets");
  for (const json& b : buckets) {
    const Fields bf(b, f.where());
    DecompositionBucketRecord x;
    x.name = bf.string("name");
    x.ms = bf.number("ms");
    if (x.ms < 0) throw WorkError(fmt::format("{}: bucket \"{}\" has a negative time", f.where(), x.name));
    if (x.ms > kMaxMs) throw WorkError(fmt::format("{}: bucket \"{}\": {} ms is beyond any measurement", f.where(), x.name, x.ms));
    x.share = bf.optional_number("share").value_or(0);
    x.min_ms = bf.optional_number("min_ms").value_or(x.ms);
    x.max_ms = bf.optional_number("max_ms").value_or(x.ms);
    x.kernel_ms = bf.optional_number("kernel_ms").value_or(0);
    x.tflop = bf.optional_number("tflop");
    x.tflops = bf.optional_number("tflops");
    if (x.tflops && (*x.tflops < 0 || *x.tflops > kMaxTflops)) {
      throw WorkError(fmt::format("{}: bucket \"{}\": {} TFLOPS is beyond any measurement", f.where(), x.name, *x.tflops));
    }
    // The rate is the work over the time (decompose writes it so): a rate edited alone is refused.
    if (x.tflop && x.tflops && x.ms > 0 && std::abs(*x.tflops - *x.tflop / x.ms * 1e3) > 0.01 * *x.tflops + 1e-6) {
      throw WorkError(fmt::format("{}: bucket \"{}\": {} TFLOPS is not its {} TFLOP over its {} ms", f.where(), x.name,
                                  *x.tflops, *x.tflop, x.ms));
    }
    x.gbytes = bf.optional_number("gbytes");
    x.gbps = bf.optional_number("gbps");
    x.of_ceiling = bf.optional_number("of_ceiling");
    x.ceiling = bf.string_or("ceiling", "");
    r.buckets.push_back(std::move(x));
  }
  // The buckets add up to the step (records.md): a step_ms or a bucket edited alone is refused.
  double sum = 0;
  for (const DecompositionBucketRecord& b : r.buckets) sum += b.ms;
  if (std::abs(sum - r.step_ms) > 0.005 * r.step_ms + 1e-3) {
    throw WorkError(fmt::format("{}: the buckets add up to {:.3f} ms, step_ms says {:.3f}: a decomposition's buckets are "
                                "its step", f.where(), sum, r.step_ms));
  }
  if (f.raw().contains("unclassified") && f.raw().at("unclassified").is_array()) {
    for (const json& k : f.raw().at("unclassified")) {
      const Fields kf(k, f.where());
      r.unclassified.push_back({kf.string("name"), kf.number("ms"), static_cast<size_t>(kf.optional_count("count").value_or(0))});
    }
  }
  return r;
}

}  // namespace ub
