// The accelerator catalog: published figures for every GPU the tool knows, read at run time from
// data/accelerators.json (installed with the binary), each figure with its source.
//
// Lookup is by exact id or exact alias (case and surrounding space ignored), never by substring:
// "B300" must not find "GB300" (torchtitan once reported 200% MFU on a B200 through such a match).
// An unknown name is an error that lists the closest known ids.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "facts/dtype.hpp"
#include "facts/figure.hpp"

namespace ub {

struct PublishedMamf {
  Figure tflops;
  std::string shape;     // MxNxK
  std::string software;  // e.g. "torch 2.7.1+cu128"
};

struct Accelerator {
  std::string id, name, vendor, architecture, status;
  std::optional<std::string> compute_capability;  // NVIDIA only
  std::vector<std::string> aliases;
  std::map<Dtype, Figure> peak_tflops;  // every Dtype present
  Figure memory_gb;                     // marketing capacity
  std::string memory_type;
  Figure device_total_gib;  // the total memory the driver reports (nvidia-smi), where it was read
  Figure bandwidth_tbps, power_w, max_sm_clock_mhz, last_level_cache_mib, interconnect_gbps;
  Figure sm_count;  // streaming multiprocessors enabled on the part (a GEMM's last wave spreads over them)
  std::optional<PublishedMamf> mamf_bf16, mamf_fp8;

  const Figure& peak(Dtype d) const { return peak_tflops.at(d); }
  // The published MAMF in `d` (bf16 or fp8), where the catalog has one.
  std::optional<double> published_mamf(Dtype d) const;
  // Achieved TFLOPS in `d` as a fraction of the dense peak (MFU); none when the peak is not published.
  std::optional<double> fraction_of_peak(std::optional<double> tflops, Dtype d) const;
  // The most TFLOPS in `d` any measurement on this accelerator can show: the dense peak and 10%
  // for boost clocks. A figure past it is a damaged or hand-edited line. None without a peak.
  std::optional<double> most_measurable_tflops(Dtype d) const;
  // The most TFLOPS of the model's FLOPs a whole training step in `d` can show, and what bounds
  // it: its matmuls run at best at the GPU's matmul ceiling and a step is more than matmuls, so
  // the published MAMF and 10% (another stack, other shapes) where the catalog has one, else
  // most_measurable_tflops. None without either.
  struct StepBound {
    double tflops = 0;
    std::string what;  // "matmul ceiling (MAMF 794.5 TFLOPS, published)" or "dense bf16 peak (989)"
  };
  std::optional<StepBound> most_step_tflops(Dtype d) const;
  // The most memory a measurement on this accelerator can show in use: its total (as reported,
  // else the datasheet's capacity) and 2%. None without a capacity figure.
  std::optional<double> most_measurable_gib() const;
  // The memory a training step can use, by the rule below; unknown without a capacity figure.
  std::optional<double> capacity_gib() const;
  // The rule applied to this accelerator, in words ("140.4 GiB reported - 0.53 GiB - 7% = 130.0").
  std::string capacity_basis() const;
};

// Usable capacity, one rule for every accelerator: the total the driver reports (read where it
// was measured; else the datasheet capacity taken as GiB, which the H200's matches to 0.4%: 141
// "GB" on the datasheet, 143771 MiB = 140.4 GiB from nvidia-smi), minus the CUDA context and the
// libraries' handles (0.53 GiB: on the H200 the device's own count beyond everything our training
// step holds, data/examples' sweep), minus 7% of the total kept back for the allocator's reserve
// against fragmentation (the ml-engineering guide budgets 130 GiB of the H200's 140.4:
// (140.4 - 0.53 - 130) / 140.4 = 7.0%).
inline constexpr double kCudaContextGib = 0.53;
inline constexpr double kAllocatorReserve = 0.07;

class Catalog {
 public:
  static Catalog load(const std::filesystem::path& file);
  // The same from the file's text (`file` names it in errors).
  static Catalog parse(const std::string& text, const std::filesystem::path& file);

  const std::vector<Accelerator>& all() const { return accelerators_; }
  const Accelerator* try_find(std::string_view name) const;
  // Throws UsageError("unknown GPU 'X'; closest known: a, b, c").
  const Accelerator& find(std::string_view name) const;
  // The description of a source id ("" when absent).
  std::string source_text(const std::string& id) const;
  const std::map<std::string, std::string>& sources() const { return sources_; }

 private:
  std::vector<Accelerator> accelerators_;
  std::map<std::string, std::string> sources_;
};

}  // namespace ub
