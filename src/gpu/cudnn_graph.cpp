// cuDNN backend graph layer; see cudnn_graph.hpp.
#include "gpu/cudnn_graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <optional>
#include <utility>

#include "gpu/fingerprint.hpp"

namespace ub::gpu {

std::string cudnn_status_text(cudnnStatus_t s) {
  char last[512] = {0};
  cudnnGetLastErrorString(last, sizeof last);
  std::string text = cudnnGetErrorString(s);
  if (last[0]) text += fmt::format(" ({})", last);
  return text;
}

std::vector<int64_t> packed_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

// ---- BackendDescriptor ----

BackendDescriptor::BackendDescriptor(cudnnBackendDescriptorType_t type) {
  UB_CUDNN_CHECK(cudnnBackendCreateDescriptor(type, &d_));
}

BackendDescriptor::~BackendDescriptor() {
  if (d_) cudnnBackendDestroyDescriptor(d_);
}

BackendDescriptor::BackendDescriptor(BackendDescriptor&& o) noexcept : d_(std::exchange(o.d_, nullptr)) {}

BackendDescriptor& BackendDescriptor::operator=(BackendDescriptor&& o) noexcept {
  if (this != &o) {
    if (d_) cudnnBackendDestroyDescriptor(d_);
    d_ = std::exchange(o.d_, nullptr);
  }
  return *this;
}

BackendDescriptor& BackendDescriptor::set(cudnnBackendAttributeName_t name,
                                          cudnnBackendAttributeType_t type, int64_t count,
                                          const void* values) {
  UB_CUDNN_CHECK(cudnnBackendSetAttribute(d_, name, type, count, values));
  return *this;
}

BackendDescriptor& BackendDescriptor::set_i64(cudnnBackendAttributeName_t name, int64_t v) {
  return set(name, CUDNN_TYPE_INT64, 1, &v);
}

BackendDescriptor& BackendDescriptor::set_i64s(cudnnBackendAttributeName_t name,
                                               const std::vector<int64_t>& v) {
  return set(name, CUDNN_TYPE_INT64, static_cast<int64_t>(v.size()), v.data());
}

BackendDescriptor& BackendDescriptor::set_dtype(cudnnBackendAttributeName_t name, cudnnDataType_t v) {
  return set(name, CUDNN_TYPE_DATA_TYPE, 1, &v);
}

BackendDescriptor& BackendDescriptor::set_bool(cudnnBackendAttributeName_t name, bool v) {
  return set(name, CUDNN_TYPE_BOOLEAN, 1, &v);
}

BackendDescriptor& BackendDescriptor::set_float(cudnnBackendAttributeName_t name, float v) {
  return set(name, CUDNN_TYPE_FLOAT, 1, &v);
}

BackendDescriptor& BackendDescriptor::set_desc(cudnnBackendAttributeName_t name,
                                               const BackendDescriptor& v) {
  cudnnBackendDescriptor_t raw = v.get();
  return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw);
}

void BackendDescriptor::finalize() { UB_CUDNN_CHECK(cudnnBackendFinalize(d_)); }

cudnnStatus_t BackendDescriptor::try_finalize() { return cudnnBackendFinalize(d_); }

// ---- GraphBuilder ----

