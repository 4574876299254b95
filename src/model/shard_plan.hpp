// How a data-parallel job of `world` ranks divides the flat parameter buffer
// (model/llama_layout.hpp) for ZeRO sharding: the same arithmetic for the parameters, the
// gradients and the optimizer state, so a shard of each is the same slices.
//
//   units    what ZeRO-3 gathers at once and what a pass uses together: the embedding, each
//            decoder layer, the head (final norm and untied lm_head). Contiguous in the layout.
//   buckets  what one collective moves: whole tensors of one unit, consecutive, up to
//            `bucket_elems` (a tensor larger than that is a bucket of its own; 0: one bucket per
//            unit). Each bucket's end is padded to a multiple of world x kParamAlign elements, so
//            it divides into `world` equal slices, each aligned for 16-byte accesses.
//   shards   rank r owns slice r of every bucket; its shard is those slices one after another,
//            in bucket order (ShardBucket::shard_offset). Reduce-scatter of a bucket leaves each
//            rank its slice of the averaged gradient; all-gather of the slices rebuilds the bucket.
//
// The padding moves tensors away from the offsets of llama_layout(m), so each tensor keeps the
// index it has there (ParamTensor::init_index): initial values follow that index, and a job of
// any world size starts from the same weights as one GPU. With world 1 and one bucket per unit
// the plan's layout is llama_layout(m) itself.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "facts/model_shape.hpp"
#include "model/llama_layout.hpp"

namespace ub {

struct ShardBucket {
  size_t begin = 0, end = 0;                // elements of the plan's layout, padding included
  size_t first_tensor = 0, end_tensor = 0;  // tensors [first, end) of the layout
  size_t unit = 0;
  size_t shard_offset = 0;  // where each rank's slice of this bucket starts in that rank's shard
  size_t slice = 0;         // elements of one rank's slice: (end - begin) / world
  size_t size() const { return end - begin; }
  size_t slice_begin(int rank) const { return begin + static_cast<size_t>(rank) * slice; }
};

struct ShardUnit {
  std::string name;                         // "embedding", "layer 3", "head"
  size_t first_bucket = 0, end_bucket = 0;  // buckets [first, end)
  size_t begin = 0, end = 0;                // elements
  size_t size() const { return end - begin; }
};

// A range of elements [begin, end) relative to something (a bucket).
struct ElementRange {
  size_t begin = 0, end = 0;
  bool operator==(const ElementRange&) const = default;
};

// The part of one tensor that lies in one rank's slice of its bucket.
struct ShardPiece {
  size_t tensor = 0;
  size_t layout_offset = 0;  // first element, in the plan's layout
  size_t shard_offset = 0;   // the same element, in the rank's shard
  size_t count = 0;
  size_t init_index = 0;     // the same element's index for initial values (llama_layout(m)'s offset)
  bool is_norm = false;
};

struct ShardPlan {
  int world = 1;
  LlamaLayout layout;
  std::vector<ShardBucket> buckets;
  std::vector<ShardUnit> units;      // [0] embedding, [1 + l] layer l, back() the head
  std::vector<size_t> bucket_of;     // per tensor
  std::vector<size_t> unit_of;       // per tensor
  size_t shard = 0;                  // elements of each rank's shard
  size_t largest_unit = 0, largest_bucket = 0, most_buckets_per_unit = 0;

  size_t embedding_unit() const { return 0; }
  size_t layer_unit(size_t layer) const { return 1 + layer; }
  size_t head_unit() const { return units.size() - 1; }
  // Where the gaps of a bucket lie (relative to its begin): each tensor's own padding and the
  // bucket's end padding, merged. A buffer reused for several buckets zeroes these.
  std::vector<ElementRange> padding_of(size_t bucket) const;
  // The pieces of every tensor in rank `rank`'s shard, in shard order.
  std::vector<ShardPiece> pieces(int rank) const;
};

// Throws UsageError for a world below 1 or above 65536.
ShardPlan plan_shards(const ModelShape& m, int world, size_t bucket_elems);

}  // namespace ub
