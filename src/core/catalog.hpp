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

#include "core/dtype.hpp"
#include "core/figure.hpp"

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
  Figure usable_gib;  // what the device reports as total memory
  Figure budget_gib;  // a working budget for memory fits (allocator overhead left out)
  Figure bandwidth_tbps, power_w, max_sm_clock_mhz, last_level_cache_mib, interconnect_gbps;
  std::optional<PublishedMamf> mamf_bf16, mamf_fp8;

  const Figure& peak(Dtype d) const { return peak_tflops.at(d); }
  // Capacity for memory fits: the budget, else the device-reported total, else unknown.
  std::optional<double> capacity_gib() const;
};

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
