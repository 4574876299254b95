// `upgradebench env`: the stack fingerprint (GPU, driver, CUDA, cuBLASLt, cuDNN, NCCL, build) that
// every record carries, the GPU code this build holds (read from the binary itself) and, per GPU,
// whether it runs there and what each feature needs. Without a GPU or driver it says so plainly
// and exits 0.
#include <fmt/format.h>

#include <filesystem>

#include "cli/commands.hpp"
#include "cli/fatbin_architectures.hpp"
#include "cli/gpu_binary.hpp"
#include "cli/output.hpp"
#include "facts/gpu_features.hpp"
#include "report/format.hpp"

#ifdef UB_HAVE_CUDA
#include "cli/gpu_workers.hpp"
#endif

namespace ub::cli {

namespace {

using report::Align;

#ifdef UB_HAVE_CUDA
std::string text(const std::optional<std::string>& v) { return v.value_or("unknown"); }
std::string text(const std::optional<double>& v) { return v ? fmt::format("{:.1f}", *v) : "unknown"; }
std::string text(const std::optional<int>& v) { return v ? std::to_string(*v) : "unknown"; }
#endif

void run(Context& ctx, const OutputOptions& out) {
  report::Document doc;
#ifdef UB_HAVE_CUDA
  Fingerprint fp = machine_fingerprint(ctx, {});
  // What this binary holds, read from its own bytes (cli/fatbin_architectures.hpp).
  const FatbinArchitectures& own = own_architectures();
  fp.build["gpu_code"] = own.text();
  if (fp.gpus.empty()) doc.add().notes.push_back(fmt::format("No GPU here: {}.", fp.no_gpu.value_or("none visible")));
  for (const GpuFacts& g : fp.gpus) {
    auto& b = doc.add(fmt::format("GPU {}: {}", g.index, g.name));
    b.table.columns = {{"property", Align::left}, {"value", Align::left}};
    const std::pair<const char*, std::string> rows[] = {
        {"uuid", text(g.uuid)},       {"pci_bus_id", text(g.pci_bus_id)}, {"compute_capability", text(g.compute_capability)},
        {"sm_count", text(g.sm_count)}, {"l2_mib", text(g.l2_mib)},       {"memory_gib", text(g.memory_gib)},
        {"max_sm_clock_mhz", text(g.max_sm_clock_mhz)}, {"power_limit_w", text(g.power_limit_w)},
        {"catalog_id", text(g.catalog_id)}};
    for (const auto& [k, v] : rows) b.table.add_row({k, v});
    if (!g.catalog_id) b.notes.push_back("Not in the catalog: MFU and spec ratios for it are N/A.");
    // What the commands can run on it (facts/gpu_features.hpp), said rather than found out at launch.
    const auto cc = g.compute_capability ? parse_compute_capability(*g.compute_capability) : std::nullopt;
    if (!cc) continue;
    auto& f = doc.add(fmt::format("GPU {}: what runs on compute capability {}", g.index, cc->text()));
    f.table.columns = {{"feature", Align::left}, {"needs"}, {"here", Align::left}};
    f.table.add_row({"this build's GPU code", "-",
                     own.empty() || own.runs_on(cc->value())
                         ? fmt::format("yes ({})", own.text())
                         : fmt::format("no: {} only; rebuild with -DCMAKE_CUDA_ARCHITECTURES including {}{}", own.text(),
                                       cc->major, cc->minor)});
    for (const FeatureRow& r : gpu_features()) {
      const auto why = missing_feature(r.feature, *cc);
      f.table.add_row({r.name, fmt::format("{}.{}", r.needs / 10, r.needs % 10),
                       !why ? "yes" : r.fallback.empty() ? "no" : "no: " + r.fallback + " runs instead"});
    }
  }
  auto& s = doc.add("Software stack");
  s.table.columns = {{"component", Align::left}, {"version", Align::left}, {"loaded from", Align::left}};
  const std::pair<const char*, const char*> components[] = {{"driver", "driver"}, {"cuda_driver_api", "CUDA driver API"},
                                                            {"cuda_runtime", "CUDA runtime"}, {"cublaslt", "cublaslt"},
                                                            {"cudnn", "cudnn"}, {"nccl", "nccl"}};
  for (const auto& [key, name] : components) {
    const StackEntry& e = fp.stack.at(key);
    const bool library = !e.path.empty() || !e.absent.empty();
    s.table.add_row({name, library && !e.version ? "absent" : text(e.version), e.path.empty() ? e.absent : e.path});
  }
  if (fp.nvml) s.notes.push_back(fmt::format("NVML: {} (clocks and throttle state unknown)", *fp.nvml));
  auto& bld = doc.add("Build");
  bld.table.columns = {{"item", Align::left}, {"value", Align::left}};
  for (const auto& [k, v] : fp.build) bld.table.add_row({k, v});
  out.emit(doc, fp);
#else
  if (has_gpu_binary()) run_in_gpu_binary(ctx, "env");
  doc.add().notes.push_back("This build has no GPU side (nvcc was not found at build time): "
                            "no GPU can be measured with it.");
  out.emit(doc, nlohmann::json{{"gpus", nlohmann::json::array()}, {"no_gpu", "built without CUDA"}});
#endif
}

}  // namespace

void register_env(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<OutputOptions>();
  auto* cmd = app.add_subcommand("env", "Stack fingerprint: GPU, driver, CUDA, cuBLASLt, cuDNN, "
                                        "NCCL, clocks, power limit, build");
  o->add_to(*cmd);
  cmd->callback([&ctx, o] { run(ctx, *o); });
}

}  // namespace ub::cli
