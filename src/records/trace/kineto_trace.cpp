// Reading torch.profiler traces; see kineto_trace.hpp.
#include "records/trace/kineto_trace.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <type_traits>

#include "base/error.hpp"
#include "base/json_stream.hpp"
#include "records/measurement_bounds.hpp"

namespace ub::trace {

namespace {

bool equals_lower(std::string_view s, const char* lower) {
  const size_t n = std::strlen(lower);
  if (s.size() != n) return false;
  for (size_t i = 0; i < n; ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return true;
}

EventKind kind_of(std::string_view cat) {
  if (equals_lower(cat, "kernel")) return EventKind::kernel;
  if (equals_lower(cat, "gpu_memcpy")) return EventKind::memcpy;
  if (equals_lower(cat, "gpu_memset")) return EventKind::memset;
  if (equals_lower(cat, "user_annotation")) return EventKind::cpu_annotation;
  if (equals_lower(cat, "gpu_user_annotation")) return EventKind::gpu_annotation;
  return EventKind::other;
}

// A GPU activity or a step annotation longer than a day is no duration a profiler recorded
// (a trace holds seconds to minutes): a damaged or hand-edited number.
constexpr double kMaxDurationUs = 86400e6;
// Kineto's clock is microseconds since an epoch (1.7e15 in 2026, or since boot): past 1e17 (the
// year 5138) a start is a damaged number, and a kernel there would fall out of every step unsaid.
constexpr double kMaxTimestampUs = 1e17;

// What a member of an event held: absent, a value of its kind (a number; a whole number for an
// id), or something else (a string, even of digits, null, a fraction where a whole number goes).
template <class T>
struct MemberField {
  bool seen = false;
  std::optional<T> value;
  void read(JsonSpan& v) {
    seen = true;
    if constexpr (std::is_same_v<T, double>) value = v.number();
    else value = v.integer();
  }
};
using NumberField = MemberField<double>;
using IdField = MemberField<int64_t>;

// The error for an event whose `field` is not what a profiler writes, naming the event.
WorkError damaged_event(const TraceInfo& info, const TraceEvent& ev, std::string_view field, const std::string& why) {
  return WorkError(fmt::format("{}: traceEvents[{}] (\"{}\"): \"{}\" {}: a damaged trace (export it again from "
                               "torch.profiler)", info.path, info.events, ev.name.substr(0, 80), field, why));
}

// An event the decomposition uses must say when it ran and for how long: a duration that is
// absent, not a number, negative or absurd would be counted as zero or clipped, a silently wrong
// split, so the trace is refused naming the event and the field.
void check_times(const TraceInfo& info, const TraceEvent& ev, const NumberField& ts, const NumberField& dur) {
  const auto refuse = [&](const char* field, const std::string& why) { return damaged_event(info, ev, field, why); };
  for (const auto& [field, f] : {std::pair{"ts", &ts}, std::pair{"dur", &dur}}) {
    if (!f->seen) throw refuse(field, "is missing");
    if (!f->value) throw refuse(field, "is not a number");
    if (!std::isfinite(*f->value)) throw refuse(field, "is not a finite number");
  }
  if (*ts.value < 0) throw refuse("ts", fmt::format("is negative ({})", *ts.value));
  if (*ts.value > kMaxTimestampUs) throw refuse("ts", fmt::format("is {} us, past any profiler's clock", *ts.value));
  if (*dur.value < 0) throw refuse("dur", fmt::format("is negative ({})", *dur.value));
  if (*dur.value > kMaxDurationUs) throw refuse("dur", fmt::format("is {} us, more than a day", *dur.value));
}

// A GPU activity's device and stream (args) place it on a timeline: a value that is not a
// non-negative whole number (a string, 3.5, -2, past any GPU count) would be read as "unknown"
// and the activity folded onto another timeline, so the trace is refused. Kineto writes each GPU
// activity as one complete event ("X"): a begin/end pair or an instant would be left out unsaid.
constexpr int64_t kMaxDeviceId = 4095;

void check_activity(const TraceInfo& info, const TraceEvent& ev, const IdField& device, const IdField& stream) {
  if (ev.ph != 'X') {
    throw damaged_event(info, ev, "ph", ev.ph ? fmt::format("is \"{}\", where a GPU activity is one complete event (\"X\")",
                                                          std::string(1, ev.ph))
                                            : std::string("is missing, where a GPU activity is one complete event (\"X\")"));
  }
  if (device.seen && (!device.value || *device.value < 0 || *device.value > kMaxDeviceId)) {
    throw damaged_event(info, ev, "args.device", "is not a GPU index (a whole number from 0)");
  }
  if (stream.seen && (!stream.value || *stream.value < 0)) {
    throw damaged_event(info, ev, "args.stream", "is not a stream id (a whole number from 0)");
  }
}

// Which rank of which job wrote the trace: a rank that is not one of its world's, or a value
// that is no whole number, would place the trace among the wrong ones, so the trace is refused.
void read_distributed_info(TraceInfo& info, JsonSpan& value) {
  IdField rank, world;
  value.for_each_member([&](std::string_view k, JsonSpan& v) {
    if (k == "rank") rank.read(v);
    else if (k == "world_size") world.read(v);
    return true;
  });
  const auto refuse = [&](const char* field, const std::string& why) {
    return WorkError(fmt::format("{}: distributedInfo: \"{}\" {}: a damaged trace (export it again from "
                                 "torch.profiler)", info.path, field, why));
  };
  if (world.seen && (!world.value || *world.value < 1 || *world.value > kMaxRanks)) {
    throw refuse("world_size", fmt::format("is {}, not a job's count of ranks (a whole number, 1 to {})",
                                           world.value ? std::to_string(*world.value) : "no whole number", kMaxRanks));
  }
  if (rank.seen && (!rank.value || *rank.value < 0)) throw refuse("rank", "is not a rank (a whole number from 0)");
  if (rank.seen && !world.seen) throw refuse("rank", "is given without world_size: which job's rank is not known");
  if (rank.value && world.value && *rank.value >= *world.value) {
    throw refuse("rank", fmt::format("is {}, not one of the job's {} ranks (0 to {})", *rank.value, *world.value,
                                     *world.value - 1));
  }
  info.rank = rank.value, info.world_size = world.value;
}

}  // namespace

TraceInfo read_kineto_trace(const std::string& path, const std::function<void(const TraceEvent&)>& each) {
  TraceInfo info;
  info.path = path;
  ByteSource source(path);
  TraceEvent ev;
  std::string scratch, pending_name;
  StreamHandlers h;
  h.on_member = [&](std::string_view key, JsonSpan& value) {
    if (key == "distributedInfo" && value.peek() == '{') return read_distributed_info(info, value);
    if (key == "traceName" && value.peek() == '"') {
      info.trace_name = value.string();
      return;
    }
    if (key != "deviceProperties" || value.peek() != '[') return;
    value.for_each_element([&](JsonSpan& device) {
      if (device.peek() != '{') return true;
      int64_t id = -1;
      std::string name;
      device.for_each_member([&](std::string_view k, JsonSpan& v) {
        if (k == "id") id = v.integer().value_or(-1);
        else if (k == "name" && v.peek() == '"') name = v.string();
        return true;
      });
      if (id >= 0 && !name.empty()) info.device_names[id] = name;
      return true;
    });
  };
  h.on_element = [&](JsonSpan& e) {
    // Called again for an event that straddled the read window: nothing is kept before the end.
    if (e.peek() != '{') {  // no profiler writes one: counted, and said by the caller
      e.skip();
      ++info.events, ++info.not_objects;
      return;
    }
    ev.ph = 0;
    ev.kind = EventKind::other;
    ev.name.clear();
    ev.ts = ev.dur = 0;
    ev.device = ev.stream = -1;
    bool cat_seen = false, name_pending = false;
    NumberField ts, dur;
    IdField device, stream;
    // Kineto also writes a GPU activity's device as its pid and its stream as its tid: where args
    // leave them out, those place it (whole numbers only: a name is no timeline of ours).
    std::optional<int64_t> pid, tid;
    // A key the decomposition reads, given twice in one event: which value is meant is not known
    // (a parser would keep the last without a word).
    unsigned seen = 0;
    const auto once = [&](std::string_view k, unsigned bit) {
      if (seen & bit) {
        throw WorkError(fmt::format("{}: traceEvents[{}]: the key \"{}\" is given twice in one event: which value is "
                                    "meant is not known", info.path, info.events, k));
      }
      seen |= bit;
    };
    // Before its "cat" any event may be one; after it, only a GPU activity's fields are read.
    const auto may_be_activity = [&] {
      return !cat_seen || ev.kind == EventKind::kernel || ev.kind == EventKind::memcpy || ev.kind == EventKind::memset;
    };
    const auto member = [&](std::string_view k, JsonSpan& v) {
      if (k == "ph") {
        once(k, 1u << 0);
        const std::string_view ph = v.string_view(scratch);
        ev.ph = ph.empty() ? 0 : ph[0];
      } else if (k == "cat") {
        once(k, 1u << 1);
        ev.kind = kind_of(v.string_view(scratch));
        cat_seen = true;
        if (name_pending && ev.kind != EventKind::other) ev.name.swap(pending_name);
      } else if (k == "name") {
        once(k, 1u << 2);
        // Names are long (templated kernels): read only for the kinds that use them.
        if (!cat_seen) {
          v.string_into(pending_name);
          name_pending = true;
        } else if (ev.kind != EventKind::other) {
          v.string_into(ev.name);
        }
      } else if (k == "pid" || k == "tid") {  // which timeline; two would mean two events
        once(k, k == "pid" ? 1u << 6 : 1u << 7);
        const char c = v.peek();
        if (c >= '0' && c <= '9' && may_be_activity()) (k == "pid" ? pid : tid) = v.integer();
      } else if (k == "ts") {
        once(k, 1u << 3), ts.read(v);
      } else if (k == "dur") {
        once(k, 1u << 4), dur.read(v);
      } else if (k == "args" && (once(k, 1u << 5), v.peek() == '{') && may_be_activity()) {
        v.for_each_member([&](std::string_view ak, JsonSpan& av) {
          if (ak == "device") once("args.device", 1u << 8), device.read(av);
          else if (ak == "stream") once("args.stream", 1u << 9), stream.read(av);
          return true;
        });
      }
    };
    e.for_each_member([&](std::string_view k, JsonSpan& v) {
      try {
        member(k, v);
      } catch (const JsonSpan::BadValue& bad) {  // which field: the array's reader adds which event
        throw JsonSpan::BadValue(bad.what(), fmt::format("\"{}\": {}", k, bad.what_alone));
      }
      return true;
    });
    const bool gpu_activity =
        ev.kind == EventKind::kernel || ev.kind == EventKind::memcpy || ev.kind == EventKind::memset;
    if (gpu_activity) {
      check_activity(info, ev, device, stream);
      const bool pid_a_device = pid && *pid <= kMaxDeviceId;
      ev.device = device.seen ? *device.value : pid_a_device ? *pid : -1;
      ev.stream = stream.seen ? *stream.value : tid ? *tid : -1;
    }
    const bool annotation = ev.kind == EventKind::cpu_annotation || ev.kind == EventKind::gpu_annotation;
    if (annotation && ev.ph != 'X') ++info.annotations_not_complete;
    if (ev.ph == 'X' && ev.kind != EventKind::other) {
      check_times(info, ev, ts, dur);
      ev.ts = *ts.value;
      ev.dur = *dur.value;
      ++info.events;
      each(ev);
      return;
    }
    ++info.events;
  };
  stream_document(source, "traceEvents", h);
  info.bytes = source.bytes_read();
  return info;
}

}  // namespace ub::trace
