// The GPU's own record of what ran: CUPTI's activity API gives every kernel, copy and fill with
// its start and end on one clock (the GPU's, read by the driver; cuptiGetTimestamp reads the same
// clock on the host), its stream, and the operation it was launched in (an external correlation
// id pushed by the caller around each operation). It is what torch.profiler reads through Kineto;
// unlike CUDA events around each operation it times kernels, not the gaps between them, and sees
// kernels of every stream. Records are gathered in buffers CUPTI fills and hands back; records
// CUPTI had to drop for want of a buffer are counted, never silently missing.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ub::gpu {

struct GpuActivityRecord {
  enum class Kind : uint8_t { kernel, memcpy, memset };
  Kind kind = Kind::kernel;
  uint64_t start = 0, end = 0;  // nanoseconds, on ActivityTrace::now()'s clock
  uint32_t device = 0, stream = 0;
  uint32_t name = 0;      // kernels: index into ActivityLog::names
  uint64_t operation = 0;  // the innermost ActivityTrace::push() id around its launch; 0: none
  uint64_t bytes = 0;      // copies and fills
};

struct ActivityLog {
  std::vector<GpuActivityRecord> records;  // in the order CUPTI delivered them
  std::vector<std::string> names;          // kernel names, each once
  uint64_t dropped = 0;                    // records CUPTI dropped (no buffer to put them in)
};

// Tracing is on from construction to destruction; one trace at a time in a process (CUPTI's
// buffers are process-wide): a second one is a WorkError.
class ActivityTrace {
 public:
  ActivityTrace();
  ~ActivityTrace();
  ActivityTrace(const ActivityTrace&) = delete;
  ActivityTrace& operator=(const ActivityTrace&) = delete;

  // Nanoseconds on the activity records' clock.
  static uint64_t now();
  // Everything launched between push(id) and the matching pop() is tagged with `id` (nonzero).
  static void push(uint64_t id);
  static void pop();

  // Waits for the records of work already finished on the GPU (synchronise first) and returns
  // every record since the last collect().
  ActivityLog collect();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace ub::gpu
