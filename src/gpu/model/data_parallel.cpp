// Gradient averaging, ZeRO sharding and the offloaded optimizer over NCCL; see data_parallel.hpp.
#include "gpu/model/data_parallel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "base/error.hpp"
#include "gpu/check.hpp"
#include "gpu/kernels/llama_ops.cuh"
#include "gpu/model/host_copies.hpp"
#include "gpu/model/host_optimizer.hpp"
#include "gpu/nccl_comm.hpp"

namespace ub::gpu {

namespace {

ncclDataType_t nccl_of(Elem e) { return e == Elem::bf16 ? ncclBfloat16 : ncclFloat32; }

char* bytes_at(void* base, size_t elements, size_t element_bytes) {
  return static_cast<char*>(base) + elements * element_bytes;
}

// The units of each use of weights in one step, in the order the passes take them: the
// embedding, the layers, the head (with the embedding when tied), the layers back down (the
// embedding's backward reads no weights).
std::vector<std::vector<size_t>> use_schedule(const ShardPlan& p) {
  std::vector<std::vector<size_t>> s;
  const size_t layers = p.units.size() - 2;
  const bool tied = p.layout.lm_head == p.layout.embed;
  s.push_back({p.embedding_unit()});
  for (size_t l = 0; l < layers; ++l) s.push_back({p.layer_unit(l)});
  if (tied) s.push_back({p.head_unit(), p.embedding_unit()});
  else s.push_back({p.head_unit()});
  for (size_t l = layers; l-- > 0;) s.push_back({p.layer_unit(l)});
  return s;
}

}  // namespace

DataParallel::DataParallel(const EngineOptions& o, LlamaBuffers& b, cudaStream_t compute)
    : opt_(o), b_(b), plan_(b.plan), zero_(o.zero), compute_(compute), schedule_(use_schedule(b.plan)),
      unit_slots_(b.unit_slots.size()) {
  if (!o.comm) throw WorkError("data-parallel training needs a communicator");
  world_ = o.comm->world(), rank_ = o.comm->rank();
  if (world_ != plan_.world) throw WorkError(fmt::format("a shard plan for {} ranks in a job of {}", plan_.world, world_));
  pending_.resize(plan_.buckets.size());
  reduced_buckets_.resize(plan_.buckets.size());
  bucket_slot_of_.resize(plan_.buckets.size(), -1);
  for (size_t i = 0; i < b.bucket_slots.size(); ++i) bucket_slot_free_.push_back(std::make_unique<Event>());
  bucket_slot_used_.assign(b.bucket_slots.size(), false);
  for (size_t i = 0; i < b.slice_slots.size(); ++i) slice_slot_free_.push_back(std::make_unique<Event>());
  slice_slot_used_.assign(b.slice_slots.size(), false);
  if (o.offload_optimizer) {
    for (size_t i = 0; i < plan_.buckets.size(); ++i) on_host_.push_back(std::make_unique<Event>());
    int device = 0;
    UB_CUDA_CHECK(cudaGetDevice(&device));
    host_ = std::make_unique<HostOptimizer>(plan_, o.adam, static_cast<size_t>(std::max(o.host_threads, 0)), device,
                                            [this](size_t bucket) {
      const ShardBucket& k = plan_.buckets[bucket];
      bf16* to = zero_ == 3 ? b_.w16 + k.shard_offset : b_.w16 + k.slice_begin(rank_);
      UB_CUDA_CHECK(cudaMemcpyAsync(to, host_->weights() + k.shard_offset, k.slice * sizeof(bf16),
                                    cudaMemcpyHostToDevice, copy_.get()));
    });
  }
}

DataParallel::~DataParallel() = default;

void DataParallel::wait(cudaEvent_t e, TimedWaits& into) { into.wait(compute_, e); }

double DataParallel::exposed_comm_ms() const {
  UB_CUDA_CHECK(cudaStreamSynchronize(compute_));
  return comm_waits_.sum_ms();
}

double DataParallel::exposed_offload_ms() const {
  UB_CUDA_CHECK(cudaStreamSynchronize(compute_));
  return offload_waits_.sum_ms();
}

void DataParallel::begin_step(int64_t next_step) {
  if (host_) host_->begin(next_step);
  next_use_ = 0;
  comm_waits_.begin_step();
  offload_waits_.begin_step();
  for (size_t k = 0; k < plan_.buckets.size(); ++k) {
    pending_[k] = plan_.buckets[k].end_tensor - plan_.buckets[k].first_tensor;
    reduced_buckets_[k] = false;
    bucket_slot_of_[k] = -1;
  }
  // The communication of this step follows what the compute stream did before it: the last
  // step's optimizer (the shards the gathers read) and this step's cleared norm.
  step_start_.record(compute_);
  UB_CUDA_CHECK(cudaStreamWaitEvent(comm_.get(), step_start_.get()));
  if (zero_ == 3) {
    for (UnitSlot& s : unit_slots_) {  // the shards changed: what the slots hold is stale
      if (s.unit != kNone) b_.unit_weights[s.unit] = nullptr;
      s.unit = kNone;
    }
    prefetch(0);
  }
}

size_t DataParallel::slot_of(size_t unit) const {
  for (size_t i = 0; i < unit_slots_.size(); ++i) {
    if (unit_slots_[i].unit == unit) return i;
  }
  return kNone;
}

void DataParallel::gather(size_t unit) {
  // A slot no pass is using and whose unit neither this use nor the next needs: an empty one
  // first, else the one released longest ago.
  auto needed = [&](size_t u) {
    for (size_t i = next_use_; i < std::min(next_use_ + 2, schedule_.size()); ++i) {
      if (std::find(schedule_[i].begin(), schedule_[i].end(), u) != schedule_[i].end()) return true;
    }
    return false;
  };
  size_t pick = kNone;
  for (size_t i = 0; i < unit_slots_.size(); ++i) {
    const UnitSlot& s = unit_slots_[i];
    if (s.busy || (s.unit != kNone && needed(s.unit))) continue;
    if (pick == kNone) {
      pick = i;
      continue;
    }
    const UnitSlot& best = unit_slots_[pick];
    const bool empty = s.unit == kNone, best_empty = best.unit == kNone;
    if ((empty && !best_empty) || (empty == best_empty && s.released_at < best.released_at)) pick = i;
  }
  if (pick == kNone) throw WorkError(fmt::format("no free slot to gather {} into", plan_.units[unit].name));
  UnitSlot& s = unit_slots_[pick];
  if (s.unit != kNone) b_.unit_weights[s.unit] = nullptr;
  if (s.used) UB_CUDA_CHECK(cudaStreamWaitEvent(comm_.get(), s.free.get()));  // its last use has ended
  const ShardUnit& u = plan_.units[unit];
  bf16* slot = b_.unit_slots[pick];
  const ncclComm_t c = opt_.comm->get();
  UB_NCCL_CHECK(ncclGroupStart());
  for (size_t k = u.first_bucket; k < u.end_bucket; ++k) {
    const ShardBucket& bk = plan_.buckets[k];
    UB_NCCL_CHECK(ncclAllGather(b_.w16 + bk.shard_offset, slot + (bk.begin - u.begin), bk.slice, ncclBfloat16, c,
                                comm_.get()));
  }
  UB_NCCL_CHECK(ncclGroupEnd());
  s.gathered.record(comm_.get());
  s.unit = unit;
  b_.unit_weights[unit] = slot;
}

void DataParallel::prefetch(size_t use_index) {
  if (use_index >= schedule_.size()) return;
  for (size_t u : schedule_[use_index]) {
    if (slot_of(u) == kNone) gather(u);
  }
}

void DataParallel::use(size_t unit, size_t also) {
  if (next_use_ >= schedule_.size()) throw WorkError("a unit used after the step's last use");
  const std::vector<size_t>& want = schedule_[next_use_];
  const std::vector<size_t> got = also == kNone ? std::vector<size_t>{unit} : std::vector<size_t>{unit, also};
  if (got != want) {
    throw WorkError(fmt::format("the passes used {} where the schedule says {}", plan_.units[unit].name,
                                plan_.units[want.front()].name));
  }
  if (zero_ == 3) {
    prefetch(next_use_);  // when not prefetched (a step's first use)
    for (size_t u : want) unit_slots_[slot_of(u)].busy = true;
    prefetch(next_use_ + 1);
    for (size_t u : want) wait(unit_slots_[slot_of(u)].gathered.get(), comm_waits_);
  }
  ++next_use_;
}

void DataParallel::release(size_t unit, size_t also) {
  if (zero_ != 3) return;
  for (size_t u : {unit, also}) {
    if (u == kNone) continue;
    const size_t i = slot_of(u);
    if (i == kNone) throw WorkError(fmt::format("{} released but not gathered", plan_.units[u].name));
    UnitSlot& s = unit_slots_[i];
    s.free.record(compute_);
    s.busy = false;
    s.used = true;
    s.released_at = ++releases_;
  }
}

void DataParallel::begin_gradients(size_t unit) {
  if (zero_ < 2) return;
  const ShardUnit& u = plan_.units[unit];
  const size_t gsize = b_.grads.element_bytes();
  const bool tied = plan_.layout.lm_head == plan_.layout.embed && unit == plan_.embedding_unit();
  for (size_t k = u.first_bucket; k < u.end_bucket; ++k) {
    const ShardBucket& bk = plan_.buckets[k];
    void* at = nullptr;
    if (tied) {
      at = bytes_at(b_.tied_embedding_grads, bk.begin - u.begin, gsize);
    } else {
      const size_t slot = next_bucket_slot_++ % b_.bucket_slots.size();
      if (bucket_slot_used_[slot]) wait(bucket_slot_free_[slot]->get(), comm_waits_);  // its last reduce-scatter
      bucket_slot_of_[k] = static_cast<int>(slot);
      at = b_.bucket_slots[slot];
    }
    for (const ElementRange& gap : plan_.padding_of(k)) {  // a slot held other buckets' values there
      UB_CUDA_CHECK(cudaMemsetAsync(bytes_at(at, gap.begin, gsize), 0, (gap.end - gap.begin) * gsize, compute_));
    }
    b_.bucket_grads[k] = at;
  }
}

void DataParallel::gradient_final(size_t tensor) {
  const size_t k = plan_.bucket_of[tensor];
  if (pending_[k] == 0) throw WorkError(fmt::format("{}: its bucket was already reduced", plan_.layout[tensor].name));
  if (--pending_[k] == 0) reduce(k);
}

void* DataParallel::reduced_slice(size_t bucket) const {
  const ShardBucket& k = plan_.buckets[bucket];
  const size_t gsize = b_.grads.element_bytes();
  if (zero_ == 1) return bytes_at(b_.bucket_grads[bucket], k.slice_begin(rank_) - k.begin, gsize);
  return bytes_at(b_.grads.data, k.shard_offset, gsize);
}

void DataParallel::reduce(size_t bucket) {
  const ShardBucket& k = plan_.buckets[bucket];
  const ncclComm_t c = opt_.comm->get();
  cudaStream_t cs = comm_.get();
  const ncclDataType_t type = nccl_of(b_.grads.elem);
  const size_t gsize = b_.grads.element_bytes();
  void* grads = b_.bucket_grads[bucket];
  grad_ready_.record(compute_);  // a wait takes the event's latest record: one event serves every bucket
  UB_CUDA_CHECK(cudaStreamWaitEvent(cs, grad_ready_.get()));
  void* out = nullptr;  // this rank's part of the averaged gradient
  size_t count = k.slice;
  int slice_slot = -1;
  if (zero_ == 0) {
    UB_NCCL_CHECK(ncclAllReduce(grads, grads, k.size(), type, ncclAvg, c, cs));
    out = grads, count = k.size();
  } else {
    if (zero_ >= 2 && host_) {
      slice_slot = static_cast<int>(next_slice_slot_++ % b_.slice_slots.size());
      if (slice_slot_used_[static_cast<size_t>(slice_slot)]) {
        UB_CUDA_CHECK(cudaStreamWaitEvent(cs, slice_slot_free_[static_cast<size_t>(slice_slot)]->get()));
      }
      out = b_.slice_slots[static_cast<size_t>(slice_slot)];
    } else {
      out = reduced_slice(bucket);
    }
    UB_NCCL_CHECK(ncclReduceScatter(grads, out, k.slice, type, ncclAvg, c, cs));  // in place for ZeRO-1
  }
  accumulate_squares(ConstFp32OrBf16(out, b_.grads.elem), count, b_.norm_sq, cs);
  if (bucket_slot_of_[bucket] >= 0) {
    const auto slot = static_cast<size_t>(bucket_slot_of_[bucket]);
    bucket_slot_free_[slot]->record(cs);
    bucket_slot_used_[slot] = true;
  }
  if (host_) {  // the reduced slice to host memory, on the copy stream
    slice_reduced_.record(cs);
    UB_CUDA_CHECK(cudaStreamWaitEvent(copy_.get(), slice_reduced_.get()));
    UB_CUDA_CHECK(cudaMemcpyAsync(host_->grads() + k.shard_offset, out, k.slice * gsize, cudaMemcpyDeviceToHost,
                                  copy_.get()));
    on_host_[bucket]->record(copy_.get());
    if (slice_slot >= 0) {
      slice_slot_free_[static_cast<size_t>(slice_slot)]->record(copy_.get());
      slice_slot_used_[static_cast<size_t>(slice_slot)] = true;
    }
    if (!host_->clipping()) host_->queue(bucket, on_host_[bucket]->get());  // no norm to wait for
  }
  reduced_buckets_[bucket] = true;
}

void DataParallel::finish_backward() {
  for (size_t k = 0; k < plan_.buckets.size(); ++k) {
    if (!reduced_buckets_[k]) throw WorkError(fmt::format("bucket {} ({}) was never reduced", k, plan_.units[plan_.buckets[k].unit].name));
  }
  if (next_use_ != schedule_.size()) throw WorkError("the step ended before its last use of weights");
  if (zero_ >= 1) UB_NCCL_CHECK(ncclAllReduce(b_.norm_sq, b_.norm_sq, 1, ncclFloat64, ncclSum, opt_.comm->get(), comm_.get()));
  reduced_.record(comm_.get());
  wait(reduced_.get(), comm_waits_);
}

void DataParallel::all_gather_weights() {
  const ncclComm_t c = opt_.comm->get();
  UB_NCCL_CHECK(ncclGroupStart());
  for (const ShardBucket& k : plan_.buckets) {
    UB_NCCL_CHECK(ncclAllGather(b_.w16 + k.slice_begin(rank_), b_.w16 + k.begin, k.slice, ncclBfloat16, c, comm_.get()));
  }
  UB_NCCL_CHECK(ncclGroupEnd());
  weights_back_.record(comm_.get());
}

void DataParallel::optimizer_step(int64_t step) {
  const AdamWParams& adam = opt_.adam;
  const size_t gsize = b_.grads.element_bytes();
  if (host_) {
    TimedWaits::Pair& stall = offload_waits_.next();  // from here to the weights being back on the GPU
    stall.before.record(compute_);
    if (host_->clipping()) {  // the global norm first: known once every reduction is done
      UB_CUDA_CHECK(cudaEventSynchronize(reduced_.get()));
      double norm_sq = 0;
      UB_CUDA_CHECK(cudaMemcpy(&norm_sq, b_.norm_sq, sizeof norm_sq, cudaMemcpyDeviceToHost));
      host_->set_clip(clip_coefficient(static_cast<float>(std::sqrt(norm_sq)), static_cast<float>(adam.max_grad_norm)));
      for (size_t k = 0; k < plan_.buckets.size(); ++k) host_->queue(k, on_host_[k]->get());
    }
    host_->finish();
    copied_back_.record(copy_.get());
    if (zero_ == 3) {
      UB_CUDA_CHECK(cudaStreamWaitEvent(compute_, copied_back_.get()));
    } else {
      UB_CUDA_CHECK(cudaStreamWaitEvent(comm_.get(), copied_back_.get()));
      all_gather_weights();
      UB_CUDA_CHECK(cudaStreamWaitEvent(compute_, weights_back_.get()));
    }
    stall.after.record(compute_);
    return;
  }
  if (zero_ == 0 || zero_ == 3) {  // the buffers hold exactly what this rank updates: one pass
    const size_t n = zero_ == 0 ? plan_.layout.total : plan_.shard;
    adamw_step(b_.master, b_.w16, b_.grads, b_.moments1, b_.moments2, n, b_.norm_sq, adam, step, compute_);
    return;
  }
  for (size_t i = 0; i < plan_.buckets.size(); ++i) {  // ZeRO 1-2: each bucket's slice of the whole weights
    const ShardBucket& k = plan_.buckets[i];
    const Fp32OrBf16 g(zero_ == 1 ? reduced_slice(i) : bytes_at(b_.grads.data, k.shard_offset, gsize), b_.grads.elem);
    adamw_step(b_.master ? b_.master + k.shard_offset : nullptr, b_.w16 + k.slice_begin(rank_), g,
               b_.moments1.at(k.shard_offset), b_.moments2.at(k.shard_offset), k.slice, b_.norm_sq, adam, step,
               compute_);
  }
  optimized_.record(compute_);
  UB_CUDA_CHECK(cudaStreamWaitEvent(comm_.get(), optimized_.get()));
  all_gather_weights();
  wait(weights_back_.get(), comm_waits_);
}

std::vector<float> DataParallel::gather_whole(const void* shard, Elem elem) {
  const size_t esize = elem == Elem::bf16 ? sizeof(bf16) : sizeof(float);
  DeviceBuffer whole(plan_.layout.total * esize);
  UB_CUDA_CHECK(cudaMemsetAsync(whole.get(), 0, whole.bytes(), comm_.get()));
  UB_NCCL_CHECK(ncclGroupStart());
  for (const ShardBucket& k : plan_.buckets) {
    UB_NCCL_CHECK(ncclAllGather(static_cast<const char*>(shard) + k.shard_offset * esize,
                                bytes_at(whole.get(), k.begin, esize), k.slice, nccl_of(elem), opt_.comm->get(),
                                comm_.get()));
  }
  UB_NCCL_CHECK(ncclGroupEnd());
  const size_t n = plan_.layout.total;
  if (elem == Elem::bf16) return widen(download(whole.as<bf16>(), n, comm_.get()));
  return download(whole.as<float>(), n, comm_.get());
}

std::vector<float> DataParallel::assemble(Whole what) {
  UB_CUDA_CHECK(cudaStreamSynchronize(compute_));
  UB_CUDA_CHECK(cudaStreamSynchronize(copy_.get()));
  const bool params = what == Whole::parameters;
  const Elem elem = params ? (b_.master || host_ ? Elem::f32 : Elem::bf16) : b_.grads.elem;
  const size_t esize = elem == Elem::bf16 ? sizeof(bf16) : sizeof(float);
  // This rank's shard of it, on the device.
  DeviceBuffer shard(plan_.shard * esize);
  if (host_) {
    const float* from = params ? host_->master() : host_->grads();
    UB_CUDA_CHECK(cudaMemcpyAsync(shard.get(), from, shard.bytes(), cudaMemcpyHostToDevice, comm_.get()));
  } else {
    const void* src = params ? (b_.master ? static_cast<const void*>(b_.master) : b_.w16) : b_.grads.data;
    const bool whole = params ? (b_.master ? zero_ == 0 : zero_ != 3) : zero_ <= 1;
    if (!whole) {
      UB_CUDA_CHECK(cudaMemcpyAsync(shard.get(), src, shard.bytes(), cudaMemcpyDeviceToDevice, comm_.get()));
    } else {
      for (const ShardBucket& k : plan_.buckets) {  // each bucket's own slice (every slice when not sharded)
        UB_CUDA_CHECK(cudaMemcpyAsync(bytes_at(shard.get(), k.shard_offset, esize),
                                      static_cast<const char*>(src) + k.slice_begin(rank_) * esize, k.slice * esize,
                                      cudaMemcpyDeviceToDevice, comm_.get()));
      }
    }
  }
  return gather_whole(shard.get(), elem);
}

void DataParallel::init_parameters(uint64_t seed) {
  const auto stddev = static_cast<float>(kInitStd);
  const LlamaLayout& L = plan_.layout;
  const std::vector<ShardPiece> pieces = plan_.pieces(rank_);
  float* whole_master = zero_ == 0 ? b_.master : nullptr;
  if (zero_ == 3) {
    for (const ShardPiece& p : pieces) {
      gpu::init_parameters(nullptr, b_.w16 + p.shard_offset, p.count, p.init_index, seed, stddev, p.is_norm, compute_);
    }
  } else {
    for (const ParamTensor& t : L.tensors) {
      gpu::init_parameters(whole_master ? whole_master + t.offset : nullptr, b_.w16 + t.offset, t.count(), t.init_index,
                           seed, stddev, t.is_norm, compute_);
    }
  }
  if (zero_ >= 1 && b_.master) {
    for (const ShardPiece& p : pieces) {
      gpu::init_parameters(b_.master + p.shard_offset, nullptr, p.count, p.init_index, seed, stddev, p.is_norm, compute_);
    }
  }
  if (host_) {  // drawn on the GPU, a bucket's slice at a time, then copied to host memory
    DeviceBuffer slice(plan_.largest_bucket / static_cast<size_t>(world_) * sizeof(float));
    size_t next = 0;
    for (size_t k = 0; k < plan_.buckets.size(); ++k) {
      const ShardBucket& bk = plan_.buckets[k];
      UB_CUDA_CHECK(cudaMemsetAsync(slice.get(), 0, bk.slice * sizeof(float), compute_));
      for (; next < pieces.size() && plan_.bucket_of[pieces[next].tensor] == k; ++next) {
        const ShardPiece& p = pieces[next];
        gpu::init_parameters(slice.as<float>() + (p.shard_offset - bk.shard_offset), nullptr, p.count, p.init_index,
                             seed, stddev, p.is_norm, compute_);
      }
      UB_CUDA_CHECK(cudaMemcpyAsync(host_->master() + bk.shard_offset, slice.get(), bk.slice * sizeof(float),
                                    cudaMemcpyDeviceToHost, compute_));
      UB_CUDA_CHECK(cudaStreamSynchronize(compute_));  // `slice` is reused
    }
  }
  UB_CUDA_CHECK(cudaStreamSynchronize(compute_));
}

void DataParallel::set_parameters(const std::vector<float>& flat) {
  const LlamaLayout& L = plan_.layout;
  if (flat.size() != L.total) throw WorkError(fmt::format("set_parameters: {} values for {}", flat.size(), L.total));
  const std::vector<ShardPiece> pieces = plan_.pieces(rank_);
  std::vector<float> shard(plan_.shard, 0.0f);
  for (const ShardPiece& p : pieces) std::copy_n(flat.begin() + static_cast<ptrdiff_t>(p.layout_offset), p.count, shard.begin() + static_cast<ptrdiff_t>(p.shard_offset));
  const std::vector<bf16> w = to_bf16(zero_ == 3 ? shard : flat);
  upload(b_.w16, w, compute_);
  if (b_.master) upload(b_.master, zero_ == 0 ? flat : shard, compute_);
  if (host_) std::copy(shard.begin(), shard.end(), host_->master());
  UB_CUDA_CHECK(cudaStreamSynchronize(compute_));  // the host vectors are about to go
}

}  // namespace ub::gpu
