// `upgradebench env`: the stack fingerprint (GPU, driver, CUDA, cuBLASLt, cuDNN, NCCL, build) that
// every record carries. Without a GPU or driver it says so plainly and exits 0.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "report/format.hpp"

#ifdef UB_HAVE_CUDA
#include "gpu/fingerprint.hpp"
#include "gpu/nvml.hpp"
#endif

namespace ub::cli {

namespace {

using nlohmann::json;
using report::Align;

std::string text(const json& v) {
  if (v.is_null()) return "unknown";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return fmt::format("{:.1f}", v.get<double>());
  return v.dump();
}

void run(Context& ctx, const OutputOptions& out) {
  report::Document doc;
#ifdef UB_HAVE_CUDA
  std::string why;
  auto nvml = gpu::Nvml::open(&why);
  json fp = gpu::gather_fingerprint({}, nvml.get());
  if (!nvml) fp["nvml"] = why;
  for (auto& g : fp["gpus"]) {
    const Accelerator* a = ctx.catalog().try_find(g["name"].get<std::string>());
    g["catalog_id"] = a ? json(a->id) : json();
  }
  if (fp["gpus"].empty()) {
    doc.add().notes.push_back(fmt::format("No GPU here: {}.", fp.value("no_gpu", std::string("none visible"))));
  }
  for (const auto& g : fp["gpus"]) {
    auto& b = doc.add(fmt::format("GPU {}: {}", g["index"].get<int>(), g["name"].get<std::string>()));
    b.table.columns = {{"property", Align::left}, {"value", Align::left}};
    for (const char* k : {"uuid", "pci_bus_id", "compute_capability", "sm_count", "l2_mib",
                          "memory_gib", "max_sm_clock_mhz", "power_limit_w", "catalog_id"}) {
      if (g.contains(k)) b.table.add_row({k, text(g[k])});
    }
    if (g["catalog_id"].is_null()) {
      b.notes.push_back("Not in the catalog: MFU and spec ratios for it are N/A.");
    }
  }
  auto& s = doc.add("Software stack");
  s.table.columns = {{"component", Align::left}, {"version", Align::left}, {"loaded from", Align::left}};
  const json& st = fp["stack"];
  s.table.add_row({"driver", text(st["driver"]), ""});
  s.table.add_row({"CUDA driver API", text(st["cuda_driver_api"]), ""});
  s.table.add_row({"CUDA runtime", text(st["cuda_runtime"]), ""});
  for (const char* lib : {"cublaslt", "cudnn", "nccl"}) {
    const json& l = st[lib];
    s.table.add_row({lib, l["version"].is_null() ? "absent" : text(l["version"]),
                     l.value("path", l.value("absent", std::string()))});
  }
  if (fp.contains("nvml")) s.notes.push_back(fmt::format("NVML: {} (clocks and throttle state unknown)", text(fp["nvml"])));
  auto& bld = doc.add("Build");
  bld.table.columns = {{"item", Align::left}, {"value", Align::left}};
  for (const auto& [k, v] : fp["build"].items()) bld.table.add_row({k, text(v)});
  out.emit(doc, fp);
#else
  (void)ctx;
  doc.add().notes.push_back("This binary was built without CUDA (nvcc was not found at build time): "
                            "no GPU can be measured with it.");
  out.emit(doc, json{{"gpus", json::array()}, {"no_gpu", "built without CUDA"}});
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