namespace {

BackendDescriptor make_tensor(const GraphTensor& t, bool by_value, const BackendDescriptor* ragged_offset) {
  BackendDescriptor d(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  d.set_dtype(CUDNN_ATTR_TENSOR_DATA_TYPE, t.dtype)
      .set_i64s(CUDNN_ATTR_TENSOR_DIMENSIONS, t.dims)
      .set_i64s(CUDNN_ATTR_TENSOR_STRIDES, t.strides)
      .set_i64(CUDNN_ATTR_TENSOR_UNIQUE_ID, t.uid)
      .set_i64(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 16);
  if (t.is_virtual) d.set_bool(CUDNN_ATTR_TENSOR_IS_VIRTUAL, true);
  if (by_value) d.set_bool(CUDNN_ATTR_TENSOR_IS_BY_VALUE, true);
  if (ragged_offset) d.set_desc(CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC, *ragged_offset);
  d.finalize();
  return d;
}

}  // namespace

GraphTensor GraphBuilder::add_tensor(std::vector<int64_t> dims, std::vector<int64_t> strides,
                                     cudnnDataType_t dtype, bool is_virtual, const GraphTensor* ragged_offset) {
  GraphTensor t{next_uid_++, std::move(dims), std::move(strides), dtype, is_virtual};
  tensors_.emplace(t.uid, make_tensor(t, false, ragged_offset ? &tensors_.at(ragged_offset->uid) : nullptr));
  return t;
}

GraphTensor GraphBuilder::tensor(std::vector<int64_t> dims, std::vector<int64_t> strides,
                                 cudnnDataType_t dtype, const GraphTensor* ragged_offset) {
  return add_tensor(std::move(dims), std::move(strides), dtype, false, ragged_offset);
}

GraphTensor GraphBuilder::virtual_tensor(std::vector<int64_t> dims, std::vector<int64_t> strides,
                                         cudnnDataType_t dtype, const GraphTensor* ragged_offset) {
  return add_tensor(std::move(dims), std::move(strides), dtype, true, ragged_offset);
}

GraphTensor GraphBuilder::scalar(float value) {
  GraphTensor t{next_uid_++, {1, 1, 1, 1}, {1, 1, 1, 1}, CUDNN_DATA_FLOAT, false};
  tensors_.emplace(t.uid, make_tensor(t, true, nullptr));
  scalars_[t.uid] = value;
  return t;
}

GraphTensor GraphBuilder::scalar(int32_t value) {
  GraphTensor t{next_uid_++, {1, 1, 1, 1}, {1, 1, 1, 1}, CUDNN_DATA_INT32, false};
  tensors_.emplace(t.uid, make_tensor(t, true, nullptr));
  scalars_[t.uid] = std::bit_cast<float>(value);  // the variant pack points cuDNN at these four bytes
  return t;
}

void GraphBuilder::matmul(const GraphTensor& a, const GraphTensor& b, const GraphTensor& c,
                          const MatmulSizes& sizes) {
  BackendDescriptor desc(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
  desc.set_dtype(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_DATA_FLOAT);
  const double zero = 0.0;
  if (sizes.zero_padding) desc.set(CUDNN_ATTR_MATMUL_PADDING_VALUE, CUDNN_TYPE_DOUBLE, 1, &zero);
  desc.finalize();
  BackendDescriptor op(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
  op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_ADESC, tensors_.at(a.uid))
      .set_desc(CUDNN_ATTR_OPERATION_MATMUL_BDESC, tensors_.at(b.uid))
      .set_desc(CUDNN_ATTR_OPERATION_MATMUL_CDESC, tensors_.at(c.uid))
      .set_desc(CUDNN_ATTR_OPERATION_MATMUL_DESC, desc);
  if (sizes.m) op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC, tensors_.at(sizes.m->uid));
  if (sizes.n) op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC, tensors_.at(sizes.n->uid));
  if (sizes.k) op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC, tensors_.at(sizes.k->uid));
  op.finalize();
  op_descs_.push_back(std::move(desc));
  ops_.push_back(std::move(op));
}

void GraphBuilder::pointwise(cudnnPointwiseMode_t mode, const GraphTensor& x, const GraphTensor* b,
                             const GraphTensor* t, const GraphTensor& y, cudnnDataType_t math,
                             int64_t axis) {
  BackendDescriptor desc(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  desc.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode)
      .set_dtype(CUDNN_ATTR_POINTWISE_MATH_PREC, math);
  if (axis >= 0) desc.set_i64(CUDNN_ATTR_POINTWISE_AXIS, axis);
  desc.finalize();
  BackendDescriptor op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, desc)
      .set_desc(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, tensors_.at(x.uid))
      .set_desc(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, tensors_.at(y.uid));
  if (b) op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, tensors_.at(b->uid));
  if (t) op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, tensors_.at(t->uid));
  op.set_float(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, 1.0f)
      .set_float(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, 1.0f)
      .finalize();
  op_descs_.push_back(std::move(desc));
  ops_.push_back(std::move(op));
}

