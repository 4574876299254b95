// The records of `nccl` (collective bandwidth): the configuration, the world the job ran on (it
// goes into the context record), and one `nccl` record per collective, dtype, size and in-place
// or not: the time per call of the slowest rank with its statistics, algbw and busbw
// (facts/collectives.hpp) and how many output elements were wrong when it was checked.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "facts/collectives.hpp"
#include "facts/dtype.hpp"
#include "records/fields.hpp"
#include "records/measurement_bounds.hpp"
#include "records/timing_policy.hpp"
#include "records/timing_record.hpp"

namespace ub {

struct NcclConfig {
  std::vector<Collective> collectives = {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter};
  std::vector<Dtype> dtypes = {Dtype::bf16};
  std::vector<int64_t> sizes;  // bytes, as nccl-tests names a point (facts/collectives.hpp)
  bool in_place = true, out_of_place = true;
  int root = 0;  // broadcast and reduce
  bool graph = false;  // each sample's calls captured once in a CUDA graph and replayed
  BenchmarkTiming timing{1, {10, 200, 0.0, 1.0, 0.01, 5, 0}};
  // UsageError for what cannot run on `world` ranks (a root outside it, a dtype NCCL lacks).
  void validate(int world) const;
};

// Calls of a collective timed together as one sample, back to back as a training step issues
// them: 4 GiB of it, 64 calls at most (64 up to 64 MiB, 4 at 1 GiB, 1 from 4 GiB), so that launch
// gaps and the events' resolution do not dominate and the GPUs stay busy between calls.
int calls_per_sample(int64_t bytes);

// One rank of the job, as it said at the rendezvous.
struct WorldRank {
  int rank = 0, local_rank = 0, device = 0;
  std::string host, gpu, uuid, pci_bus_id;
};

struct WorldFacts {
  std::string launcher;
  int size = 1, hosts = 1, gpus_per_host = 1;
  std::vector<WorldRank> ranks;
  // How rank 0's host links its GPUs, from NVML: for each pair, "NVLink xN", "PCIe switch", ...
  std::vector<std::vector<std::string>> topology;
  std::string nccl_version;
  std::map<std::string, std::string> nccl_env;  // the NCCL_* variables set
};

struct NcclRecord {
  int world_size = 1;
  Collective collective = Collective::all_reduce;
  std::string dtype;
  int64_t bytes = 0;  // the point's size (facts/collectives.hpp)
  int64_t send_count = 0, recv_count = 0;
  bool in_place = false;
  int root = 0;
  bool ok = false;
  std::string error;
  uint64_t wrong = 0;  // output elements not equal to the known result, over all ranks
  int calls_per_sample = 1;
  std::optional<TimeStats> time;  // ms per call, the slowest rank's
  int slowest_rank = 0;
  double algbw_gbps = 0, busbw_gbps = 0;
  TelemetrySummary telemetry;  // rank 0's GPU

  double time_us() const { return time ? time->ms.median * 1e3 : 0; }
};

void to_json(nlohmann::json& j, const NcclConfig& c);
void to_json(nlohmann::json& j, const WorldFacts& w);
void to_json(nlohmann::json& j, const NcclRecord& r);
NcclRecord read_nccl_record(const Fields& f);
// What names a point, in our records and the torch.distributed peer's lines alike: world_size,
// collective, dtype, bytes. WorkError naming an unknown collective.
void read_nccl_point_name(const Fields& f, NcclRecord& r);

}  // namespace ub
