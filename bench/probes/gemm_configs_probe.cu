// Probe: is there a cuBLASLt configuration faster than the 8 its heuristic offers for the
// training step's GEMM shapes? For each shape (the 16k step's, as LinearGemm issues them:
// column-major, bf16 in, fp32 accumulate), times (1) the heuristic's offers, (2) the heuristic
// limited to each algorithm id, (3) configurations enumerated from each offered id's capabilities
// (tile x stages x cluster shape x swizzle x custom option, kept when cublasLtMatmulAlgoCheck
// accepts them), within a time budget; then re-times the heuristic's best against the overall best
// alternately (10 rounds, medians). Standalone: nvcc -O2 -arch=sm_90 gemm_configs_probe.cu -lcublasLt
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#define CK(x) do { auto e_ = (x); if (e_ != 0) { std::printf("error %d at %s:%d\n", int(e_), __FILE__, __LINE__); std::exit(1); } } while (0)

struct Shape { const char* name; bool ta, tb; long m, n, k; bool with_c; };

__global__ void fill(__nv_bfloat16* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned h = (unsigned)(i * 2654435761u) ^ seed;
    h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
    p[i] = __float2bfloat16(((h & 0xffff) / 65536.0f - 0.5f) * 0.1f);
  }
}

struct Cfg { cublasLtMatmulAlgo_t algo; std::string what; double ms = 1e30; };

static std::string describe(const cublasLtMatmulAlgo_t& a) {
  int id = -1, tile = -1, stages = -1, cluster = -1, swz = -1, custom = -1, splitk = -1;
  size_t w;
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cluster, sizeof cluster, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swz, sizeof swz, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &custom, sizeof custom, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &w);
  char b[160];
  std::snprintf(b, sizeof b, "id %d tile %d stages %d cluster %d swizzle %d custom %d splitk %d", id, tile, stages, cluster,
                swz, custom, splitk);
  return b;
}