void GraphBuilder::reduction(cudnnReduceTensorOp_t reduce, const GraphTensor& x, const GraphTensor& y) {
  BackendDescriptor desc(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
  desc.set_dtype(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_DATA_FLOAT)
      .set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &reduce)
      .finalize();
  BackendDescriptor op(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
  op.set_desc(CUDNN_ATTR_OPERATION_REDUCTION_DESC, desc)
      .set_desc(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, tensors_.at(x.uid))
      .set_desc(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, tensors_.at(y.uid))
      .finalize();
  op_descs_.push_back(std::move(desc));
  ops_.push_back(std::move(op));
}

void GraphBuilder::reshape(const GraphTensor& x, const GraphTensor& y) {
  BackendDescriptor op(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
  op.set_desc(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, tensors_.at(x.uid))
      .set_desc(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, tensors_.at(y.uid))
      .finalize();
  ops_.push_back(std::move(op));
}

namespace {

// Descriptors of `type` that attribute `name` of `from` holds (up to `max`).
std::vector<BackendDescriptor> get_descriptors(cudnnBackendDescriptor_t from, cudnnBackendAttributeName_t name,
                                               cudnnBackendDescriptorType_t type, int64_t max) {
  std::vector<BackendDescriptor> out;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < max; ++i) {
    out.emplace_back(type);
    raw.push_back(out.back().get());
  }
  int64_t got = 0;
  if (cudnnBackendGetAttribute(from, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, max, &got, raw.data()) !=
      CUDNN_STATUS_SUCCESS) {
    return {};
  }
  out.erase(out.begin() + std::min(got, max), out.end());
  return out;
}

// The engine configurations cuDNN's heuristics propose for `graph` in `mode`.
std::vector<BackendDescriptor> heuristic_configs(const BackendDescriptor& graph,
                                                 cudnnBackendHeurMode_t mode) {
  BackendDescriptor heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  heur.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph)
      .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
  if (heur.try_finalize() != CUDNN_STATUS_SUCCESS) return {};
  int64_t count = 0;
  if (cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                               0, &count, nullptr) != CUDNN_STATUS_SUCCESS ||
      count <= 0) {
    return {};
  }
  return get_descriptors(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, count);
}

// An execution plan of `config` and its workspace bytes; the status when cuDNN refuses it.
struct PlanOrRefusal {
  std::optional<BackendDescriptor> plan;
  int64_t workspace = 0;
  cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
};

PlanOrRefusal make_plan(cudnnHandle_t handle, const BackendDescriptor& config) {
  PlanOrRefusal r;
  BackendDescriptor plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
  plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle)
      .set_desc(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config);
  r.status = plan.try_finalize();
  if (r.status != CUDNN_STATUS_SUCCESS) return r;
  int64_t n = 0;
  UB_CUDNN_CHECK(cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64,
                                          1, &n, &r.workspace));
  r.plan = std::move(plan);
  return r;
}

int64_t get_i64(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name) {
  int64_t v = -1, n = 0;
  return cudnnBackendGetAttribute(d, name, CUDNN_TYPE_INT64, 1, &n, &v) == CUDNN_STATUS_SUCCESS ? v : -1;
}

cudnnBackendKnobType_t get_knob_type(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name) {
  cudnnBackendKnobType_t t = CUDNN_KNOB_TYPE_COUNTS;
  int64_t n = 0;
  cudnnBackendGetAttribute(d, name, CUDNN_TYPE_KNOB_TYPE, 1, &n, &t);
  return t;
}

// One knob of an engine configuration and its value.
struct KnobSetting {
  cudnnBackendKnobType_t type;
  int64_t value;
};

// What the heuristics chose, to vary: the engine's global index and its knob settings.
struct EngineChoice {
  int64_t engine = -1;
  std::vector<KnobSetting> knobs;
};

EngineChoice engine_choice(const BackendDescriptor& config) {
  EngineChoice c;
  auto engines = get_descriptors(config.get(), CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_BACKEND_ENGINE_DESCRIPTOR, 1);
  if (engines.empty()) return c;
  c.engine = get_i64(engines[0].get(), CUDNN_ATTR_ENGINE_GLOBAL_INDEX);
  for (const auto& k : get_descriptors(config.get(), CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                                       CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, CUDNN_KNOB_TYPE_COUNTS)) {
    c.knobs.push_back({get_knob_type(k.get(), CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE),
                       get_i64(k.get(), CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE)});
  }
  return c;
}

// "engine 8" (what the records name).
std::string engine_name(const EngineChoice& choice) {
  return choice.engine >= 0 ? fmt::format("engine {}", choice.engine) : "?";
}

