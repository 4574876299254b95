// Our engine's profile as a breakdown and a decomposition (host side, no GPU): kernels take their
// operation's bucket, kernels outside any operation are classified by name, copies count where no
// kernel runs, the buckets add up to each step, the median step's work gives the rates.
#include "measure/engine_decomposition.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

#include "analysis/decompose/trace_decomposition.hpp"
#include "base/error.hpp"
#include "measure/engine_trace.hpp"

namespace ub::measure {
namespace {

using trace::Bucket;
using Kind = gpu::GpuActivityRecord::Kind;

gpu::GpuActivityRecord kernel(uint64_t start_us, uint64_t end_us, uint32_t name, uint64_t op) {
  gpu::GpuActivityRecord r;
  r.kind = Kind::kernel, r.start = 1'000'000'000 + start_us * 1000, r.end = 1'000'000'000 + end_us * 1000;
  r.name = name, r.operation = op;
  return r;
}

// Two steps of 1000 us and one of 1400 us (the slow one is not the median).
gpu::StepProfiler::Profile three_steps() {
  gpu::StepProfiler::Profile p;
  p.log.names = {"nvjet_sm90_tst_256x128", "cudnn_generated_fort_native_sdpa_sm90", "ub_fill_kernel",
                 "my_own_kernel"};
  for (int s = 0; s < 3; ++s) {
    const uint64_t t0 = static_cast<uint64_t>(s) * 2000, len = s == 1 ? 1400 : 1000;
    p.steps.push_back({1'000'000'000 + t0 * 1000, 1'000'000'000 + (t0 + len) * 1000});
    const size_t first = p.ops.size();
    p.ops.push_back({"gemm", "qkv fwd", 4e11, 0, 0.4, 1, s});
    p.ops.push_back({"attention", "attention fwd", 1e11, 0, 0.2, 1, s});
    p.ops.push_back({"optimizer", "AdamW", 0, 2e8, 0.1, 1, s});
    p.log.records.push_back(kernel(t0 + 0, t0 + 400, 0, first + 1));    // gemm
    p.log.records.push_back(kernel(t0 + 400, t0 + 600, 1, first + 2));  // attention
    p.log.records.push_back(kernel(t0 + 600, t0 + 650, 2, 0));           // outside: named by the rules
    p.log.records.push_back(kernel(t0 + 650, t0 + 700, 3, 0));           // outside, no rule: other
    gpu::GpuActivityRecord copy;
    copy.kind = Kind::memcpy, copy.start = 1'000'000'000 + (t0 + 700) * 1000;
    copy.end = 1'000'000'000 + (t0 + 750) * 1000, copy.bytes = 1 << 20;
    p.log.records.push_back(copy);
    p.log.records.push_back(kernel(t0 + 800, t0 + 900, 0, first + 3));  // the optimizer's kernel
  }
  return p;
}

trace::KernelClasses rules() {
  trace::KernelClasses c;
  c.add_file(UB_DATA_DIR "/kernel_classes.json", false);
  return c;
}

TEST(EngineDecomposition, KernelsTakeTheirOperationsBucketAndTheBucketsAddUp) {
  trace::KernelClasses classes = rules();
  const EngineProfile e = analyse_profile(three_steps(), classes, "NVIDIA H200", 0, {});
  const trace::TraceDecomposition& d = e.decomposition;
  ASSERT_EQ(d.steps.size(), 3u);
  const trace::StepDecomposition& m = d.median_step();
  EXPECT_NEAR(m.step_us, 1000, 1e-6);
  double total = 0;
  for (Bucket b : trace::kAllBuckets) total += m.of(b);
  EXPECT_NEAR(total, m.step_us, 1e-6);
  // The optimizer's kernel has a GEMM's name but runs inside AdamW: its operation decides.
  EXPECT_NEAR(m.of(Bucket::gemm), 400, 1e-6);
  EXPECT_NEAR(m.of(Bucket::optimizer), 100, 1e-6);
  EXPECT_NEAR(m.of(Bucket::attention), 200, 1e-6);
  EXPECT_NEAR(m.of(Bucket::elementwise), 50, 1e-6);  // ub_fill_kernel, by the rules' "fill_kernel"
  EXPECT_NEAR(m.of(Bucket::other), 50, 1e-6);
  EXPECT_NEAR(m.of(Bucket::memcpy), 50, 1e-6);
  EXPECT_NEAR(m.of(Bucket::idle), 150, 1e-6);
  ASSERT_EQ(d.unclassified.size(), 1u);
  EXPECT_EQ(d.unclassified[0].name, "my_own_kernel");
  EXPECT_EQ(d.unclassified[0].count, 3u);
  EXPECT_NEAR(d.steps[1].step_us, 1400, 1e-6);
  EXPECT_NEAR(d.steps[1].of(Bucket::idle), 550, 1e-6);
  // The median step's work: the rates of the record.
  EXPECT_DOUBLE_EQ(e.work.flop[static_cast<size_t>(Bucket::gemm)], 4e11);
  EXPECT_DOUBLE_EQ(e.work.bytes[static_cast<size_t>(Bucket::optimizer)], 2e8);
  const DecompositionRecord r = trace::summarize(d, e.work, nullptr);
  EXPECT_NEAR(*r.buckets[0].tflops, 4e11 / 1e12 / 400e-6, 1e-9);
  EXPECT_NEAR(*r.buckets[4].gbps, 2e8 / 1e9 / 100e-6, 1e-9);
  EXPECT_FALSE(r.buckets[4].tflops.has_value());
  // The breakdown of the same (median) step: three operations and the rest of the step.
  EXPECT_DOUBLE_EQ(e.breakdown.step_ms, 1.0);
  ASSERT_EQ(e.breakdown.ops.size(), 4u);
  EXPECT_EQ(e.breakdown.ops.back().label, "idle and kernels outside operations");
  EXPECT_NEAR(e.breakdown.ops.back().ms, 1.0 - 0.7, 1e-9);
}

TEST(EngineDecomposition, OperationClassesMapToBuckets) {
  EXPECT_EQ(bucket_of_class("norm/elementwise"), Bucket::elementwise);
  EXPECT_EQ(bucket_of_class("cross_entropy"), Bucket::loss);
  EXPECT_EQ(bucket_of_class("communication"), Bucket::communication);
  EXPECT_EQ(bucket_of_class("something new"), Bucket::other);
}

// The profile written as a Chrome trace and read back by the trace reader: the same steps, the
// same timeline; a kernel's bucket then comes from its name alone (the optimizer's kernel, named
// like a GEMM, is a GEMM to a reader that does not know its operation).
TEST(EngineDecomposition, TheChromeTraceReadsBackAsTheSameSteps) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("engine-trace-" + std::to_string(::getpid()) + ".json")).string();
  write_chrome_trace(three_steps(), "NVIDIA H200", 0, path);
  trace::KernelClasses classes = rules();
  const auto ds = trace::decompose_trace(path, classes, trace::DecomposeOptions{});
  std::filesystem::remove(path);
  ASSERT_EQ(ds.size(), 1u);
  const trace::TraceDecomposition& d = ds[0];
  EXPECT_EQ(d.gpu, "NVIDIA H200");
  ASSERT_EQ(d.steps.size(), 3u);
  const trace::StepDecomposition& m = d.median_step();
  EXPECT_NEAR(m.step_us, 1000, 1e-6);
  EXPECT_NEAR(m.of(Bucket::gemm), 500, 1e-6);
  EXPECT_NEAR(m.of(Bucket::attention), 200, 1e-6);
  EXPECT_NEAR(m.of(Bucket::memcpy), 50, 1e-6);
  EXPECT_NEAR(m.of(Bucket::idle), 150, 1e-6);
  EXPECT_NEAR(d.steps[1].step_us, 1400, 1e-6);
}

TEST(EngineDecomposition, NoStepIsAnError) {
  trace::KernelClasses classes = rules();
  EXPECT_THROW(analyse_profile({}, classes, "", 0, {}), WorkError);
  gpu::StepProfiler::Profile empty_step;
  empty_step.steps.push_back({1000, 2000});
  EXPECT_THROW(analyse_profile(empty_step, classes, "", 0, {}), WorkError);
}

}  // namespace
}  // namespace ub::measure