int main(int argc, char** argv) {
  const double budget_s = argc > 1 ? std::atof(argv[1]) : 20.0;
  const Shape shapes[] = {
      {"lm_head fwd", true, false, 128256, 16384, 4096, false},
      {"lm_head dgrad", false, false, 4096, 16384, 128256, false},
      {"lm_head wgrad", false, true, 4096, 128256, 16384, false},
      {"gate_up fwd", true, false, 28672, 16384, 4096, false},
      {"gate_up dgrad", false, false, 4096, 16384, 28672, false},
      {"gate_up wgrad", false, true, 4096, 28672, 16384, false},
      {"down dgrad", false, false, 14336, 16384, 4096, false},
      {"down wgrad", false, true, 14336, 4096, 16384, false},
      {"down fwd +C", true, false, 4096, 16384, 14336, true},
      {"o dgrad", false, false, 4096, 16384, 4096, false},
      {"o wgrad", false, true, 4096, 4096, 16384, false},
  };
  cublasLtHandle_t lt;
  CK(cublasLtCreate(&lt));
  const size_t ws_bytes = size_t(32) << 20;
  void* ws;
  CK(cudaMalloc(&ws, ws_bytes));
  size_t max_a = 0, max_b = 0, max_d = 0;
  for (const Shape& s : shapes) {
    max_a = std::max(max_a, size_t(s.m * s.k)), max_b = std::max(max_b, size_t(s.k * s.n)), max_d = std::max(max_d, size_t(s.m * s.n));
  }
  __nv_bfloat16 *A, *B, *D;
  CK(cudaMalloc(&A, max_a * 2)); CK(cudaMalloc(&B, max_b * 2)); CK(cudaMalloc(&D, max_d * 2));
  fill<<<4096, 256>>>(A, max_a, 1); fill<<<4096, 256>>>(B, max_b, 2); fill<<<4096, 256>>>(D, max_d, 3);
  CK(cudaDeviceSynchronize());
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0); cudaEventCreate(&e1);

  for (const Shape& s : shapes) {
    cublasLtMatmulDesc_t op;
    CK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t op_a = s.ta ? CUBLAS_OP_T : CUBLAS_OP_N, op_b = s.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a));
    CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b));
    cublasLtMatrixLayout_t la, lb, lc;
    CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, s.ta ? s.k : s.m, s.ta ? s.m : s.k, s.ta ? s.k : s.m));
    CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, s.tb ? s.n : s.k, s.tb ? s.k : s.n, s.tb ? s.n : s.k));
    CK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, s.m, s.n, s.m));
    const float alpha = 1, beta = s.with_c ? 1 : 0;
    auto run = [&](const cublasLtMatmulAlgo_t& a) {
      return cublasLtMatmul(lt, op, &alpha, A, la, B, lb, &beta, D, lc, D, lc, &a, ws, ws_bytes, 0);
    };
    auto time_once = [&](const cublasLtMatmulAlgo_t& a) -> double {
      cudaEventRecord(e0);
      if (run(a) != CUBLAS_STATUS_SUCCESS) return 1e30;
      cudaEventRecord(e1);
      if (cudaEventSynchronize(e1) != cudaSuccess) { std::printf("kernel failure\n"); std::exit(1); }
      float ms; cudaEventElapsedTime(&ms, e0, e1);
      return ms;
    };
    auto time_cfg = [&](Cfg& c) {
      if (time_once(c.algo) >= 1e29) return;  // warm-up; refused
      c.ms = std::min(time_once(c.algo), time_once(c.algo));
    };
    std::vector<Cfg> cands;
    std::set<std::string> seen;
    auto add = [&](const cublasLtMatmulAlgo_t& a, const char* src) {
      std::string d = describe(a);
      if (seen.insert(d).second) cands.push_back({a, std::string(src) + ": " + d});
    };
    // (1) heuristic
    cublasLtMatmulPreference_t pref;
    CK(cublasLtMatmulPreferenceCreate(&pref));
    CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof ws_bytes));
    std::vector<cublasLtMatmulHeuristicResult_t> res(64);
    int found = 0;
    CK(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 64, res.data(), &found));
    std::set<int> ids;
    for (int i = 0; i < found; ++i) {
      if (res[i].state != CUBLAS_STATUS_SUCCESS) continue;
      add(res[i].algo, "heuristic");
      int id; size_t w;
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w);
      ids.insert(id);
    }
    const size_t n_heur = cands.size();
    // (2) heuristic limited to each algorithm id the library has for these types
    int all_ids[256], n_ids = 0;
    CK(cublasLtMatmulAlgoGetIds(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, 256, all_ids, &n_ids));
    for (int j = 0; j < n_ids; ++j) {
      cublasLtMatmulPreference_t p2;
      CK(cublasLtMatmulPreferenceCreate(&p2));
      CK(cublasLtMatmulPreferenceSetAttribute(p2, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof ws_bytes));
      uint32_t mode = CUBLASLT_SEARCH_LIMITED_BY_ALGO_ID;
      cublasLtMatmulPreferenceSetAttribute(p2, CUBLASLT_MATMUL_PREF_SEARCH_MODE, &mode, sizeof mode);
      std::vector<cublasLtMatmulHeuristicResult_t> r2(64);
      cublasLtMatmulAlgoInit(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, all_ids[j], &r2[0].algo);
      int f2 = 0;
      if (cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, p2, 64, r2.data(), &f2) == CUBLAS_STATUS_SUCCESS) {
        for (int i = 0; i < f2; ++i) if (r2[i].state == CUBLAS_STATUS_SUCCESS) add(r2[i].algo, "by id");
      }
      cublasLtMatmulPreferenceDestroy(p2);
    }
    const size_t n_byid = cands.size() - n_heur;
    // (3) enumeration over the offered ids' capabilities
    for (int id : ids) {
      cublasLtMatmulAlgo_t a;
      if (cublasLtMatmulAlgoInit(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, id, &a) != CUBLAS_STATUS_SUCCESS) continue;
      size_t w = 0;
      std::vector<int> tiles(256), stages(256);
      cublasLtMatmulAlgoCapGetAttribute(&a, CUBLASLT_ALGO_CAP_TILE_IDS, tiles.data(), tiles.size() * 4, &w); tiles.resize(w / 4);
      cublasLtMatmulAlgoCapGetAttribute(&a, CUBLASLT_ALGO_CAP_STAGES_IDS, stages.data(), stages.size() * 4, &w); stages.resize(w / 4);
      int swz = 0, custom_max = 0;
      cublasLtMatmulAlgoCapGetAttribute(&a, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT, &swz, sizeof swz, &w);
      cublasLtMatmulAlgoCapGetAttribute(&a, CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX, &custom_max, sizeof custom_max, &w);
      if (tiles.empty()) tiles.push_back(0);
      if (stages.empty()) stages.push_back(0);
      std::printf("  id %d: %zu tiles, %zu stages, swizzle %d, custom 0..%d\n", id, tiles.size(), stages.size(), swz, custom_max);
      const int clusters[] = {0, 2, 3, 5, 6, 4, 8};
      for (int t : tiles) for (int st : stages) for (int cl : clusters) for (int sw = 0; sw <= (swz ? 1 : 0); ++sw)
        for (int cu = 0; cu <= std::min(custom_max, 3); ++cu) {
          cublasLtMatmulAlgo_t b = a;
          cublasLtMatmulAlgoConfigSetAttribute(&b, CUBLASLT_ALGO_CONFIG_TILE_ID, &t, sizeof t);
          cublasLtMatmulAlgoConfigSetAttribute(&b, CUBLASLT_ALGO_CONFIG_STAGES_ID, &st, sizeof st);
          cublasLtMatmulAlgoConfigSetAttribute(&b, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cl, sizeof cl);
          cublasLtMatmulAlgoConfigSetAttribute(&b, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &sw, sizeof sw);
          cublasLtMatmulAlgoConfigSetAttribute(&b, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &cu, sizeof cu);
          cublasLtMatmulHeuristicResult_t chk;
          if (cublasLtMatmulAlgoCheck(lt, op, la, lb, lc, lc, &b, &chk) == CUBLAS_STATUS_SUCCESS && chk.workspaceSize <= ws_bytes) add(b, "enumerated");
        }
    }
    const size_t n_enum = cands.size() - n_heur - n_byid;
    std::mt19937 rng(7);  // the budget covers a random sample of the enumerated ones, not the first tiles
    std::shuffle(cands.begin() + static_cast<long>(n_heur + n_byid), cands.end(), rng);
    // Time: the heuristic's and by-id ones all, the enumerated ones until the budget is spent.
    const auto t0 = std::chrono::steady_clock::now();
    size_t timed = 0;
    for (size_t i = 0; i < cands.size(); ++i) {
      const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (i >= n_heur + n_byid && el > budget_s) break;
      time_cfg(cands[i]);
      ++timed;
    }
    size_t hb = 0, ob = 0;
    for (size_t i = 0; i < timed; ++i) {
      if (i < n_heur && cands[i].ms < cands[hb].ms) hb = i;
      if (cands[i].ms < cands[ob].ms) ob = i;
    }
    // Alternate the two for 10 rounds; medians.
    std::vector<double> th, to;
    for (int r = 0; r < 10; ++r) { th.push_back(time_once(cands[hb].algo)); to.push_back(time_once(cands[ob].algo)); }
    std::sort(th.begin(), th.end()); std::sort(to.begin(), to.end());
    const double flop = 2.0 * s.m * s.n * s.k;
    std::printf("%s (%c%c %ldx%ldx%ld): %zu heuristic, %zu by id, %zu enumerated (%zu timed)\n", s.name, s.ta ? 'T' : 'N',
                s.tb ? 'T' : 'N', s.m, s.n, s.k, n_heur, n_byid, n_enum, timed);
    std::printf("  heuristic best (rank %zu) %.3f ms %.1f TFLOPS  [%s]\n", hb, th[5], flop / th[5] / 1e9, cands[hb].what.c_str());
    std::printf("  overall best           %.3f ms %.1f TFLOPS  [%s]  gain %.1f%%\n", to[5], flop / to[5] / 1e9,
                cands[ob].what.c_str(), (th[5] / to[5] - 1) * 100);
    std::fflush(stdout);
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la); cublasLtMatrixLayoutDestroy(lb); cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(op);
  }
  return 0;
}
