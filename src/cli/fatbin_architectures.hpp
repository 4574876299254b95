// Which GPU architectures a binary holds code for, read from its own bytes: nvcc puts every
// kernel's machine code (a cubin per sm_XX) and PTX (per compute_XX, which the driver compiles at
// load time for any newer GPU) into the ELF section .nv_fatbin. A GPU command checks at start
// that its GPU is covered (machine code for its architecture, or PTX of one at or below it), so an
// A100 meeting a build without sm_80 is told which build option adds it, before the first launch
// fails; `env` lists what the build holds; CI reads the built binary (cuobjdump is not on the CI
// machine) and fails if an architecture of the default list is missing.
//
// The layout, as nvcc 13 writes it: a container header (magic 0xBA55ED50, u16 version, u16
// header size, u64 size of the entries), then entries of u16 kind (1 PTX, 2 ELF), u16 version,
// u32 header size, u64 payload size, ..., u32 architecture (90 for sm_90) at byte 28 of the header.
#pragma once

#include <filesystem>
#include <set>
#include <string>

namespace ub::cli {

struct FatbinArchitectures {
  std::set<int> machine_code;  // sm_XX as XX (90, 100, ...)
  std::set<int> ptx;           // compute_XX as XX
  bool empty() const { return machine_code.empty() && ptx.empty(); }
  std::string text() const;    // "sm_90, sm_100; PTX compute_100"
  // Whether a GPU of compute capability `cc` (x 10) can run: machine code of its major version at
  // or below its minor (CUDA's binary compatibility: sm_80 runs on 8.6 and 8.9), or PTX at or below it.
  bool runs_on(int cc) const;
};

// What this process's own binary holds (read once; empty where it cannot be read).
const FatbinArchitectures& own_architectures();

// WorkError when `built` holds nothing a GPU of compute capability `cc` (x 10) runs, naming the
// GPU, what the build holds and the build option that adds the GPU's architecture. Nothing is
// checked when `built` is empty (a binary whose code could not be read).
void check_runs_on(const FatbinArchitectures& built, int cc, const std::string& gpu);

// WorkError when the file cannot be read or is not an ELF64 file; an ELF file without the section
// has none.
FatbinArchitectures read_fatbin_architectures(const std::filesystem::path& elf);

}  // namespace ub::cli
