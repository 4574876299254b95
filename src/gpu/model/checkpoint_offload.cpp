// The layers' kept inputs in host memory; see checkpoint_offload.hpp.
#include "gpu/model/checkpoint_offload.hpp"

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/units.hpp"
#include "gpu/check.hpp"

namespace ub::gpu {

namespace {

size_t layers_of(const LlamaBuffers& b) { return b.x.size() - 1; }

}  // namespace

size_t CheckpointOffload::host_bytes(const StepDims& d, int64_t layers) {
  return static_cast<size_t>(layers) * d.activation_bytes(d.H);
}

std::string CheckpointOffload::describe(const StepDims& d, int64_t layers) {
  return fmt::format("the offloaded checkpoints ({} layers x {:.2f} GiB)", layers, to_gib(d.activation_bytes(d.H)));
}

CheckpointOffload::CheckpointOffload(LlamaBuffers& b, cudaStream_t compute)
    : b_(b), compute_(compute), bytes_(b.dims.activation_bytes(b.dims.H)),
      host_(host_bytes(b.dims, static_cast<int64_t>(layers_of(b))),
            describe(b.dims, static_cast<int64_t>(layers_of(b))), false) {
  if (b.checkpoint_slots.size() != kSlots) throw WorkError("offloaded checkpoints: the buffers planned no slots");
}

bf16* CheckpointOffload::host_input(size_t l) const { return host_.as<bf16>() + l * (bytes_ / sizeof(bf16)); }

size_t CheckpointOffload::slot_holding(size_t l) const {
  for (size_t s = 0; s < kSlots; ++s) {
    if (slots_[s].holds == static_cast<long>(l)) return s;
  }
  return kSlots;
}

void CheckpointOffload::assign(size_t slot, size_t l) {
  Slot& s = slots_[slot];
  if (s.holds >= 0) b_.x[static_cast<size_t>(s.holds)] = nullptr;
  s.holds = static_cast<long>(l);
  b_.x[l] = b_.checkpoint_slots[slot];
}

void CheckpointOffload::begin_step() {
  waits_.begin_step();
  for (Slot& s : slots_) {
    if (s.holds >= 0) b_.x[static_cast<size_t>(s.holds)] = nullptr;
    s.holds = -1, s.copied_in = false;
  }
}

void CheckpointOffload::before_write(size_t l) {
  const size_t slot = l % kSlots;
  Slot& s = slots_[slot];
  // Its last input must be in host memory before it is overwritten (the compute stream has
  // finished reading it: it did so earlier in its own order).
  if (s.copied_out) waits_.wait(compute_, s.to_host.get());
  assign(slot, l);
  s.copied_in = false;
}

void CheckpointOffload::written(size_t l) {
  Slot& s = slots_[slot_holding(l)];
  written_.record(compute_);
  UB_CUDA_CHECK(cudaStreamWaitEvent(copy_.get(), written_.get()));
  UB_CUDA_CHECK(cudaMemcpyAsync(host_input(l), b_.x[l], bytes_, cudaMemcpyDeviceToHost, copy_.get()));
  s.to_host.record(copy_.get());
  s.copied_out = true;
}

void CheckpointOffload::fetch(size_t l, size_t current) {
  size_t best = kSlots;
  for (size_t t = 0; t < kSlots; ++t) {  // free: none yet, or a layer whose backward is done; the earliest done first
    const long h = slots_[t].holds;
    if (h >= 0 && h <= static_cast<long>(current)) continue;
    if (best == kSlots || h < 0 || (slots_[best].holds >= 0 && h > slots_[best].holds)) best = t;
  }
  if (best == kSlots) throw WorkError(fmt::format("offloaded checkpoints: no free slot for layer {}'s input", l));
  Slot& s = slots_[best];
  // The backward pass of its last layer has read it (a copy out of it is earlier on this stream).
  if (s.holds >= 0) UB_CUDA_CHECK(cudaStreamWaitEvent(copy_.get(), s.released.get()));
  assign(best, l);
  UB_CUDA_CHECK(cudaMemcpyAsync(b_.x[l], host_input(l), bytes_, cudaMemcpyHostToDevice, copy_.get()));
  s.from_host.record(copy_.get());
  s.copied_in = true;
}

void CheckpointOffload::before_backward(size_t l) {
  size_t slot = slot_holding(l);
  if (slot == kSlots) fetch(l, l), slot = slot_holding(l);
  if (slots_[slot].copied_in) waits_.wait(compute_, slots_[slot].from_host.get());
  if (l > 0 && slot_holding(l - 1) == kSlots) fetch(l - 1, l);
}

void CheckpointOffload::after_backward(size_t l) { slots_[slot_holding(l)].released.record(compute_); }

double CheckpointOffload::exposed_ms() const {
  UB_CUDA_CHECK(cudaStreamSynchronize(compute_));
  return waits_.sum_ms();
}

}  // namespace ub::gpu
