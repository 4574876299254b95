// The architecture table's rules, one architecture at a time: what an A100, an L40S, an H100/H200,
// a B200, a B300 and an RTX PRO Blackwell run, and what each is refused with.
#include "facts/gpu_features.hpp"

#include <gtest/gtest.h>

#include "facts/catalog.hpp"

namespace ub {
namespace {

ComputeCapability cc(const char* text) { return *parse_compute_capability(text); }

TEST(GpuFeatures, ComputeCapabilitiesAreReadExactly) {
  EXPECT_EQ(cc("9.0").value(), 90);
  EXPECT_EQ(cc("12.0").value(), 120);
  EXPECT_EQ(cc("10.3").text(), "10.3");
  for (const char* bad : {"", "9", "9.", ".0", "9.0.1", "x.0", "9.x", "-9.0", "9.10", " 9.0"}) {
    EXPECT_FALSE(parse_compute_capability(bad).has_value()) << bad;
  }
}

TEST(GpuFeatures, EachArchitectureRunsWhatItHasAndIsToldWhyNotTheRest) {
  struct Expect {
    const char* cc;
    bool fp8, block_scaled, bulk, fp8_attention;
  };
  // A100 8.0, L40S / L4 8.9, H100 / H200 9.0, B200 10.0, B300 10.3, RTX PRO 6000 Blackwell 12.0.
  for (const Expect& e : {Expect{"8.0", false, false, false, false}, Expect{"8.9", true, false, false, false},
                          Expect{"9.0", true, false, true, true}, Expect{"10.0", true, true, true, true},
                          Expect{"10.3", true, true, true, true}, Expect{"12.0", true, true, true, true}}) {
    const ComputeCapability c = cc(e.cc);
    EXPECT_FALSE(missing_feature(GpuFeature::engine, c).has_value()) << e.cc;
    EXPECT_FALSE(missing_feature(GpuFeature::fused_attention_bf16, c).has_value()) << e.cc;
    EXPECT_EQ(!missing_feature(GpuFeature::fp8_gemm, c), e.fp8) << e.cc;
    EXPECT_EQ(!missing_feature(GpuFeature::block_scaled_gemm, c), e.block_scaled) << e.cc;
    EXPECT_EQ(!missing_feature(GpuFeature::bulk_copy, c), e.bulk) << e.cc;
    EXPECT_EQ(!missing_feature(GpuFeature::fused_attention_fp8, c), e.fp8_attention) << e.cc;
    EXPECT_FALSE(gemm_unsupported_reason(Dtype::bf16, c).has_value()) << e.cc;
    EXPECT_EQ(!gemm_unsupported_reason(Dtype::fp8, c), e.fp8) << e.cc;
    EXPECT_EQ(!gemm_unsupported_reason(Dtype::nvfp4, c), e.block_scaled) << e.cc;
    EXPECT_EQ(!gemm_unsupported_reason(Dtype::mxfp8, c), e.block_scaled) << e.cc;
  }
  EXPECT_TRUE(missing_feature(GpuFeature::engine, cc("7.5")).has_value());
}

TEST(GpuFeatures, ARefusalNamesWhatHasItAndAFallbackWhatRunsInstead) {
  const auto fp8 = gemm_unsupported_reason(Dtype::fp8, cc("8.0"));
  ASSERT_TRUE(fp8.has_value());
  EXPECT_NE(fp8->find("8.9"), std::string::npos) << *fp8;
  EXPECT_NE(fp8->find("this GPU is 8.0"), std::string::npos) << *fp8;
  const auto nvfp4 = gemm_unsupported_reason(Dtype::nvfp4, cc("9.0"));
  ASSERT_TRUE(nvfp4.has_value());
  EXPECT_NE(nvfp4->find("Blackwell"), std::string::npos) << *nvfp4;
  EXPECT_NE(nvfp4->find("scores zero"), std::string::npos) << *nvfp4;
  const auto bulk = missing_feature(GpuFeature::bulk_copy, cc("8.0"));
  ASSERT_TRUE(bulk.has_value());
  EXPECT_NE(bulk->find("default tiled8cs kernel run instead"), std::string::npos) << *bulk;
  EXPECT_TRUE(gemm_unsupported_reason(Dtype::fp4, cc("10.0")).has_value()) << "not measured yet, said so";
}

// The catalog's dtypes and the architecture table say the same of every NVIDIA GPU with a compute
// capability: a part the catalog says executes fp8 (or block-scaled nvfp4 / mxfp8) has the
// architecture for it, and one it says cannot, has not. One truth, read by decide and by mamf.
TEST(GpuFeatures, TheCatalogAgreesWithTheTableOnEveryNvidiaGpu) {
  const Catalog cat = Catalog::load(std::string(UB_DATA_DIR) + "/accelerators.json");
  int checked = 0;
  for (const Accelerator& a : cat.all()) {
    if (a.vendor != "NVIDIA" || !a.compute_capability || *a.compute_capability == "unknown") continue;
    const std::optional<ComputeCapability> c = parse_compute_capability(*a.compute_capability);
    ASSERT_TRUE(c) << a.id << ": compute capability " << *a.compute_capability;
    const std::pair<Dtype, GpuFeature> pairs[] = {
        {Dtype::fp8, GpuFeature::fp8_gemm}, {Dtype::nvfp4, GpuFeature::block_scaled_gemm}, {Dtype::mxfp8, GpuFeature::block_scaled_gemm}};
    for (const auto& [d, f] : pairs) {
      const std::optional<bool> says = a.peak(d).executes();
      if (!says) continue;  // unknown in the catalog: nothing to hold it to
      EXPECT_EQ(*says, !missing_feature(f, *c)) << a.id << " (" << *a.compute_capability << "): " << to_string(d);
      ++checked;
    }
  }
  EXPECT_GT(checked, 20);
}

}  // namespace
}  // namespace ub
