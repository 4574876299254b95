// How fast a GPU runs matrix products, shape by shape: the part of `predict` that turns "the new
// GPU has 2.28x the peak" into the time of the GEMMs one training step really runs. Written so
// that a reader can check one shape by hand (docs/predict.md works one through):
//
//   compute ceiling C  the GPU's achievable matmul rate in the dtype: MAMF measured on it, else its
//                      published MAMF, else its peak times the efficiency (MAMF / peak) published for
//                      its architecture's other parts (the library's maturity on that architecture),
//                      else times the other GPU's efficiency
//   wave efficiency w  tiles / (waves x SMs), tiles = ceil(m / 128) x ceil(n / 256): the output tile
//                      of one SM in cuBLAS's large bf16 kernels on Hopper and Blackwell; a last wave
//                      that fills few SMs leaves the rest idle (1 when an SM count is unknown)
//   time of M x N x K  max(2MNK / (C x w), bytes / HBM), bytes = 2 (MK + KN + MN) in bf16: the roofline
//                      with the achievable ceiling; below the ridge point C / HBM the product is
//                      bandwidth-bound and follows HBM's ratio, above it compute's
//
// Where a shape was timed (`mamf --shapes-of` records), the measurement replaces the model on that
// GPU; timed on both, the shape's ratio is measured.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "facts/catalog.hpp"
#include "facts/dtype.hpp"
#include "facts/step_gemms.hpp"

namespace ub {

// One product timed on a GPU: its median time per call.
struct ShapeTime {
  int64_t m = 0, n = 0, k = 0;
  double ms = 0;
};

// A GPU's achievable matmul rate in one dtype, with the interval it carries and its source.
struct ComputeCeiling {
  double tflops = 0, low = 0, high = 0;
  double efficiency = 0;   // of the dense peak, where the peak is known (0 otherwise)
  bool measured = false;   // by our or mamf-finder.py's run on this GPU
  bool published = false;  // the catalog's MAMF of this GPU
  std::string source;
};

// The published efficiencies (MAMF / peak) of the catalog's GPUs of one vendor in `d`, and of
// one architecture; empty when none is published.
std::vector<double> published_efficiencies(const Catalog& cat, const std::string& vendor, Dtype d,
                                           const std::string& architecture = "");

// `g`'s ceiling in `d`: `measured_mamf` (TFLOPS, best median) where given, else the catalog's MAMF,
// else the peak at its architecture's published efficiency (the median, the spread of those as
// the interval), else at `other`'s efficiency within the vendor's spread. nullopt when the peak
// is unknown and nothing was measured.
std::optional<ComputeCeiling> compute_ceiling(const Accelerator& g, Dtype d, std::optional<double> measured_mamf,
                                              const Catalog* cat, const Accelerator& other,
                                              std::optional<double> other_mamf);

// One GPU as the shape model sees it.
struct GemmGpu {
  double compute_tflops = 0;  // the ceiling's point
  double hbm_tbps = 0;
  std::optional<int64_t> sms;
  std::vector<ShapeTime> timed;
};

// tiles / (waves x SMs) for an m x n output; 1 when `sms` is unknown.
double wave_efficiency(int64_t m, int64_t n, std::optional<int64_t> sms);

// One call of `g`'s product on `gpu` by the roofline above, in ms (`wave` false: without the wave term).
double modelled_ms(const StepGemm& g, const GemmGpu& gpu, bool wave = true);

// The products of a step on two GPUs: each shape's time (measured where timed, else modelled)
// times its count, summed on each GPU.
struct GemmMix {
  double old_ms = 0, new_ms = 0;  // the step's products on each GPU
  double old_tflop = 0;           // their work
  int shapes = 0, timed_old = 0, timed_both = 0;
  double ratio() const { return new_ms > 0 ? old_ms / new_ms : 0; }
  double ridge_share = 0;  // of the old GPU's time, in products below the old GPU's ridge point
};
GemmMix gemm_mix(const std::vector<StepGemm>& gemms, const GemmGpu& old_gpu, const GemmGpu& new_gpu);

}  // namespace ub
