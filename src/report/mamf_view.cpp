// The view of `mamf` records; see measurement_views.hpp.
#include <fmt/format.h>

#include "base/text.hpp"
#include "base/units.hpp"
#include "report/format.hpp"
#include "report/measurement_views.hpp"

namespace ub::report {

namespace {

// The published MAMF of `gpu` in `dtype` (bf16 and fp8 are published), or none.
std::optional<double> published_mamf(const Accelerator& gpu, Dtype dtype) {
  const auto& pub = dtype == Dtype::fp8 ? gpu.mamf_fp8 : dtype == Dtype::bf16 ? gpu.mamf_bf16 : std::nullopt;
  return pub ? pub->tflops.get() : std::nullopt;
}

}  // namespace

View mamf_view(const std::vector<OnGpu<MamfOutcome>>& runs, Dtype dtype, bool search, const Catalog& catalog) {
  View v;
  const bool several = runs.size() > 1;
  auto& shapes = v.doc.add(fmt::format("{} matmul, TFLOPS = 2*M*N*K / time", to_string(dtype)));
  shapes.table.columns = {{"GPU"}, {"MxNxK", Align::left}, {"mean"}, {"median"}, {"max"}, {"status", Align::left}};
  auto& per_gpu = v.doc.add("Per GPU");
  per_gpu.table.columns = {{"GPU"}, {"name", Align::left}, {"shapes"}, {"best median"}, {"@ MxNxK", Align::left},
                           {"best max"}, {"arith. mean"}, {"geo. mean"}, {"of peak"}, {"of published MAMF"}, {"time s"}};
  for (const auto& [device, gpu, r] : runs) {
    for (const MamfShape& sh : r.shapes) {
      shapes.table.add_row({fmt::format("{}", device), sh.shape(), sh.ok ? num(sh.mean_tflops) : "-",
                            sh.ok ? num(sh.median_tflops) : "-", sh.ok ? num(sh.max_tflops) : "-",
                            sh.ok ? "ok" : sh.error});
    }
    const MamfSummary sum = r.summary(device);
    const Accelerator* a = catalog.try_find(gpu);
    const std::optional<double> best = sum.best_median ? std::optional<double>(sum.best_median->tflops) : std::nullopt;
    const std::optional<double> of_peak = a ? a->fraction_of_peak(best, dtype) : std::nullopt;
    const std::optional<double> of_mamf = a ? fraction_of(best, published_mamf(*a, dtype)) : std::nullopt;
    per_gpu.table.add_row({fmt::format("{}", device), gpu, fmt::format("{}", sum.shapes), best ? num(best) : "-",
                           sum.best_median ? sum.best_median->shape : "-",
                           sum.best_max ? num(sum.best_max->tflops) : "-", num(sum.arithmetic_of_medians),
                           num(sum.geometric_of_medians), percent(of_peak), percent(of_mamf), num(sum.elapsed_s)});
    nlohmann::json sj = sum;
    sj["name"] = gpu;
    sj["fraction_of_peak"] = or_null(of_peak);
    sj["fraction_of_published_mamf"] = or_null(of_mamf);
    v.json.push_back(sj);
    if (sum.step_tflops) {
      per_gpu.notes.push_back(fmt::format("GPU {}: the step's products as the step runs them (each shape's median time "
                                          "times its count): {} TFLOPS.", device, num(sum.step_tflops)));
    }
    if (search) {
      per_gpu.notes.push_back(fmt::format("GPU {}: search looked at {} shapes in {:.1f} s.", device, r.shapes_screened,
                                          r.elapsed_s));
    }
    for (const std::string& line : split(r.footer(), '\n')) {
      per_gpu.notes.push_back(several ? fmt::format("GPU {}: {}", device, line) : line);
    }
  }
  return v;
}

}  // namespace ub::report