// Engine `index` on `graph`; nothing when cuDNN refuses it.
std::optional<BackendDescriptor> make_engine(const BackendDescriptor& graph, int64_t index) {
  BackendDescriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  engine.set_desc(CUDNN_ATTR_ENGINE_OPERATION_GRAPH, graph).set_i64(CUDNN_ATTR_ENGINE_GLOBAL_INDEX, index);
  if (engine.try_finalize() != CUDNN_STATUS_SUCCESS) return std::nullopt;
  return engine;
}

// A configuration of engine `index` on `graph` with `knobs`; its descriptors go to `keep` (they
// must outlive the plan). Nothing when cuDNN refuses it.
std::optional<BackendDescriptor> make_config(const BackendDescriptor& graph, int64_t index,
                                             const std::vector<KnobSetting>& knobs,
                                             std::vector<BackendDescriptor>& keep) {
  std::optional<BackendDescriptor> engine = make_engine(graph, index);
  if (!engine) return std::nullopt;
  std::vector<BackendDescriptor> choices;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (const KnobSetting& k : knobs) {
    choices.emplace_back(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
    choices.back()
        .set(CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &k.type)
        .set_i64(CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, k.value);
    if (choices.back().try_finalize() != CUDNN_STATUS_SUCCESS) return std::nullopt;
    raw.push_back(choices.back().get());
  }
  BackendDescriptor config(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
  config.set_desc(CUDNN_ATTR_ENGINECFG_ENGINE, *engine);
  if (!raw.empty()) {
    config.set(CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
               static_cast<int64_t>(raw.size()), raw.data());
  }
  if (config.try_finalize() != CUDNN_STATUS_SUCCESS) return std::nullopt;
  keep.push_back(std::move(*engine));
  for (auto& c : choices) keep.push_back(std::move(c));
  return config;
}

// A configuration's knobs with one of them moved.
struct KnobVariant {
  std::vector<KnobSetting> knobs;
  KnobSetting moved;
};

// The heuristics' choice with one knob moved to each other value its range allows, knob by knob
// (ranges of more than 32 values are left alone), up to `max` variants.
std::vector<KnobVariant> knob_variants(const BackendDescriptor& graph, const EngineChoice& choice, size_t max) {
  std::vector<KnobVariant> out;
  const std::optional<BackendDescriptor> engine = make_engine(graph, choice.engine);
  if (!engine) return out;
  for (const auto& info : get_descriptors(engine->get(), CUDNN_ATTR_ENGINE_KNOB_INFO,
                                          CUDNN_BACKEND_KNOB_INFO_DESCRIPTOR, CUDNN_KNOB_TYPE_COUNTS)) {
    const cudnnBackendKnobType_t type = get_knob_type(info.get(), CUDNN_ATTR_KNOB_INFO_TYPE);
    const int64_t lo = get_i64(info.get(), CUDNN_ATTR_KNOB_INFO_MINIMUM_VALUE);
    const int64_t hi = get_i64(info.get(), CUDNN_ATTR_KNOB_INFO_MAXIMUM_VALUE);
    const int64_t step = std::max<int64_t>(1, get_i64(info.get(), CUDNN_ATTR_KNOB_INFO_STRIDE));
    if (hi < lo || (hi - lo) / step > 32) continue;
    for (int64_t v = lo; v <= hi && out.size() < max; v += step) {
      std::vector<KnobSetting> knobs = choice.knobs;
      auto it = std::find_if(knobs.begin(), knobs.end(), [&](const KnobSetting& k) { return k.type == type; });
      if (it == knobs.end()) {
        knobs.push_back({type, v});
      } else if (it->value == v) {
        continue;  // the heuristics' own choice
      } else {
        it->value = v;
      }
      out.push_back({std::move(knobs), {type, v}});
    }
  }
  return out;
}

}  // namespace

GraphPlan GraphBuilder::build(const std::string& what) { return std::move(build_candidates(what, 1).front()); }

std::vector<GraphPlan> GraphBuilder::build_candidates(const std::string& what, int max_plans) {
  BackendDescriptor graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  std::vector<cudnnBackendDescriptor_t> raw;
  for (const auto& op : ops_) raw.push_back(op.get());
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<int64_t>(raw.size()),
            raw.data());
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle_);
  const cudnnStatus_t st = graph.try_finalize();
  if (st != CUDNN_STATUS_SUCCESS) {
    throw WorkError(fmt::format("cuDNN refused the {} graph: {}", what, cudnn_status_text(st)));
  }
  // The tensors, operations and graph every plan was made from, kept alive with the plans.
  auto parts = std::make_shared<std::vector<BackendDescriptor>>();
  std::vector<GraphPlan> plans;
  EngineChoice first;  // the first configuration that built, to vary its knobs
  std::string first_name;
  std::string refusals;
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    std::vector<BackendDescriptor> configs = heuristic_configs(graph, mode);
    int rank = 0;
    for (BackendDescriptor& config : configs) {
      ++rank;
      if (static_cast<int>(plans.size()) >= max_plans) break;
      PlanOrRefusal made = make_plan(handle_, config);
      if (!made.plan) {
        if (refusals.empty()) refusals = cudnn_status_text(made.status);
        continue;
      }
      EngineChoice choice = engine_choice(config);
      // "engine 6 (heuristics A: 1 of 3)": which of the configurations offered it is.
      const std::string engine =
          fmt::format("{} (heuristics {}: {} of {})", engine_name(choice),
                      mode == CUDNN_HEUR_MODE_A ? "A" : "fallback", rank, configs.size());
      if (plans.empty()) {
        first = std::move(choice);
        first_name = engine;
      }
      parts->push_back(std::move(config));
      plans.emplace_back(parts, std::move(*made.plan), made.workspace, scalars_, engine);
    }
    if (!plans.empty()) break;  // the fallback list only when mode A gave nothing that builds
  }
  // Room left: the first choice's engine with its knobs moved one at a time.
  if (first.engine >= 0 && static_cast<int>(plans.size()) < max_plans) {
    for (const KnobVariant& variant : knob_variants(graph, first, static_cast<size_t>(max_plans) * 4)) {
      if (static_cast<int>(plans.size()) >= max_plans) break;
      std::optional<BackendDescriptor> config = make_config(graph, first.engine, variant.knobs, *parts);
      if (!config) continue;
      PlanOrRefusal made = make_plan(handle_, *config);
      if (!made.plan) continue;
      parts->push_back(std::move(*config));
      plans.emplace_back(parts, std::move(*made.plan), made.workspace, scalars_,
                         fmt::format("{}; knob {} = {}", first_name, static_cast<int>(variant.moved.type),
                                     variant.moved.value));
    }
  }
  if (plans.empty()) {
    throw WorkError(fmt::format("cuDNN {} has no engine for the {} graph{}", cudnn_version().version, what,
                                refusals.empty() ? "" : fmt::format(" (first refusal: {})", refusals)));
  }
  for (auto& [uid, t] : tensors_) parts->push_back(std::move(t));
  for (auto& d : op_descs_) parts->push_back(std::move(d));
  for (auto& op : ops_) parts->push_back(std::move(op));
  parts->push_back(std::move(graph));
  tensors_.clear();
  op_descs_.clear();
  ops_.clear();
  return plans;
}

// ---- GraphPlan ----

GraphPlan::GraphPlan(std::shared_ptr<std::vector<BackendDescriptor>> parts, BackendDescriptor plan,
                     int64_t workspace, std::map<int64_t, float> scalars, std::string engine)
    : parts_(std::move(parts)),
      plan_(std::move(plan)),
      workspace_(workspace),
      scalars_(std::make_unique<std::map<int64_t, float>>(std::move(scalars))),
      engine_(std::move(engine)) {}

void GraphPlan::execute(cudnnHandle_t handle, const std::map<int64_t, void*>& pointers,
                        void* workspace) const {
  std::vector<int64_t> uids;
  std::vector<void*> ptrs;
  for (const auto& [uid, p] : pointers) {
    uids.push_back(uid);
    ptrs.push_back(p);
  }
  for (auto& [uid, value] : *scalars_) {
    uids.push_back(uid);
    ptrs.push_back(&value);
  }
  BackendDescriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, static_cast<int64_t>(uids.size()), uids.data())
      .set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, static_cast<int64_t>(ptrs.size()),
           ptrs.data())
      .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace)
      .finalize();
  UB_CUDNN_CHECK(cudnnBackendExecute(handle, plan_.get(), pack.get()));
}

}  // namespace ub::gpu
