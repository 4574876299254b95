// The context record that opens every run in a record file: what ran (command, argv, the
// command's whole configuration), when and where (UTC date, host), on which GPUs, and on which
// software (the stack fingerprint: driver, CUDA, each library with the file it was loaded from,
// the build). `compare` reads the stack to refuse or flag comparisons across different software.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/line_source.hpp"
#include "records/fields.hpp"

namespace ub {

// A GPU's index on its machine, at most: the history stores it as a 32-bit integer, and no
// machine has more than a few dozen. Read records and stored runs are held to it.
inline constexpr int64_t kMaxGpuIndex = 65535;

// One GPU of the run, as the driver and NVML describe it. Peers' records may carry only a name.
struct GpuFacts {
  int index = 0;
  std::string name;  // as the driver reports it ("NVIDIA H200")
  std::optional<std::string> uuid, pci_bus_id, compute_capability, catalog_id;
  std::optional<int> sm_count;
  std::optional<double> l2_mib, memory_gib, max_sm_clock_mhz, power_limit_w;
};

// One component of the software stack: a version (null when absent), and for a library opened
// at run time the file it came from, or why it is absent.
struct StackEntry {
  std::optional<std::string> version;
  std::string path, absent;
};

struct Fingerprint {
  std::vector<GpuFacts> gpus;
  std::map<std::string, StackEntry> stack;  // driver, cuda_runtime, cublaslt, cudnn, nccl, torch, ...
  std::map<std::string, std::string> build;  // type, cxx_compiler, cuda_compiler, cuda_architectures
  std::optional<std::string> no_gpu;         // why there is none
  std::optional<std::string> nvml;           // why NVML could not be opened
};

struct ContextRecord {
  std::string schema, tool, command;
  std::vector<std::string> argv;
  std::string date, host;
  Fingerprint fingerprint;
  nlohmann::json config = nlohmann::json::object();  // the command's configuration record
  std::optional<std::string> provenance;             // what the numbers are, when not measurements
  nlohmann::json world;                              // a job of several ranks: who ran where (WorldFacts)

  // The GPU of a one-GPU run (the first listed); throws WorkError at `where` when none is named.
  const GpuFacts& first_gpu(const std::string& where) const;
};

// A context record for this process: schema, tool version, UTC date and host filled in.
ContextRecord make_context(const std::string& command, const std::vector<std::string>& argv,
                           Fingerprint fingerprint, nlohmann::json config);

void to_json(nlohmann::json& j, const GpuFacts& g);
void to_json(nlohmann::json& j, const Fingerprint& f);
void to_json(nlohmann::json& j, const ContextRecord& c);
ContextRecord read_context(const Fields& f);

// The GPUs the context records of `t` name (our records; a peer's log names none): the model the
// first names, their UUIDs, and whether one of them had none.
struct RecordGpus {
  std::string first_name;
  std::set<std::string> uuids;
  std::set<std::string> catalog_ids;  // the catalog's entries the measuring machine found for them
  bool unnamed = false;
  std::map<std::string, std::set<std::string>> stack;  // each component's versions, as the records name them
};
RecordGpus record_gpus(const LineSource& t);
Fingerprint read_fingerprint(const Fields& f);

}  // namespace ub
