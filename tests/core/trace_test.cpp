// `decompose` of torch.profiler traces: the streaming JSON layer (escapes, numbers, values split
// across any block boundary, gzip), kernel names of real stacks into buckets, the split of a step
// (buckets adding up to it, overlap, clipping), and a trace in Kineto's layout decomposed end to end.
#include <gtest/gtest.h>

#include <optional>

#include <algorithm>
#include <zlib.h>

#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>

#include <nlohmann/json.hpp>

#include "analysis/decompose/decomposition_summary.hpp"
#include "analysis/decompose/trace_decomposition.hpp"
#include "base/error.hpp"
#include "base/json_stream.hpp"
#include "records/decomposition_records.hpp"
#include "records/trace/kineto_trace.hpp"
#include "file_text.hpp"

namespace ub::trace {
namespace {

const std::string kFixtures = UB_FIXTURES_DIR;
const std::string kSmall = kFixtures + "/trace_kineto_small.json";

std::string slurp(const std::filesystem::path& p) { return ub_test::file_text(p); }

std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

KernelClasses bundled_classes() {
  KernelClasses k;
  k.add_file(std::string(UB_DATA_DIR) + "/kernel_classes.json", false);
  return k;
}

TEST(JsonSpan, StringsNumbersAndSkipping) {
  const std::string text =
      R"({"s": "a\"b\\c\u00e9\ud83d\ude00\n", "n": -1.5e3, "i": 7, "q": "42", "deep": [[{"x": [1, "]"]}]], "t": true})";
  JsonSpan span(text, "t");
  std::string s;
  double n = 0;
  int64_t i = 0;
  std::optional<int64_t> q = 0;
  span.for_each_member([&](std::string_view k, JsonSpan& v) {
    if (k == "s") s = v.string();
    if (k == "n") n = *v.number();
    if (k == "i") i = *v.integer();
    if (k == "q") q = v.integer();  // a string, even of digits, is no number
    return true;  // "deep" and "t" are skipped unread
  });
  EXPECT_EQ(s, "a\"b\\c\xc3\xa9\xf0\x9f\x98\x80\n");
  EXPECT_DOUBLE_EQ(n, -1500);
  EXPECT_EQ(i, 7);
  EXPECT_EQ(q, std::nullopt);
  for (const char* bad : {R"({"a": "x)", R"({"a" 1})", R"({"a": 1 "b": 2})", R"({"a": "\q"})"}) {
    JsonSpan b(bad, "bad");
    EXPECT_THROW(b.for_each_member([](std::string_view, JsonSpan& v) {
      (void)v.string();
      return true;
    }), WorkError) << bad;
  }
  // Numbers as JSON writes them, and nothing JSON does not: a leading zero, a bare point, no
  // exponent digits, inf and nan are a malformed document.
  for (const char* good : {R"({"a": 0})", R"({"a": -0.5})", R"({"a": 1e-3})", R"({"a": 2E+10})"}) {
    JsonSpan g(good, "good");
    EXPECT_NO_THROW(g.for_each_member([](std::string_view, JsonSpan& v) { return v.number().has_value(); })) << good;
  }
  for (const char* bad : {R"({"a": 01})", R"({"a": 1.})", R"({"a": 1.e5})", R"({"a": 1e})", R"({"a": -inf})", R"({"a": -nan})", R"({"a": -})"}) {
    JsonSpan b(bad, "bad");
    try {
      b.for_each_member([](std::string_view, JsonSpan& v) { return v.number().has_value(); });
      ADD_FAILURE() << "read as a number: " << bad;
    } catch (const WorkError& e) {
      EXPECT_NE(std::string(e.what()).find("a malformed number"), std::string::npos) << bad << ": " << e.what();
    }
  }
}

// Every element of the streamed array, whatever the block size: elements straddle block boundaries.
std::vector<std::string> names_streamed(const std::string& path, size_t block) {
  ByteSource src(path);
  std::vector<std::string> names;
  StreamHandlers h;
  h.on_element = [&](JsonSpan& e) {
    // Kept only once the element is read whole (it is parsed again when it straddled the window).
    std::string name;
    e.for_each_member([&](std::string_view k, JsonSpan& v) {
      if (k == "name") name = v.string();
      return true;
    });
    names.push_back(name);
  };
  stream_document(src, "traceEvents", h, block);
  return names;
}

