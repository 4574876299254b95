// How fast `upgradebench decompose` reads a large torch.profiler trace, and with how much memory:
// writes a trace of the requested size in Kineto's layout (per kernel: the aten operator, the
// runtime launch, the flow events and the kernel with the arguments Kineto writes; steps of 2000
// kernels annotated ProfilerStep#N; the kernel names of a Llama step: cuBLASLt GEMMs, FlashAttention,
// Triton norms, the loss, fused Adam, NCCL), plain or gzip, then runs `upgradebench decompose` on it
// as a child process and reports wall time, MB/s and the child's peak resident memory.
//
//   trace_speed UPGRADEBENCH SIZE_MB [--gzip] [--keep PATH]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

const char* const kKernels[] = {
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
    "nvjet_tst_192x192_64x4_2x1_v_bz_coopB_TNT",
    "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, "
    "Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, "
    "false>(flash::Flash_fwd_params)",
    "triton_per_fused__to_copy_add_mean_mul_pow_rsqrt_0",
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, "
    "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)",
    "triton_poi_fused_mul_silu_1",
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous "
    "namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)",
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, "
    "(at::native::ADAM_MODE)1, false>, bool, float, float, float, float, float, float const*, float const*>(...)",
    "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
};
const char* const kOps[] = {"aten::mm", "aten::mm", "aten::_flash_attention_forward", "aten::mean", "aten::add",
                            "aten::silu", "aten::_log_softmax", "aten::_fused_adam_", "nccl:all_reduce"};

class Writer {
 public:
  Writer(const std::string& path, bool gz) : gz_(gz) {
    if (gz) g_ = gzopen(path.c_str(), "wb1");
    else f_ = std::fopen(path.c_str(), "wb");
    if (!g_ && !f_) {
      std::fprintf(stderr, "trace_speed: cannot write %s\n", path.c_str());
      std::exit(2);
    }
  }
  ~Writer() {
    if (g_) gzclose(g_);
    if (f_) std::fclose(f_);
  }
  void put(const std::string& s) {
    if (gz_) gzwrite(g_, s.data(), static_cast<unsigned>(s.size()));
    else std::fwrite(s.data(), 1, s.size(), f_);
    bytes_ += s.size();
  }
  size_t bytes() const { return bytes_; }

 private:
  bool gz_;
  gzFile g_ = nullptr;
  FILE* f_ = nullptr;
  size_t bytes_ = 0;
};

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...) {
  char buf[4096];
  va_list ap;
  va_start(ap, f);
  const int n = std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return std::string(buf, static_cast<size_t>(std::max(0, std::min(n, static_cast<int>(sizeof buf) - 1))));
}

size_t write_trace(const std::string& path, size_t target_bytes, bool gz) {
  Writer w(path, gz);
  w.put("{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H200\", \"totalGlobalMem\": "
        "150110011392, \"computeMajor\": 9, \"computeMinor\": 0, \"numSms\": 132}],\n  \"cupti_version\": 26,\n"
        "  \"traceEvents\": [\n");
  w.put("  {\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 5465398000000.0, \"pid\": 3413, \"tid\": 0, \"args\": {\"name\": \"python3\"}}");
  double t = 5465398100000.0;
  long corr = 1, step = 0;
  const size_t per_step = 2000;
  while (w.bytes() < target_bytes) {
    const double step_start = t;
    w.put(fmt(",\n  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%ld\", \"pid\": 3413, \"tid\": 3413, "
              "\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"External id\": %ld, \"Record function id\": 0, \"Ev Idx\": %ld}}",
              step, step_start, per_step * 12.0, corr, corr));
    for (size_t k = 0; k < per_step; ++k, ++corr) {
      const size_t i = (k * 7 + static_cast<size_t>(step)) % 9;
      const double dur = 3.0 + static_cast<double>((k * 37) % 50) / 5.0;
      const int stream = i == 8 ? 20 : 7;
      w.put(fmt(",\n  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": 3413, \"tid\": 3413, \"ts\": %.3f, "
                "\"dur\": 6.125, \"args\": {\"External id\": %ld, \"Record function id\": 0, \"Sequence number\": %ld, "
                "\"Fwd thread id\": 0, \"Ev Idx\": %ld}}", kOps[i], t, corr, corr, corr));
      w.put(fmt(",\n  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 3413, \"tid\": 3413, "
                "\"ts\": %.3f, \"dur\": 4.25, \"args\": {\"External id\": %ld, \"cbid\": 211, \"correlation\": %ld}}",
                t + 1, corr, corr));
      w.put(fmt(",\n  {\"ph\": \"s\", \"id\": %ld, \"pid\": 3413, \"tid\": 3413, \"ts\": %.3f, \"cat\": \"ac2g\", \"name\": \"ac2g\"}",
                corr, t + 1));
      w.put(fmt(",\n  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, "
                "\"args\": {\"External id\": %ld, \"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": %d, "
                "\"correlation\": %ld, \"registers per thread\": 168, \"shared memory\": 114688, \"blocks per SM\": 1, "
                "\"warps per SM\": 12, \"grid\": [132, 1, 1], \"block\": [384, 1, 1], \"est. achieved occupancy %%\": 19}}",
                kKernels[i], stream, t + 8, dur, corr, stream, corr));
      w.put(fmt(",\n  {\"ph\": \"f\", \"id\": %ld, \"pid\": 0, \"tid\": %d, \"ts\": %.3f, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}",
                corr, stream, t + 8));
      t += 12;
    }
    ++step;
  }
  w.put("\n  ],\n  \"traceName\": \"generated.pt.trace.json\"\n}\n");
  return w.bytes();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: trace_speed UPGRADEBENCH SIZE_MB [--gzip] [--keep PATH]\n");
    return 2;
  }
  const std::string ub = argv[1];
  const double size_mb = std::atof(argv[2]);
  bool gz = false;
  std::string path;
  for (int i = 3; i < argc; ++i) {
    if (std::strcmp(argv[i], "--gzip") == 0) gz = true;
    else if (std::strcmp(argv[i], "--keep") == 0 && i + 1 < argc) path = argv[++i];
  }
  const bool keep = !path.empty();
  if (!keep) path = fmt("/tmp/trace_speed_%d.json%s", static_cast<int>(getpid()), gz ? ".gz" : "");
  const size_t bytes = write_trace(path, static_cast<size_t>(size_mb * 1e6), gz);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    if (!std::freopen("/dev/null", "w", stdout)) _exit(127);
    execl(ub.c_str(), ub.c_str(), "decompose", path.c_str(), "--json", static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                     static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  if (!keep) std::remove(path.c_str());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "trace_speed: upgradebench decompose failed (status %d)\n", status);
    return 1;
  }
  std::printf("{\"trace_mb\": %.1f, \"gzip\": %s, \"wall_s\": %.3f, \"cpu_s\": %.3f, \"mb_per_s\": %.1f, "
              "\"peak_rss_mib\": %.1f}\n", static_cast<double>(bytes) / 1e6, gz ? "true" : "false", wall, cpu,
              static_cast<double>(bytes) / 1e6 / wall, static_cast<double>(usage.ru_maxrss) / 1024.0);
  return 0;
}
