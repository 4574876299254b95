// torch.profiler's traces as Kineto writes them (export_chrome_trace, the tensorboard handler):
// a Chrome trace object, {"deviceProperties": [{"id", "name", ...}], "distributedInfo": {"rank",
// "world_size", ...} (a job under torch.distributed), ..., "traceEvents": [...]},
// `.json` or `.json.gz`, streamed (base/json_stream.hpp). Of each event only what a
// decomposition needs is read: phase, category, name, start and duration (microseconds), and for
// GPU activities the device and stream (`args`); the rest of an event is skipped unparsed.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace ub::trace {

// Kinds of events, from the category (case-insensitive).
enum class EventKind { kernel, memcpy, memset, cpu_annotation, gpu_annotation, other };

struct TraceEvent {
  char ph = 0;
  EventKind kind = EventKind::other;
  std::string name;           // read for kernels, copies and annotations only
  double ts = 0, dur = 0;     // microseconds
  int64_t device = -1, stream = -1;
};

// The traceName our engine's trace carries (measure/engine_trace.cpp): a step it timed, not a
// torch.profiler trace of another program's.
inline constexpr const char* kEngineTraceName = "upgradebench engine, CUPTI activity records";

struct TraceInfo {
  std::string path;
  std::string trace_name;  // its traceName, where it says one
  std::map<int64_t, std::string> device_names;  // deviceProperties: id -> name
  std::optional<int64_t> rank, world_size;      // distributedInfo, where the job was distributed
  uint64_t events = 0, bytes = 0;               // bytes: decompressed
  uint64_t not_objects = 0;                     // elements of traceEvents that are no event (not an object)
  uint64_t annotations_not_complete = 0;        // annotations written as a begin/end pair or an instant: left out
};

// Calls `each` for every complete ("X") event of a kind other than `other`; the event is reused
// between calls. WorkError naming the file and byte offset for a malformed trace, and naming the
// event (its index in traceEvents) and the field for such an event whose "ts" or "dur" is missing,
// not a finite number, or (dur) negative or longer than a day; and for a distributedInfo whose rank
// or world_size is not a whole number, or whose rank is not one of the world's.
TraceInfo read_kineto_trace(const std::string& path, const std::function<void(const TraceEvent&)>& each);

}  // namespace ub::trace