TEST(JsonStream, AnyBlockSizeReadsTheSameAndGzipToo) {
  const std::vector<std::string> whole = names_streamed(kSmall, size_t{1} << 22);
  ASSERT_EQ(whole.size(), 114u);
  for (size_t block : {1, 7, 64, 1000}) EXPECT_EQ(names_streamed(kSmall, block), whole) << block;
  const std::string gz = ::testing::TempDir() + "/trace_small.json.gz";
  gzFile f = gzopen(gz.c_str(), "wb");
  const std::string text = slurp(kSmall);
  ASSERT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  gzclose(f);
  EXPECT_EQ(names_streamed(gz, 4096), whole);
  // A bare array of events is a trace too.
  EXPECT_EQ(names_streamed(temp_file("bare.json", R"([{"name": "a"}, {"name": "b"}])"), 3),
            (std::vector<std::string>{"a", "b"}));
}

// A plain file's size is known when it is opened and the window is made to fit it (a value as
// long as the file still reads whole); a gzip file's decompressed size is not known ahead.
TEST(JsonStream, WindowFitsAPlainFile) {
  const std::string text = R"({"traceEvents": [{"name": "a"}, {"name": ")" + std::string(100000, 'b') + R"("}]})";
  const std::string path = temp_file("fitted.json", text);
  ByteSource src(path);
  EXPECT_EQ(src.known_size(), text.size());
  std::vector<size_t> lengths;
  StreamHandlers h;
  h.on_element = [&](JsonSpan& e) {
    e.for_each_member([&](std::string_view, JsonSpan& v) {
      lengths.push_back(v.string().size());
      return true;
    });
  };
  stream_document(src, "traceEvents", h);
  EXPECT_EQ(lengths, (std::vector<size_t>{1, 100000}));
  const std::string gz = ::testing::TempDir() + "/known_size.json.gz";
  gzFile f = gzopen(gz.c_str(), "wb");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  EXPECT_EQ(ByteSource(gz).known_size(), 0u);
}

