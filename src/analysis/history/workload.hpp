// What a run ran, as far as a series of the history may pool it. A trend over torch versions or a
// fleet of GPUs means something only when its runs differ in nothing but when, where and on which
// stack they ran: a 32-layer ZeRO-3 step on 8 GPUs and a 4-layer step on one are different
// workloads, not a slow and a fast run of one. The identity of a training step is its model, the
// layers it ran, the world size, the ZeRO stage, activation checkpointing, the offloaded optimizer,
// the precision, fp32 master weights or not, offloaded checkpoints, MLP tiles, loss chunks and the
// micro-batch; of attention, its heads, head size, batch, mask and dtype; of a collective, its
// world size and whether its calls were replayed from a CUDA graph; of a bandwidth run, its kernel;
// of another program's attention, collective or decomposition, what its header says of these, and
// which program timed it. The sequence length (or size) is the metric's own point, and the GPU
// model is the series' other half (trend.hpp, fleet.hpp).
#pragma once

#include <nlohmann/json.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "records/mamf_records.hpp"
#include "records/run_log.hpp"

namespace ub {

struct Workload {
  std::string text;        // "llama-3.1-8b, 4 of 32 layers, 1 GPU, ZeRO-0, bf16, batch 1"; "" when nothing tells runs apart
  int64_t world_size = 1;  // the GPUs of the job (a benchmark.py log of 8 ranks stores one GPU's name)
};

// From our context record: its command, config and world (the ranks of a job of several).
Workload workload_of_records(const std::string& command, const nlohmann::json& config, const nlohmann::json& world);

// From benchmark.py's sweep log header (gc, offload_optim, zero, world_size, batch_size, model_size).
Workload workload_of_sweep_log(const RunLog& log);

// From another program's log, its header: bench_flash_attn.py's attention shape and backend
// (nheads, nheads_kv, head_dim, causal, window, batch, dtype, backend); the torch.distributed
// peer's ranks; bench_decompose.py's levers, batch and ranks (backend, zero, gc, offload, liger,
// bs or batch, world_size).
Workload workload_of_peer_attention(const std::map<std::string, std::string>& header);
Workload workload_of_peer_nccl(int64_t world_size);
Workload workload_of_printout(const std::map<std::string, std::string>& header);

// A MAMF run's shape set, from the shapes it measured ("m 256-20480, n 4096, k 4096: 79 shapes"):
// a ceiling over other shapes is another figure, never a change of the GPU.
std::string mamf_shape_set(const std::vector<MamfShape>& shapes);

}  // namespace ub
