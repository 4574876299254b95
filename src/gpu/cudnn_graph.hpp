// A small RAII layer over cuDNN's backend (graph) API, enough to build fused graphs of matmul,
// pointwise, reduction and reshape operations, let cuDNN's heuristics pick an engine, and run the
// resulting plan. The cuDNN frontend headers are not a dependency: this is the part of them we
// need, in our own words (descriptor owner, typed attribute setters, a graph builder that hands
// out tensor ids, a plan that executes with a pointer per id).
//
// Error checks follow gpu/check.hpp: a failed call throws WorkError with cuDNN's status name and
// its last error message.
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpu/check.hpp"

namespace ub::gpu {

std::string cudnn_status_text(cudnnStatus_t s);

}  // namespace ub::gpu

#define UB_CUDNN_CHECK(expr) \
  UB_CHECK_GEN(expr, CUDNN_STATUS_SUCCESS, ::ub::gpu::cudnn_status_text, "cuDNN")

namespace ub::gpu {

class CudnnHandle {
 public:
  CudnnHandle() { UB_CUDNN_CHECK(cudnnCreate(&h_)); }
  ~CudnnHandle() {
    if (h_) cudnnDestroy(h_);
  }
  CudnnHandle(const CudnnHandle&) = delete;
  CudnnHandle& operator=(const CudnnHandle&) = delete;
  cudnnHandle_t get() const { return h_; }
  void set_stream(cudaStream_t s) { UB_CUDNN_CHECK(cudnnSetStream(h_, s)); }

 private:
  cudnnHandle_t h_ = nullptr;
};

// One backend descriptor, destroyed with its owner.
class BackendDescriptor {
 public:
  explicit BackendDescriptor(cudnnBackendDescriptorType_t type);
  ~BackendDescriptor();
  BackendDescriptor(const BackendDescriptor&) = delete;
  BackendDescriptor& operator=(const BackendDescriptor&) = delete;
  BackendDescriptor(BackendDescriptor&& o) noexcept;
  BackendDescriptor& operator=(BackendDescriptor&& o) noexcept;

  cudnnBackendDescriptor_t get() const { return d_; }
  BackendDescriptor& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                         int64_t count, const void* values);
  BackendDescriptor& set_i64(cudnnBackendAttributeName_t name, int64_t v);
  BackendDescriptor& set_i64s(cudnnBackendAttributeName_t name, const std::vector<int64_t>& v);
  BackendDescriptor& set_dtype(cudnnBackendAttributeName_t name, cudnnDataType_t v);
  BackendDescriptor& set_bool(cudnnBackendAttributeName_t name, bool v);
  BackendDescriptor& set_float(cudnnBackendAttributeName_t name, float v);
  BackendDescriptor& set_desc(cudnnBackendAttributeName_t name, const BackendDescriptor& v);
  void finalize();
  // Finalize without throwing: the status (engine configurations may be refused).
  cudnnStatus_t try_finalize();

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

// A tensor in a graph under construction: its id, shape and type.
struct GraphTensor {
  int64_t uid = 0;
  std::vector<int64_t> dims, strides;
  cudnnDataType_t dtype = CUDNN_DATA_FLOAT;
  bool is_virtual = false;
};

// Per-batch sizes of a matmul taken from int32 tensors [batch, 1, 1, 1] at run time (variable
// sequence lengths): rows (m), columns (n) and the reduced dimension (k), each optional; with
// `zero_padding` the rows and columns beyond them read as zeros.
struct MatmulSizes {
  const GraphTensor* m = nullptr;
  const GraphTensor* n = nullptr;
  const GraphTensor* k = nullptr;
  bool zero_padding = false;
};

// Row-major strides of `dims` (the last dimension contiguous).
std::vector<int64_t> packed_strides(const std::vector<int64_t>& dims);

class GraphPlan;

// Builds an operation graph; tensors get ids in order of creation. Non-virtual tensors need a
// device pointer at execution; by-value scalars carry their value with the plan.
class GraphBuilder {
 public:
  explicit GraphBuilder(cudnnHandle_t handle) : handle_(handle) {}

  // With `ragged_offset` (int32 [batch + 1, 1, 1, 1], in elements) each batch entry starts at its
  // offset instead of at a fixed batch stride (packed sequences of different lengths).
  GraphTensor tensor(std::vector<int64_t> dims, std::vector<int64_t> strides, cudnnDataType_t dtype,
                     const GraphTensor* ragged_offset = nullptr);
  GraphTensor virtual_tensor(std::vector<int64_t> dims, std::vector<int64_t> strides,
                             cudnnDataType_t dtype = CUDNN_DATA_FLOAT, const GraphTensor* ragged_offset = nullptr);
  GraphTensor scalar(float value);  // passed by value, float
  GraphTensor scalar(int32_t value);  // passed by value, int32 (its four bytes kept as the float's)

  void matmul(const GraphTensor& a, const GraphTensor& b, const GraphTensor& c, const MatmulSizes& sizes = {});
  // y = mode(x[, b][, t]) computed in `math`; GEN_INDEX takes an axis.
  void pointwise(cudnnPointwiseMode_t mode, const GraphTensor& x, const GraphTensor* b,
                 const GraphTensor* t, const GraphTensor& y, cudnnDataType_t math = CUDNN_DATA_FLOAT,
                 int64_t axis = -1);
  void reduction(cudnnReduceTensorOp_t op, const GraphTensor& x, const GraphTensor& y);
  void reshape(const GraphTensor& x, const GraphTensor& y);

  // Finalizes the graph and the first engine configuration of cuDNN's heuristics (mode A, then
  // the fallback list) that builds. Throws WorkError naming `what` when none does.
  GraphPlan build(const std::string& what);
  // The same, but up to `max_plans` configurations that build, for the caller to time: the
  // heuristics' in their order (mode A; the fallback list only when mode A gave none), then the
  // first one's engine with one knob at a time moved to its other values (tile sizes, stages,
  // kernel variants: whatever the engine exposes).
  std::vector<GraphPlan> build_candidates(const std::string& what, int max_plans);

 private:
  GraphTensor add_tensor(std::vector<int64_t> dims, std::vector<int64_t> strides, cudnnDataType_t dtype,
                         bool is_virtual, const GraphTensor* ragged_offset);

  cudnnHandle_t handle_;
  int64_t next_uid_ = 1;
  std::map<int64_t, BackendDescriptor> tensors_;
  std::vector<BackendDescriptor> ops_;      // in creation (topological) order
  std::vector<BackendDescriptor> op_descs_; // the descriptors the operations refer to
  std::map<int64_t, float> scalars_;
};

// A finalized execution plan: run it with one device pointer per non-virtual tensor id.
class GraphPlan {
 public:
  GraphPlan(std::shared_ptr<std::vector<BackendDescriptor>> parts, BackendDescriptor plan, int64_t workspace,
            std::map<int64_t, float> scalars, std::string engine);
  int64_t workspace_bytes() const { return workspace_; }
  const std::string& engine() const { return engine_; }
  void execute(cudnnHandle_t handle, const std::map<int64_t, void*>& pointers, void* workspace) const;

 private:
  // tensors, operations, graph and configurations the plan was made from (shared by candidates)
  std::shared_ptr<std::vector<BackendDescriptor>> parts_;
  BackendDescriptor plan_;
  int64_t workspace_ = 0;
  std::unique_ptr<std::map<int64_t, float>> scalars_;  // stable addresses for the variant pack
  std::string engine_;
};

}  // namespace ub::gpu
