// CUPTI activity tracing; see activity_trace.hpp.
#include "gpu/activity_trace.hpp"

#include <cupti.h>
#include <cxxabi.h>

#include <atomic>
#include <memory>
#include <cstdlib>
#include <mutex>
#include <unordered_map>

#include "gpu/check.hpp"

namespace ub::gpu {

namespace {

std::string cupti_message(CUptiResult r) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  return s ? s : "unknown CUPTI error";
}

#define UB_CUPTI_CHECK(expr) UB_CHECK_GEN(expr, CUPTI_SUCCESS, cupti_message, "CUPTI")

constexpr size_t kBufferBytes = 8u << 20;
constexpr size_t kAlign = 8;
constexpr CUpti_ExternalCorrelationKind kOurs = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
// Runtime and driver API records are what external correlation records hang on; their own records
// are read and thrown away.
constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                         CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                                         CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER};

// What the buffer callbacks (called on CUPTI's threads) fill, under `mutex`.
struct Gathered {
  std::mutex mutex;
  ActivityLog log;
  std::unordered_map<std::string, uint32_t> name_index;
  std::unordered_map<const char*, uint32_t> raw_index;  // each name is demangled once
  std::unordered_map<uint32_t, uint64_t> operation_of;  // API correlation id -> our operation id
  std::vector<uint32_t> correlation;                     // per record: its API call's correlation id
};

std::unique_ptr<Gathered> g_live;  // the one live trace's; guarded by g_live_mutex
std::mutex g_live_mutex;
std::atomic<bool> g_callbacks_registered{false};

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kAlign, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

// Kernel names as the tools people read show them (demangled, as Kineto writes them), so that the
// kernel-class rules and a reader of the exported trace see the same names as in a torch trace.
std::string demangled(const char* name) {
  if (!name) return "(unnamed kernel)";
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && d ? std::string(d.get()) : std::string(name);
}

uint32_t intern(Gathered& g, const char* name) {
  if (auto it = g.raw_index.find(name); it != g.raw_index.end()) return it->second;
  const std::string s = demangled(name);
  auto [it, added] = g.name_index.try_emplace(s, static_cast<uint32_t>(g.log.names.size()));
  if (added) g.log.names.push_back(s);
  if (name) g.raw_index.emplace(name, it->second);  // CUPTI keeps a kernel's name at one address
  return it->second;
}

// A copy's or a fill's record (the two have the same fields); returns its API call's correlation id.
template <class Record>
uint32_t copy_or_fill(GpuActivityRecord& r, const Record* m, GpuActivityRecord::Kind kind) {
  r.kind = kind;
  r.start = m->start, r.end = m->end, r.device = m->deviceId, r.stream = m->streamId, r.bytes = m->bytes;
  return m->correlationId;
}

void add(Gathered& g, const CUpti_Activity* a) {
  GpuActivityRecord r;
  uint32_t correlation = 0;
  switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(a);
      r.kind = GpuActivityRecord::Kind::kernel;
      r.start = k->start, r.end = k->end, r.device = k->deviceId, r.stream = k->streamId;
      r.name = intern(g, k->name);
      correlation = k->correlationId;
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      correlation = copy_or_fill(r, reinterpret_cast<const CUpti_ActivityMemcpy6*>(a), GpuActivityRecord::Kind::memcpy);
      break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      correlation = copy_or_fill(r, reinterpret_cast<const CUpti_ActivityMemset4*>(a), GpuActivityRecord::Kind::memset);
      break;
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(a);
      if (e->externalKind == kOurs) g.operation_of[e->correlationId] = e->externalId;
      return;
    }
    default: return;  // API records
  }
  g.log.records.push_back(r);
  g.correlation.push_back(correlation);
}

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t, size_t valid) {
  const std::unique_ptr<uint8_t, void (*)(void*)> owned(buffer, &std::free);  // CUPTI hands it back to us
  {
    std::lock_guard live(g_live_mutex);
    if (g_live) {
      std::lock_guard lock(g_live->mutex);
      CUpti_Activity* a = nullptr;
      while (cuptiActivityGetNextRecord(buffer, valid, &a) == CUPTI_SUCCESS) add(*g_live, a);
      size_t dropped = 0;
      if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS) g_live->log.dropped += dropped;
    }
  }
}

// The process-wide record of the one live trace, from construction to destruction.
class LiveRecord {
 public:
  LiveRecord() {
    std::lock_guard live(g_live_mutex);
    if (g_live) throw WorkError("CUPTI activity tracing is already on in this process (one trace at a time)");
    g_live = std::make_unique<Gathered>();
  }
  ~LiveRecord() {
    std::lock_guard live(g_live_mutex);
    g_live.reset();
  }
  LiveRecord(const LiveRecord&) = delete;
  LiveRecord& operator=(const LiveRecord&) = delete;
};

// One kind of activity record, on from construction to destruction.
class EnabledKind {
 public:
  explicit EnabledKind(CUpti_ActivityKind k) : k_(k) { UB_CUPTI_CHECK(cuptiActivityEnable(k)); }
  ~EnabledKind() { cuptiActivityDisable(k_); }
  EnabledKind(const EnabledKind&) = delete;
  EnabledKind& operator=(const EnabledKind&) = delete;

 private:
  CUpti_ActivityKind k_;
};

}  // namespace

// What is on while the trace lives, in the order it is undone: the kinds disabled, what CUPTI
// still holds flushed into the record, then the record dropped. A constructor that throws part way
// undoes what it did.
struct ActivityTrace::State {
  LiveRecord live;
  std::vector<std::unique_ptr<EnabledKind>> kinds;

  State() {
    if (!g_callbacks_registered.exchange(true)) {
      UB_CUPTI_CHECK(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
    }
    for (CUpti_ActivityKind k : kKinds) kinds.push_back(std::make_unique<EnabledKind>(k));
  }
  ~State() {
    kinds.clear();
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  }
};

ActivityTrace::ActivityTrace() : state_(std::make_unique<State>()) {}

ActivityTrace::~ActivityTrace() = default;

uint64_t ActivityTrace::now() {
  uint64_t t = 0;
  UB_CUPTI_CHECK(cuptiGetTimestamp(&t));
  return t;
}

void ActivityTrace::push(uint64_t id) { UB_CUPTI_CHECK(cuptiActivityPushExternalCorrelationId(kOurs, id)); }

void ActivityTrace::pop() {
  uint64_t id = 0;
  UB_CUPTI_CHECK(cuptiActivityPopExternalCorrelationId(kOurs, &id));
}

ActivityLog ActivityTrace::collect() {
  UB_CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  std::lock_guard live(g_live_mutex);
  Gathered& g = *g_live;
  std::lock_guard lock(g.mutex);
  // External correlation records may arrive after the kernels they name: resolved here, at the end.
  for (size_t i = 0; i < g.log.records.size(); ++i) {
    if (auto it = g.operation_of.find(g.correlation[i]); it != g.operation_of.end()) {
      g.log.records[i].operation = it->second;
    }
  }
  ActivityLog out;
  out.records = std::move(g.log.records);
  out.names = g.log.names;  // the index stays valid for later records
  out.dropped = g.log.dropped;
  g.log.records.clear();
  g.correlation.clear();
  g.operation_of.clear();
  g.log.dropped = 0;
  return out;
}

}  // namespace ub::gpu
