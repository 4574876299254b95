// The GPU binary holds code for every architecture it was built for: read from its own .nv_fatbin
// section (cuobjdump is not on the CI machine), against the list CMake built it with.
#include "cli/fatbin_architectures.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "base/error.hpp"

namespace ub::cli {
namespace {

TEST(Fatbin, TheGpuBinaryHoldsEveryArchitectureOfItsBuild) {
#ifndef UB_GPU_BINARY
  GTEST_SKIP() << "a build without the GPU side: no GPU binary to read";
#else
  const FatbinArchitectures a = read_fatbin_architectures(UB_GPU_BINARY);
  ASSERT_FALSE(a.empty()) << UB_GPU_BINARY << " holds no GPU code";
  // CMAKE_CUDA_ARCHITECTURES, its ';' made ',': "90,100", "90-real,100", "native"...; each number
  // must be there as machine code (a -virtual entry as PTX).
  std::stringstream list(UB_CUDA_ARCHITECTURES);
  std::string entry;
  int newest = 0;
  while (std::getline(list, entry, ',')) {
    if (entry.empty() || !std::isdigit(static_cast<unsigned char>(entry[0]))) continue;
    const int arch = std::stoi(entry);
    newest = std::max(newest, arch);
    if (entry.find("-virtual") != std::string::npos) {
      EXPECT_TRUE(a.ptx.contains(arch)) << "no PTX for compute_" << arch << ": " << a.text();
    } else {
      EXPECT_TRUE(a.machine_code.contains(arch)) << "no machine code for sm_" << arch << ": " << a.text();
    }
  }
  ASSERT_GT(newest, 0) << "no architecture in " << UB_CUDA_ARCHITECTURES;
  EXPECT_TRUE(a.runs_on(newest));
  EXPECT_FALSE(a.runs_on(*a.machine_code.begin() - 1) && a.ptx.empty()) << a.text();
#endif
}

TEST(Fatbin, AFileThatIsNotElfIsSaidSo) {
  EXPECT_THROW(read_fatbin_architectures(std::string(UB_DATA_DIR) + "/accelerators.json"), WorkError);
  EXPECT_THROW(read_fatbin_architectures("/nonexistent/upgradebench-gpu"), WorkError);
  // An ELF file without GPU code (this test's own binary) holds none.
  EXPECT_TRUE(read_fatbin_architectures("/proc/self/exe").empty());
}

TEST(Fatbin, MachineCodeRunsItsOwnArchitecturePtxEveryNewerOne) {
  FatbinArchitectures a;
  a.machine_code = {90, 100};
  EXPECT_TRUE(a.runs_on(90));
  EXPECT_FALSE(a.runs_on(80));
  EXPECT_FALSE(a.runs_on(120));
  EXPECT_TRUE(a.runs_on(103)) << "sm_100 machine code runs on a B300 (10.3): one major version";
  a.ptx = {100};
  EXPECT_TRUE(a.runs_on(120));
  EXPECT_FALSE(a.runs_on(89));
  EXPECT_EQ(a.text(), "sm_90, sm_100; PTX compute_100");
  FatbinArchitectures ampere;
  ampere.machine_code = {80};
  EXPECT_TRUE(ampere.runs_on(86));
  EXPECT_TRUE(ampere.runs_on(89));
  EXPECT_FALSE(ampere.runs_on(90)) << "machine code does not cross a major version";
}

// A GPU the build has no code for is refused before the first launch, naming the GPU, what the
// build holds and the option that adds it; a binary whose code could not be read is not refused.
TEST(Fatbin, AGpuWithoutCodeInTheBuildIsToldWhichOptionAddsIt) {
  FatbinArchitectures built;
  built.machine_code = {90, 100};
  EXPECT_NO_THROW(check_runs_on(built, 90, "GPU 0"));
  try {
    check_runs_on(built, 80, "mamf: GPU 0 (NVIDIA A100-SXM4-80GB)");
    FAIL() << "an A100 passed a build for sm_90 and sm_100";
  } catch (const WorkError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("mamf: GPU 0 (NVIDIA A100-SXM4-80GB) is sm_80 and this build holds GPU code for sm_90, sm_100 only"),
              std::string::npos) << m;
    EXPECT_NE(m.find("-DCMAKE_CUDA_ARCHITECTURES=\"90;100;80\""), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  EXPECT_NO_THROW(check_runs_on(FatbinArchitectures{}, 80, "GPU 0"));
#if defined(UB_GPU_BINARY) && defined(UB_DEFAULT_ARCHITECTURES)
  // The default build runs on every data-centre GPU CUDA 13 supports, and a later one through PTX.
  const FatbinArchitectures own = read_fatbin_architectures(UB_GPU_BINARY);
  for (const int cc : {80, 86, 89, 90, 100, 103, 120, 121}) EXPECT_TRUE(own.runs_on(cc)) << cc << ": " << own.text();
  EXPECT_TRUE(own.ptx.contains(120)) << own.text();
#endif
}

}  // namespace
}  // namespace ub::cli
