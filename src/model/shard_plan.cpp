// Units, buckets and shards of the flat parameter buffer; see shard_plan.hpp.
#include "model/shard_plan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "base/error.hpp"

namespace ub {

namespace {

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// The tensors of each unit of llama_layout(m), as [first, end) index ranges.
std::vector<std::pair<std::string, std::pair<size_t, size_t>>> unit_tensors(const LlamaLayout& base) {
  std::vector<std::pair<std::string, std::pair<size_t, size_t>>> units;
  units.push_back({"embedding", {base.embed, base.embed + 1}});
  for (size_t l = 0; l < base.layers.size(); ++l) {
    const LayerParams& p = base.layers[l];
    units.push_back({fmt::format("layer {}", l), {p.attn_norm, p.last + 1}});
  }
  units.push_back({"head", {base.final_norm, base.tensors.size()}});  // the untied lm_head follows the norm
  return units;
}

}  // namespace

ShardPlan plan_shards(const ModelShape& m, int world, size_t bucket_elems) {
  if (world < 1 || world > 65536) throw UsageError(fmt::format("a data-parallel world of {} ranks (1..65536)", world));
  const LlamaLayout base = llama_layout(m);
  ShardPlan p;
  p.world = world;
  p.layout = base;
  p.bucket_of.assign(base.tensors.size(), 0);
  p.unit_of.assign(base.tensors.size(), 0);
  const size_t align = static_cast<size_t>(world) * kParamAlign;
  size_t at = 0;  // the next element of the padded layout
  for (const auto& [name, range] : unit_tensors(base)) {
    ShardUnit u;
    u.name = name;
    u.begin = at;
    u.first_bucket = p.buckets.size();
    const size_t unit_index = p.units.size();
    size_t t = range.first;
    while (t < range.second) {
      ShardBucket b;
      b.begin = at;
      b.first_tensor = t;
      b.unit = unit_index;
      size_t elems = 0;
      do {
        ParamTensor& pt = p.layout.tensors[t];
        pt.offset = at;
        const size_t padded = round_up(pt.count(), kParamAlign);
        at += padded;
        elems += padded;
        p.bucket_of[t] = p.buckets.size();
        p.unit_of[t] = unit_index;
        ++t;
      } while (t < range.second &&
               (bucket_elems == 0 || elems + round_up(p.layout.tensors[t].count(), kParamAlign) <= bucket_elems));
      at = b.begin + round_up(at - b.begin, align);
      b.end = at;
      b.end_tensor = t;
      b.slice = b.size() / static_cast<size_t>(world);
      b.shard_offset = p.shard;
      p.shard += b.slice;
      p.largest_bucket = std::max(p.largest_bucket, b.size());
      p.buckets.push_back(b);
    }
    u.end = at;
    u.end_bucket = p.buckets.size();
    p.largest_unit = std::max(p.largest_unit, u.size());
    p.most_buckets_per_unit = std::max(p.most_buckets_per_unit, u.end_bucket - u.first_bucket);
    p.units.push_back(u);
  }
  p.layout.total = at;
  return p;
}

std::vector<ElementRange> ShardPlan::padding_of(size_t bucket) const {
  const ShardBucket& b = buckets[bucket];
  std::vector<ElementRange> gaps;
  for (size_t t = b.first_tensor; t < b.end_tensor; ++t) {
    const ParamTensor& pt = layout.tensors[t];
    const size_t data_end = pt.offset + pt.count() - b.begin;
    const size_t next = (t + 1 < b.end_tensor ? layout.tensors[t + 1].offset : b.end) - b.begin;
    if (data_end == next) continue;
    if (!gaps.empty() && gaps.back().end == data_end) gaps.back().end = next;
    else gaps.push_back({data_end, next});
  }
  return gaps;
}

std::vector<ShardPiece> ShardPlan::pieces(int rank) const {
  std::vector<ShardPiece> out;
  for (const ShardBucket& b : buckets) {
    const size_t lo = b.slice_begin(rank), hi = lo + b.slice;
    for (size_t t = b.first_tensor; t < b.end_tensor; ++t) {
      const ParamTensor& pt = layout.tensors[t];
      const size_t from = std::max(lo, pt.offset), to = std::min(hi, pt.offset + pt.count());
      if (from >= to) continue;
      out.push_back({t, from, b.shard_offset + (from - lo), to - from, pt.init_index + (from - pt.offset), pt.is_norm});
    }
  }
  return out;
}

}  // namespace ub
