// cuBLASLt owners and the algorithm query; see cublaslt.hpp.
#include "gpu/cublaslt.hpp"

#include <algorithm>

namespace ub::gpu {

namespace {

class Preference : public LtOwner<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy> {
 public:
  Preference() { UB_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(out())); }
};

}  // namespace

std::vector<cublasLtMatmulHeuristicResult_t> heuristic_algorithms(const CublasLt& lt, const MatmulProblem& p,
                                                                  size_t workspace_bytes, int count) {
  Preference pref;
  UB_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                       &workspace_bytes, sizeof workspace_bytes));
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(std::max(1, count)));
  int found = 0;
  UB_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(lt.get(), p.op.get(), p.a.get(), p.b.get(), p.c.get(), p.d.get(),
                                                 pref.get(), static_cast<int>(results.size()), results.data(), &found));
  results.resize(static_cast<size_t>(found));
  std::erase_if(results, [](const cublasLtMatmulHeuristicResult_t& r) { return r.state != CUBLAS_STATUS_SUCCESS; });
  return results;
}

}  // namespace ub::gpu
