// Documents of the attention, decomposition and MAMF comparisons; see log_comparison_views.hpp.
#include "report/log_comparison_views.hpp"

#include <fmt/format.h>

#include "base/text.hpp"
#include "report/comparison_view.hpp"
#include "report/format.hpp"

namespace ub::report {

namespace {

// "Hardware ratios from the catalog" line, or why there is none.
std::string hardware_line(const std::string& old_gpu, const std::string& new_gpu, const HardwareRatios& h) {
  if (!h.known) {
    const std::string unknown = h.old_id.empty() && h.new_id.empty() ? fmt::format("'{}' and '{}' are", old_gpu, new_gpu)
                                : fmt::format("'{}' is", h.old_id.empty() ? old_gpu : new_gpu);
    return fmt::format("Hardware ratios: N/A ({} not in the catalog).", printable(unknown));
  }
  return fmt::format("Hardware ratios from the catalog ({} -> {}): peak bf16 {}, fp8 {}; published MAMF bf16 {}, "
                     "fp8 {}; HBM bandwidth {}.", h.old_id, h.new_id, ratio(h.peak_bf16), ratio(h.peak_fp8),
                     ratio(h.mamf_bf16), ratio(h.mamf_fp8), ratio(h.bandwidth));
}

}  // namespace

Document attention_comparison_document(const AttentionComparison& c) {
  Document doc;
  auto& b = doc.add(fmt::format("Attention: {} ({}) -> {} ({})", c.old_gpu, c.old_backend, c.new_gpu, c.new_backend));
  b.notes = c.provenance_notes;
  doc.data_tag = c.provenance.measured() ? "" : c.provenance.tag();
  b.notes.push_back(hardware_line(c.old_gpu, c.new_gpu, c.hardware));
  b.table.columns = {{"seqlen"}, {"old fwd TFLOPS"}, {"new fwd TFLOPS"}, {"fwd speedup"},
                     {"old fwd+bwd"}, {"new fwd+bwd"}, {"fwd+bwd speedup"}};
  for (const auto& r : c.rows) {
    b.table.add_row({fmt::format("{}", r.seqlen), num(r.old_fwd), num(r.new_fwd), ratio(r.fwd_speedup),
                     num(r.old_fwd_bwd), num(r.new_fwd_bwd), ratio(r.fwd_bwd_speedup)});
  }
  b.notes.push_back("One figure per point in these logs: the ratios carry no interval.");
  return doc;
}

Document decomposition_comparison_document(const DecompositionComparison& c) {
  Document doc;
  auto& b = doc.add(fmt::format("Step decomposition: {} -> {}", c.old_gpu, c.new_gpu));
  b.notes = c.provenance_notes;
  if (const std::string forced = forced_headline(c.warnings); !forced.empty()) b.notes.insert(b.notes.begin(), forced);
  doc.data_tag = c.provenance.measured() ? "" : c.provenance.tag();
  b.notes.push_back(hardware_line(c.old_gpu, c.new_gpu, c.hardware));
  if (c.old_step_ms) b.notes.push_back(fmt::format("{}: wall step {} ms", printable(c.old_path), *c.old_step_ms));
  if (c.new_step_ms) b.notes.push_back(fmt::format("{}: wall step {} ms", printable(c.new_path), *c.new_step_ms));
  b.table.columns = {{"bucket", Align::left}, {"old ms"}, {"new ms"}, {"speedup"}, {"old TFLOPS"}, {"new TFLOPS"}};
  for (const auto& r : c.rows) {
    b.table.add_row({r.bucket, num(r.old_ms), num(r.new_ms), ratio(r.speedup), num(r.old_tflops), num(r.new_tflops)});
  }
  b.notes.push_back(fmt::format("Buckets split one {}wall-clock step (bench_decompose.py's method): their speedups "
                                "show which part follows compute and which follows bandwidth. No interval: one figure "
                                "each.", c.provenance.measured() ? "measured " : ""));
  for (const std::string& w : c.warnings) b.notes.push_back(w);
  return doc;
}

Document mamf_comparison_document(const MamfComparison& c) {
  Document doc;
  const auto side = [](const std::string& gpu, const std::string& dtype, const std::string& format) {
    return fmt::format("{} ({}{})", gpu.empty() ? "?" : gpu, dtype.empty() ? "" : dtype + ", ", format);
  };
  auto& b = doc.add(fmt::format("MAMF: {} -> {}{}", side(c.old_gpu, c.old_dtype, c.old_format),
                                side(c.new_gpu, c.new_dtype, c.new_format), c.same_gpu ? ", same GPU" : ""));
  b.notes = c.provenance_notes;
  doc.data_tag = c.provenance.measured() ? "" : c.provenance.tag();
  b.notes.push_back(hardware_line(c.old_gpu, c.new_gpu, c.hardware));
  b.table.columns = {{"best", Align::left}, {"old TFLOPS"}, {"@ old MxNxK", Align::left}, {"new TFLOPS"},
                     {"@ new MxNxK", Align::left}, {"new/old"}};
  for (const auto& r : c.rows) {
    b.table.add_row({r.best, num(r.old_tflops), r.old_shape.value_or("-"), num(r.new_tflops), r.new_shape.value_or("-"),
                     ratio(r.ratio)});
  }
  b.notes.push_back(fmt::format("{} shapes (old), {} shapes (new): each ceiling is its run's best shape, which may be "
                                "another shape on each GPU; the means are over every shape of each run.",
                                c.old_shapes, c.new_shapes));
  for (const std::string& n : c.notes) b.notes.push_back(n);
  return doc;
}

Document bandwidth_comparison_document(const BandwidthComparison& c) {
  Document doc;
  auto& b = doc.add(fmt::format("HBM bandwidth: {} -> {}", c.old_gpu.empty() ? "?" : c.old_gpu,
                                c.new_gpu.empty() ? "?" : c.new_gpu));
  b.notes = c.provenance_notes;
  doc.data_tag = c.provenance.measured() ? "" : c.provenance.tag();
  b.notes.push_back(hardware_line(c.old_gpu, c.new_gpu, c.hardware));
  b.table.columns = {{"op", Align::left}, {"size"}, {"where", Align::left}, {"old GB/s"}, {"new GB/s"}, {"new/old"}};
  for (const BandwidthComparisonRow& r : c.rows) {
    b.table.add_row({r.op, binary_size_text(r.bytes), r.in_l2 ? "L2" : "HBM", num(r.old_gbps), num(r.new_gbps), ratio(r.ratio)});
  }
  b.notes.push_back(fmt::format("GB/s: the median of each size's samples, each result checked. The best copy beyond L2, "
                                "new/old: {}; the datasheet's HBM ratio: {}.", ratio(c.hbm_copy_ratio), ratio(c.hardware.bandwidth)));
  return doc;
}

}  // namespace ub::report
