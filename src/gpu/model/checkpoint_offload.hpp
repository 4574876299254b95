// Offloaded checkpoints (--offload-checkpoints, the ALST recipe): with activation checkpointing
// what fills the GPU at long sequences is the layers' kept inputs, one seqlen x hidden bf16 tensor
// per layer (2 GiB a layer at 256k tokens of Llama-3.1-8B); here they live in pinned host memory
// and the GPU holds a few of them at a time.
//
// The forward pass writes each layer's input x[l] into one of kSlots device slots, round-robin;
// as soon as it is written, a copy stream of its own moves it to host memory while the layer reads
// it. Before a slot is written again the compute stream waits for its copy to the host. The
// backward pass needs x[l] again for layer l's recompute: it brings x[l - 1] back while layer l is
// recomputed and gone back through (one layer ahead), into a slot whose layer is done. The last
// kSlots inputs are still in their slots when the backward pass starts and are not brought back.
// The output of the last layer (the final norm's input) stays on the GPU in a buffer of its own.
//
// The compute stream waits only where a copy is late; those waits are timed (gpu/timed_waits.hpp):
// the step's exposed copy time. Everything is ordered by events, so a slot is never written while
// a copy reads it, nor read before the copy into it is done.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <string>

#include "gpu/cuda_raii.hpp"
#include "gpu/model/llama_buffers.hpp"
#include "gpu/pinned_buffer.hpp"
#include "gpu/timed_waits.hpp"

namespace ub::gpu {

class CheckpointOffload {
 public:
  // The input a layer reads, the output it writes, the input before it on its way to host memory.
  static constexpr size_t kSlots = 3;
  // Pinned host memory for every layer's input; the slots are b.checkpoint_slots.
  CheckpointOffload(LlamaBuffers& b, cudaStream_t compute);

  // Host memory the layers' inputs take: layers x seqlen x hidden bf16.
  static size_t host_bytes(const StepDims& d, int64_t layers);
  // What they are, in the words of an error: "the offloaded checkpoints (32 layers x 2.00 GiB)".
  static std::string describe(const StepDims& d, int64_t layers);

  // The start of a step's forward pass.
  void begin_step();
  // Forward: x[l] is about to be written (a slot is assigned, b.x[l] points at it) / has been
  // written (its copy to host memory is queued).
  void before_write(size_t l);
  void written(size_t l);
  // Backward: layer l's input is about to be read (its copy back waited for; x[l - 1]'s queued) /
  // layer l's backward is done with it (its slot can be reused).
  void before_backward(size_t l);
  void after_backward(size_t l);

  // Milliseconds the compute stream waited for copies in the last step (synchronises).
  double exposed_ms() const;
  size_t pinned_bytes() const { return host_.bytes(); }

 private:
  struct Slot {
    long holds = -1;           // the layer whose input it holds this step (-1: none yet)
    bool copied_in = false;    // holds it by a copy back, which the compute stream must wait for
    bool copied_out = false;   // a copy to host memory was ever queued from it
    Event to_host, from_host, released;
  };
  size_t slot_holding(size_t l) const;  // kSlots: none
  bf16* host_input(size_t l) const;
  void assign(size_t slot, size_t l);   // b.x[l] is now the slot (its last holder's pointer cleared)
  // Queues the copy of x[l] back into a slot whose layer's backward is done (below `current`).
  void fetch(size_t l, size_t current);

  LlamaBuffers& b_;
  cudaStream_t compute_;
  const size_t bytes_;  // of one layer's input
  PinnedBuffer host_;
  Stream copy_;
  Event written_;
  std::array<Slot, kSlots> slots_;
  TimedWaits waits_;
};

}  // namespace ub::gpu