// gzip is decompressed on a thread of its own, blocks ahead: a trace larger than the blocks held
// ahead reads whole; a damaged one, or one the parser gives up on early, ends in an error naming
// the file, and no thread is left waiting.
TEST(JsonStream, GzipReadAheadOverManyBlocksAndItsErrors) {
  std::string text = R"({"traceEvents": [)";
  std::vector<std::string> names;
  for (int i = 0; text.size() < (size_t{9} << 20); ++i) {
    names.push_back("kernel_" + std::to_string(i) + std::string(64, 'x'));
    text += (i ? "," : "") + std::string(R"({"ph": "X", "name": ")") + names.back() + R"("})";
  }
  text += "]}";
  const auto gzip_file = [](const std::string& name, const std::string& body) {
    const std::string path = ::testing::TempDir() + "/" + name;
    gzFile f = gzopen(path.c_str(), "wb1");
    gzwrite(f, body.data(), static_cast<unsigned>(body.size()));
    gzclose(f);
    return path;
  };
  const std::string big = gzip_file("big.json.gz", text);
  EXPECT_EQ(names_streamed(big, 1 << 16), names);
  // Cut in the middle of the compressed stream.
  const std::string bytes = slurp(big);
  const std::string cut = temp_file("cut.json.gz", bytes.substr(0, bytes.size() / 2));
  try {
    names_streamed(cut, 1 << 16);
    FAIL() << "a cut gzip file was read";
  } catch (const WorkError& e) {
    EXPECT_NE(std::string(e.what()).find("cut.json.gz"), std::string::npos) << e.what();
  }
  // Broken at its start: the parser stops while the thread has blocks ahead to hand over.
  const std::string early = gzip_file("early.json.gz", R"({"traceEvents": [{"a": 1} {"b": 2})" + text.substr(17));
  EXPECT_THROW(names_streamed(early, 1 << 16), WorkError);
}

TEST(JsonStream, BrokenDocumentsAreErrorsNamingTheFile) {
  const std::string text = slurp(kSmall);
  for (const auto& [name, body] : std::vector<std::pair<std::string, std::string>>{
           {"cut.json", text.substr(0, text.size() / 2)},
           {"empty.json", ""},
           {"text.json", "hello"},
           {"comma.json", R"({"traceEvents": [{"a": 1} {"b": 2}]})"}}) {
    try {
      names_streamed(temp_file(name, body), 4096);
      FAIL() << name << " was read";
    } catch (const WorkError& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(ByteSource("/nonexistent/trace.json"), UsageError);
}

TEST(KernelClasses, NamesRealStacksEmit) {
  KernelClasses k = bundled_classes();
  const std::pair<const char*, Bucket> cases[] = {
      // PyTorch's element-wise kernels carry `lambda` in their names: not the LAMB optimizer.
      {"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2> >(int, ...)", Bucket::elementwise},
      {"void multi_tensor_apply_kernel<TensorListMetadata<4>, LAMBStage1Functor<float> >(long, int volatile*, ...)", Bucket::optimizer},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas", Bucket::gemm},
      {"nvjet_tst_192x192_64x4_2x1_v_bz_coopB_TNT", Bucket::gemm},
      {"ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_64x3_tn", Bucket::gemm},
      {"void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8::Params)", Bucket::gemm},
      {"triton_tem_fused_mm_0", Bucket::gemm},
      {"void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4> >(flash::Flash_fwd_params)", Bucket::attention},
      {"void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<cutlass::bfloat16_t> > >(flash::Params)", Bucket::attention},
      {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x128_4x1x1_kernel0_0", Bucket::attention},
      {"fmha_cutlassF_bf16_aligned_64x128_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t>::Params)", Bucket::attention},
      {"triton_per_fused__to_copy_add_mean_mul_pow_rsqrt_0", Bucket::elementwise},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)", Bucket::elementwise},
      {"_rms_norm_forward_kernel", Bucket::elementwise},
      {"void transformer_engine::normalization::rmsnorm_fwd_tuned_kernel<float>(transformer_engine::normalization::LaunchParams<transformer_engine::normalization::FwdParams>)", Bucket::elementwise},
      {"void cuApplyRMSNorm<c10::BFloat16, float, c10::BFloat16>(c10::BFloat16*, float*, c10::BFloat16 const*, int, int, float, c10::BFloat16 const*)", Bucket::elementwise},
      {"_swiglu_forward_kernel", Bucket::elementwise},
      {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)", Bucket::loss},
      {"void at::native::nll_loss_forward_reduce_cuda_kernel_2d<float, long>(float*, float*, float const*, long const*, float const*, bool, long, long, long)", Bucket::loss},
      {"liger_cross_entropy_kernel", Bucket::loss},
      {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, bool, float, float, float, float, float, float const*, float const*>(...)", Bucket::optimizer},
      {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", Bucket::communication},
      {"ncclKernel_ReduceScatter_RING_LL_Sum_bfloat16(ncclDevComm*, unsigned long, ncclWork*)", Bucket::communication},
      // A mixture of experts' routing and permutation: its own bucket (memory-bound, apart from the GEMMs).
      {"void at::native::sbtopk::gatherTopK<c10::BFloat16, unsigned int, 2, false>(at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, ...)", Bucket::routing},
      {"void at::native::indexFuncLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true, at::native::ReduceAdd>(...)", Bucket::routing},
      {"void at::native::_scatter_gather_elementwise_kernel<128, 8, at::native::_cuda_scatter_gather_internal_kernel<true, long>::operator()<at::native::TensorAssign>(...)::{lambda(int)#1}>(int, ...)", Bucket::routing},
      {"_fill_indices_kernel", Bucket::routing},
      {"void at::native::bitonicSortKVInPlace<2, -1, 16, 16, float, long, at::native::GTOp<float, true>, unsigned int>(...)", Bucket::routing},
      {"void ub::gpu::(anonymous namespace)::route_kernel(__nv_bfloat16 const*, float*, int*, float*, long, long, int, bool, bool)", Bucket::routing},
      {"void ub::gpu::(anonymous namespace)::combine_backward_kernel(__nv_bfloat16 const*, ...)", Bucket::routing},
      {"my_custom_kernel", Bucket::other},
  };
  for (const auto& [name, bucket] : cases) EXPECT_EQ(k.classify(name), bucket) << name;
  // A user's rules come first.
  const std::string mine = temp_file("mine.json", R"({"rules": [{"bucket": "loss", "pattern": "^my_custom"}]})");
  k.add_file(mine, true);
  EXPECT_EQ(k.classify("my_custom_kernel"), Bucket::loss);
  KernelClasses bad;
  EXPECT_THROW(bad.add_file(temp_file("bad1.json", R"({"rules": [{"bucket": "idle", "pattern": "x"}]})"), true), UsageError);
  EXPECT_THROW(bad.add_file(temp_file("bad2.json", R"({"rules": [{"bucket": "gemm", "pattern": "(("}]})"), true), UsageError);
  EXPECT_THROW(bad.add_file(temp_file("bad3.json", R"({"rule": []})"), true), UsageError);
  // A misspelt key would leave a rule not doing what its author meant; an empty pattern matches
  // every kernel: both refused, naming the rule.
  const auto message = [&](const char* name, const char* text) {
    try {
      bad.add_file(temp_file(name, text), true);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("bad4.json", R"({"rules": [{"bucket": "gemm", "pattern": "x", "patern": "y"}]})").find(
                "rule 1: unknown key \"patern\""),
            std::string::npos);
  EXPECT_NE(message("bad5.json", R"({"rules": [], "rulez": []})").find("unknown key \"rulez\""), std::string::npos);
  EXPECT_NE(message("bad6.json", R"({"rules": [{"bucket": "gemm", "pattern": "x"}, {"bucket": "gemm", "pattern": ""}]})")
                .find("rule 2: an empty pattern would match every kernel"),
            std::string::npos);
  EXPECT_EQ(bad.rules(), 0u) << "a refused file adds no rule";
}

double sum(const StepDecomposition& d) { return std::accumulate(d.us.begin(), d.us.end(), 0.0); }

TEST(StepDecomposition, BucketsAddUpOverlapIsSeenAndWindowsClip) {
  // 100 us step: a GEMM on two streams at once, attention, a collective half under compute, a copy.
  const std::vector<GpuActivity> acts = {
      {0, 40, Bucket::gemm, 0},         {20, 40, Bucket::gemm, 1},  {40, 60, Bucket::attention, 2},
      {50, 80, Bucket::communication, 3}, {85, 90, Bucket::memcpy, 4}, {95, 130, Bucket::elementwise, 5},
      {200, 300, Bucket::gemm, 6}};
  const StepDecomposition d = decompose_step({"s", 0, 100}, acts);
  EXPECT_DOUBLE_EQ(d.step_us, 100);
  EXPECT_NEAR(sum(d), 100, 1e-9);
  // busy = [0,60) and [95,100): 65 us, shared by kernel time 60 + 20 + 5 (clipped).
  EXPECT_NEAR(d.of(Bucket::gemm), 60.0 * 65 / 85, 1e-9);
  EXPECT_NEAR(d.of(Bucket::attention), 20.0 * 65 / 85, 1e-9);
  EXPECT_NEAR(d.of(Bucket::elementwise), 5.0 * 65 / 85, 1e-9);
  EXPECT_DOUBLE_EQ(d.communication_us, 30);
  EXPECT_DOUBLE_EQ(d.communication_overlapped_us, 10);
  EXPECT_DOUBLE_EQ(d.of(Bucket::communication), 20);
  EXPECT_DOUBLE_EQ(d.of(Bucket::memcpy), 5);
  EXPECT_DOUBLE_EQ(d.of(Bucket::idle), 10);
  EXPECT_EQ(d.activities, 6u);
  const StepDecomposition empty = decompose_step({"e", 500, 600}, acts);
  EXPECT_DOUBLE_EQ(empty.of(Bucket::idle), 100);
}

// Activities running over the whole window may be counted instead of listed (a trace of long
// overlapping kernels): the split is the same as with each of them listed.
TEST(StepDecomposition, ActivitiesCoveringTheWindowCountedAsListed) {
  const std::vector<GpuActivity> partial = {{10, 30, Bucket::gemm, 0}, {60, 70, Bucket::memcpy, 1}};
  std::vector<GpuActivity> listed = partial;
  for (int i = 0; i < 3; ++i) listed.push_back({-50, 500, Bucket::attention, 2});
  listed.push_back({0, 100, Bucket::communication, 3});
  std::array<uint32_t, kBuckets> covering{};
  covering[static_cast<size_t>(Bucket::attention)] = 3;
  covering[static_cast<size_t>(Bucket::communication)] = 1;
  const StepDecomposition a = decompose_step({"s", 0, 100}, listed), b = decompose_step({"s", 0, 100}, partial, covering);
  for (Bucket bucket : kAllBuckets) {
    EXPECT_NEAR(a.of(bucket), b.of(bucket), 1e-9) << to_string(bucket);
    EXPECT_NEAR(a.kernel_us[static_cast<size_t>(bucket)], b.kernel_us[static_cast<size_t>(bucket)], 1e-9);
  }
  EXPECT_NEAR(b.of(Bucket::attention), 300.0 * 100 / 320, 1e-9) << "three attention kernels over the whole step";
  EXPECT_EQ(a.activities, b.activities);
  EXPECT_DOUBLE_EQ(a.communication_overlapped_us, b.communication_overlapped_us);
  EXPECT_DOUBLE_EQ(a.compute_kernel_us, b.compute_kernel_us);
}

// A window in which the GPU ran nothing (the profiler's step closed before the work) does not
// stand for the steps: two steps, one of them empty, give the other as the median.
TEST(TraceDecomposition, TheMedianStepIsOneInWhichTheGpuRan) {
  TraceDecomposition d;
  StepDecomposition empty, busy;
  empty.name = "ProfilerStep#1", empty.step_us = 5, empty.activities = 0;
  busy.name = "ProfilerStep#2", busy.step_us = 900, busy.activities = 412;
  d.steps = {empty, busy};
  EXPECT_EQ(d.median_step().name, "ProfilerStep#2");
  d.steps = {empty};
  EXPECT_EQ(d.median_step().name, "ProfilerStep#1");  // no step ran anything: the one there is
}

TEST(TraceDecomposition, KinetoTraceEndToEnd) {
  KernelClasses k = bundled_classes();
  const auto ds = decompose_trace(kSmall, k, {});
  ASSERT_EQ(ds.size(), 1u);
  const TraceDecomposition& d = ds[0];
  EXPECT_EQ(d.gpu, "NVIDIA H200");
  EXPECT_EQ(d.events, 114u);
  ASSERT_EQ(d.steps.size(), 3u);
  for (const auto& s : d.steps) EXPECT_NEAR(sum(s), s.step_us, 1e-6) << s.name;
  const StepDecomposition& m = d.median_step();
  EXPECT_EQ(m.name, "ProfilerStep#2");
  // The fixture's step: compute busy 660 us of 760 us kernel time (two GEMM streams overlap),
  // a 200 us all-reduce 120 us under compute, a 20 us copy, the rest idle.
  EXPECT_NEAR(m.of(Bucket::gemm), 400.0 * 660 / 760, 1e-6);
  EXPECT_NEAR(m.of(Bucket::attention), 200.0 * 660 / 760, 1e-6);
  EXPECT_NEAR(m.of(Bucket::other), 20.0 * 660 / 760, 1e-6);
  EXPECT_NEAR(m.communication_us, 200, 1e-6);
  EXPECT_NEAR(m.communication_overlapped_us, 120, 1e-6);
  EXPECT_NEAR(m.of(Bucket::communication), 80, 1e-6);
  EXPECT_NEAR(m.of(Bucket::memcpy), 20, 1e-6);
  EXPECT_NEAR(m.of(Bucket::idle), 240, 1e-6);
  ASSERT_EQ(d.unclassified.size(), 1u);
  EXPECT_EQ(d.unclassified[0].name, "my_custom_kernel<\"quoted\">");
  EXPECT_EQ(d.unclassified[0].count, 3u);
  // The record: buckets add up, the range over steps, FLOPs give rates.
  const DecompositionRecord r = summarize(d, model_work(StepFlops{1e12, 2e11}), nullptr);
  double total = 0;
  for (const auto& b : r.buckets) total += b.ms;
  EXPECT_NEAR(total, r.step_ms, 1e-9);
  EXPECT_NEAR(r.buckets[static_cast<size_t>(Bucket::idle)].max_ms, 0.44, 1e-9);  // the third step is 200 us longer
  ASSERT_TRUE(r.buckets[0].tflops.has_value());
  EXPECT_NEAR(*r.buckets[0].tflops, 1.0 / (0.4 * 660 / 760 / 1e3), 1e-6);
  const nlohmann::json j = r;
  const DecompositionRecord back = read_decomposition_record(Fields(j, "t:1"));
  EXPECT_EQ(back.buckets.size(), r.buckets.size());
  EXPECT_DOUBLE_EQ(back.step_ms, r.step_ms);
  EXPECT_EQ(back.unclassified[0].name, r.unclassified[0].name);
}

// `trace`, written to `name`, is refused by the decomposition saying `says`.
void expect_trace_refused(const std::string& name, const nlohmann::json& trace, const std::string& says) {
  KernelClasses k = bundled_classes();
  try {
    decompose_trace(temp_file(name, trace.dump()), k, {});
    ADD_FAILURE() << name << " was read";
  } catch (const WorkError& e) {
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
  }
}

// A kernel event written twice (a trace merged with itself) is refused, not counted twice; each
// GPU's table lists its own kernels no rule names, not another GPU's.
TEST(TraceDecomposition, AKernelTwiceIsRefusedAndEachGpuListsItsOwnKernels) {
  nlohmann::json trace = nlohmann::json::parse(slurp(kSmall));
  nlohmann::json& events = trace["traceEvents"];
  nlohmann::json custom;
  for (const auto& e : events) {
    if (e.value("cat", "") == "kernel" && e.value("name", "").starts_with("my_custom_kernel")) custom = e;
  }
  ASSERT_FALSE(custom.is_null());
  nlohmann::json twice = trace;
  twice["traceEvents"].push_back(custom);
  KernelClasses k = bundled_classes();
  expect_trace_refused("trace_kernel_twice.json", twice, "is in the trace twice");
  nlohmann::json two_gpus = trace;
  for (int i = 0; i < 3; ++i) {
    nlohmann::json other = custom;
    other["pid"] = 1, other["args"]["device"] = 1, other["ts"] = custom["ts"].get<double>() + 21.0 * (i + 1);  // in its step, one after another
    two_gpus["traceEvents"].push_back(other);
  }
  const auto ds = decompose_trace(temp_file("trace_two_gpus.json", two_gpus.dump()), k, {});
  ASSERT_EQ(ds.size(), 2u);
  ASSERT_EQ(ds[0].unclassified.size(), 1u);
  EXPECT_EQ(ds[0].unclassified[0].count, 3u) << "GPU 0's own three";
  ASSERT_EQ(ds[1].unclassified.size(), 1u);
  EXPECT_EQ(ds[1].unclassified[0].count, 3u);
}

// A kernel copied a microsecond later on its stream would take a share of the step from the
// kernels beside it: refused. One that starts as the one before it ends (programmatic dependent
// launch) is read.
TEST(TraceDecomposition, AKernelFarInsideTheOneBeforeItOnItsStreamIsRefused) {
  nlohmann::json trace = nlohmann::json::parse(slurp(kSmall));
  nlohmann::json longest;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("cat", "") == "kernel" && (longest.is_null() || e.value("dur", 0.0) > longest.value("dur", 0.0))) longest = e;
  }
  ASSERT_GT(longest.value("dur", 0.0), 20.0);
  KernelClasses k = bundled_classes();
  nlohmann::json moved = trace, launched = trace;
  nlohmann::json copy = longest;
  copy["ts"] = longest["ts"].get<double>() + 1.0;
  moved["traceEvents"].push_back(copy);
  expect_trace_refused("trace_kernel_moved.json", moved, "one stream runs one kernel at a time");
  nlohmann::json next = longest;
  next["ts"] = longest["ts"].get<double>() + longest["dur"].get<double>() - 0.5;
  next["dur"] = 2.0;
  launched["traceEvents"].push_back(next);
  EXPECT_NO_THROW(decompose_trace(temp_file("trace_kernel_launched.json", launched.dump()), k, {}));
}

// Kernels running across several steps (a collective or a long kernel on a side stream) count in
// each step for the part inside it: three GEMMs spanning every step add three step lengths of
// GEMM kernel time to each.
TEST(TraceDecomposition, KernelsAcrossStepsCountInEachStep) {
  nlohmann::json trace = nlohmann::json::parse(slurp(kSmall));
  nlohmann::json gemm;
  double first = 1e300, last = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("cat", "") == "kernel" && e.value("name", "").find("gemm") != std::string::npos && gemm.is_null()) gemm = e;
    if (e.value("cat", "") == "user_annotation" && e.value("name", "").starts_with("ProfilerStep#")) {
      first = std::min(first, e["ts"].get<double>());
      last = std::max(last, e["ts"].get<double>() + e["dur"].get<double>());
    }
  }
  ASSERT_FALSE(gemm.is_null());
  KernelClasses k = bundled_classes();
  const auto before = decompose_trace(kSmall, k, {});
  for (int i = 0; i < 3; ++i) {
    nlohmann::json long_gemm = gemm;
    long_gemm["ts"] = first - 10.0 - i, long_gemm["dur"] = last - first + 20.0 + 2 * i;
    long_gemm["args"]["stream"] = 90 + i, long_gemm["tid"] = 90 + i;
    trace["traceEvents"].push_back(long_gemm);
  }
  const auto after = decompose_trace(temp_file("trace_long_gemms.json", trace.dump()), k, {});
  ASSERT_EQ(after.size(), 1u);
  ASSERT_EQ(after[0].steps.size(), before[0].steps.size());
  for (size_t i = 0; i < after[0].steps.size(); ++i) {
    const StepDecomposition &b = before[0].steps[i], &a = after[0].steps[i];
    const size_t g = static_cast<size_t>(Bucket::gemm);
    EXPECT_NEAR(a.kernel_us[g], b.kernel_us[g] + 3 * a.step_us, 1e-6) << a.name;
    EXPECT_EQ(a.activities, b.activities + 3) << a.name;
    EXPECT_NEAR(a.of(Bucket::idle), 0, 1e-6) << a.name << ": compute runs over the whole step";
    EXPECT_NEAR(sum(a), a.step_us, 1e-6);
  }
}

// Steps follow one another: an annotation moved into the step before, or one lasting an hour in
// a run of millisecond steps, is refused, not split into buckets.
TEST(TraceDecomposition, OverlappingOrEndlessStepsAreRefused) {
  const nlohmann::json trace = nlohmann::json::parse(slurp(kSmall));
  std::vector<size_t> steps;
  for (size_t i = 0; i < trace["traceEvents"].size(); ++i) {
    const auto& e = trace["traceEvents"][i];
    if (e.value("name", "").starts_with("ProfilerStep#") && e.value("cat", "") == "user_annotation") steps.push_back(i);
  }
  ASSERT_EQ(steps.size(), 3u);
  KernelClasses k = bundled_classes();
  const auto refused = [&](const nlohmann::json& t, const std::string& name, const std::string& want) {
    try {
      decompose_trace(temp_file(name, t.dump()), k, {});
      ADD_FAILURE() << name << " was read";
    } catch (const WorkError& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  };
  nlohmann::json overlap = trace;
  overlap["traceEvents"][steps[1]]["ts"] = trace["traceEvents"][steps[1]]["ts"].get<double>() - 1150.0;
  refused(overlap, "trace_steps_overlap.json", "overlap");
  nlohmann::json endless = trace;
  endless["traceEvents"][steps[2]]["dur"] = 3.6e9;
  refused(endless, "trace_step_endless.json", "times the median of its 3 steps");
}

// Host-side steps that do not hold their GPU-side twin's span (shifted either way by a fraction of
// a step, cut short, or named with the number written otherwise) give way to the GPU side's
// annotations, and say so, rather than an idle share of the gaps between steps.
TEST(TraceDecomposition, HostStepsOffTheGpusClockGiveWayToTheGpuSide) {
  KernelClasses k = bundled_classes();
  const auto straight = decompose_trace(kSmall, k, {});
  EXPECT_NE(straight[0].steps_from.find("(host side)"), std::string::npos) << straight[0].steps_from;
  struct Case {
    const char* name;
    std::function<void(nlohmann::json&)> edit;
    const char* says;
  };
  const Case cases[] = {
      {"later", [](nlohmann::json& e) { e["ts"] = e["ts"].get<double>() + 600; },
       "3 host-side step(s) do not hold the GPU's work of the step, off by up to 595 us"},
      {"earlier", [](nlohmann::json& e) { e["ts"] = e["ts"].get<double>() - 300; },
       "3 host-side step(s) do not hold the GPU's work of the step, off by up to 295 us"},
      {"cut short", [](nlohmann::json& e) { e["dur"] = e["dur"].get<double>() * 0.6; },
       "3 host-side step(s) do not hold the GPU's work of the step"},
      {"zero-padded", [](nlohmann::json& e) {
         e["name"] = "ProfilerStep#0" + e["name"].get<std::string>().substr(13);
         e["ts"] = e["ts"].get<double>() + 600;
       }, "off by up to 595 us"},
      {"renumbered", [](nlohmann::json& e) { e["name"] = "ProfilerStep#1" + e["name"].get<std::string>().substr(13); },
       "3 of them have no host-side step of the same name"},
      {"one renamed and late", [](nlohmann::json& e) {
         if (e["name"] != "ProfilerStep#2") return;
         e["name"] = "ProfilerStep#12";
         e["ts"] = e["ts"].get<double>() + 600;
       }, "1 of them have no host-side step of the same name"},
  };
  for (const Case& c : cases) {
    nlohmann::json trace = nlohmann::json::parse(slurp(kSmall));
    for (auto& e : trace["traceEvents"]) {
      if (e.value("cat", "") == "user_annotation" && e.value("name", "").starts_with("ProfilerStep#")) c.edit(e);
    }
    const auto off = decompose_trace(temp_file("trace_host_off.json", trace.dump()), k, {});
    ASSERT_EQ(off.size(), 1u) << c.name;
    EXPECT_NE(off[0].steps_from.find(c.says), std::string::npos) << c.name << ": " << off[0].steps_from;
    // The GPU side's steps are the GPU's span of each step: less idle than the host's, never more.
    EXPECT_LE(off[0].median_step().of(Bucket::idle), straight[0].median_step().of(Bucket::idle) + 1e-6) << c.name;
    EXPECT_GT(off[0].median_step().activities, 0u) << c.name;
  }
}

// A real torch.profiler trace of a Hugging Face step beside what torch's own key_averages said of
// the same profile (bench/peers/train_peer.py or train_moe_peer.py --profile): the attention share
// of kernel time must agree, every kernel must be classified, and the buckets add up to the step.
StepDecomposition check_against_key_averages(const std::string& key_averages, const std::string& gpu) {
  const nlohmann::json torch_says = nlohmann::json::parse(slurp(kFixtures + "/" + key_averages));
  KernelClasses k = bundled_classes();
  const auto ds = decompose_trace(kFixtures + "/" + torch_says["trace"].get<std::string>(), k, {});
  if (ds.size() != 1) ADD_FAILURE() << ds.size() << " decompositions";
  if (ds.empty()) return {};
  const TraceDecomposition& d = ds[0];
  EXPECT_EQ(d.gpu, gpu);
  EXPECT_EQ(d.steps.size(), torch_says["steps"].get<size_t>());
  EXPECT_TRUE(d.unclassified.empty()) << d.unclassified.front().name;
  const StepDecomposition& m = d.median_step();
  EXPECT_NEAR(sum(m), m.step_us, 1e-6);
  double kernels = 0;
  for (Bucket b : kAllBuckets) {
    if (is_compute(b) || b == Bucket::memcpy) kernels += m.kernel_us[static_cast<size_t>(b)];
  }
  const double share = m.kernel_us[static_cast<size_t>(Bucket::attention)] / kernels;
  EXPECT_NEAR(share, torch_says["attention_share_of_kernels"].get<double>(), 0.002);
  // Kernel time: ours counts copies too, torch's kernels only: within 1%.
  EXPECT_NEAR(kernels, torch_says["key_averages_kernel_us"].get<double>(), 0.01 * kernels);
  return m;
}

// The Llama step (2 layers, 4096 tokens, sdpa on cuDNN, fused AdamW; on an H200): a dense model
// routes nothing.
TEST(TraceDecomposition, HuggingFaceTraceAgreesWithTorchsKeyAverages) {
  const StepDecomposition m = check_against_key_averages("hf_llama_2l_4096.key_averages.json", "NVIDIA H200");
  EXPECT_EQ(m.kernel_us[static_cast<size_t>(Bucket::routing)], 0.0);
}

// The Qwen3-MoE step (Qwen3-30B-A3B's shape, 4 layers, 4096 tokens; on an H100): the router's
// top-k, its sort and the per-expert gathers and index_add_ land in `routing`, nothing unclassified.
TEST(TraceDecomposition, HuggingFaceMixtureOfExpertsTraceHasItsRouting) {
  const StepDecomposition m = check_against_key_averages("hf_qwen3_30b_a3b_4l_4096.key_averages.json", "NVIDIA H100 80GB HBM3");
  const double routing = m.kernel_us[static_cast<size_t>(Bucket::routing)];
  EXPECT_GT(routing, 0.0);
  EXPECT_LT(routing, 0.05 * m.step_us);  // gathers and scatters of 4096 x 8 rows: a small share
}

// Our engine's profiled steps as `decompose --trace-out` wrote them on an H200 (Llama-3.1-8B, 2
// layers, 4096 tokens), read back by the trace reader: the same steps and the same buckets as the
// decomposition record the engine wrote beside it, to the microsecond: kernel names alone put
// every kernel in the bucket of the operation that launched it.
TEST(TraceDecomposition, OurEngineTraceReadsBackAsItsOwnDecomposition) {
  DecompositionRecord engine;
  std::istringstream lines(slurp(kFixtures + "/engine_llama_2l_4096.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json j = nlohmann::json::parse(line);
    if (j["type"] == "decomposition") engine = read_decomposition_record(Fields(j, "engine_llama_2l_4096.jsonl"));
  }
  ASSERT_EQ(engine.source, "upgradebench engine (CUPTI)");
  KernelClasses k = bundled_classes();
  const auto ds = decompose_trace(kFixtures + "/engine_llama_2l_4096.pt.trace.json.gz", k, {});
  ASSERT_EQ(ds.size(), 1u);
  const DecompositionRecord back = summarize(ds[0], std::nullopt, nullptr);
  EXPECT_EQ(back.steps, engine.steps);
  EXPECT_NEAR(back.step_ms, engine.step_ms, 1e-3);
  // By name: records written before a bucket existed (routing) hold none of it.
  for (const auto& b : back.buckets) {
    const auto it = std::find_if(engine.buckets.begin(), engine.buckets.end(), [&](const auto& e) { return e.name == b.name; });
    EXPECT_NEAR(b.ms, it == engine.buckets.end() ? 0.0 : it->ms, 1e-3) << b.name;
  }
  EXPECT_TRUE(back.unclassified.empty()) << back.unclassified.front().name;
}

TEST(TraceDecomposition, StepsFromAnnotationsOrCutAndErrors) {
  KernelClasses k = bundled_classes();
  // No annotation of that name: an error saying what to give, or --steps.
  DecomposeOptions none;
  none.step_pattern = "^TrainStep";
  try {
    decompose_trace(kSmall, k, none);
    FAIL();
  } catch (const WorkError& e) {
    EXPECT_NE(std::string(e.what()).find("--steps N"), std::string::npos) << e.what();
  }
  none.steps = 2;
  const auto cut = decompose_trace(kSmall, k, none);
  ASSERT_EQ(cut[0].steps.size(), 2u);
  for (const auto& s : cut[0].steps) EXPECT_NEAR(sum(s), s.step_us, 1e-6);
  // A trace whose annotations mark its steps is not cut otherwise: --steps there is refused.
  DecomposeOptions both;
  both.steps = 2;
  try {
    decompose_trace(kSmall, k, both);
    ADD_FAILURE() << "--steps ignored";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("has 6 step annotations matching \"^ProfilerStep#\""), std::string::npos) << e.what();
  }
  const std::string no_gpu = temp_file("cpu_only.json", R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2}]})");
  EXPECT_THROW(decompose_trace(no_gpu, k, {}), WorkError);
  EXPECT_THROW(trace_files({"/nonexistent"}), UsageError);
  EXPECT_EQ(trace_files({kFixtures + "/trace_kineto_small.json"}).size(), 1u);
}

}  // namespace
}  // namespace ub::trace
