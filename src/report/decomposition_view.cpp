// The view of `decompose` records; see measurement_views.hpp.
#include <fmt/format.h>

#include "report/format.hpp"
#include "report/measurement_views.hpp"

namespace ub::report {

namespace {

std::string ms(double v) { return num(v, 2); }

}  // namespace

void add_decomposition_block(Document& doc, const DecompositionRecord& r) {
  const std::string rank = !r.world_size || *r.world_size == 1 ? ""
                           : r.rank     ? fmt::format(", rank {} of {}", *r.rank, *r.world_size)
                                        : fmt::format(", one of {} ranks", *r.world_size);
  auto& b = doc.add(fmt::format("{} (GPU {}{}{}): step {} of {}, {:.2f} ms", r.file, r.device,
                                r.gpu.empty() ? "" : ", " + r.gpu, rank, r.step, r.steps, r.step_ms));
  b.table.columns = {{"bucket", Align::left}, {"ms"}, {"share"}, {"over the steps", Align::left}, {"achieved"},
                     {"of ceiling"}};
  for (const DecompositionBucketRecord& x : r.buckets) {
    const std::string rate = x.tflops ? num(x.tflops) + " TFLOPS" : x.gbps ? num(x.gbps, 0) + " GB/s" : "-";
    b.table.add_row({x.name, ms(x.ms), percent(x.share), fmt::format("{}-{}", ms(x.min_ms), ms(x.max_ms)), rate,
                     x.of_ceiling ? percent(x.of_ceiling) + " " + x.ceiling : "-"});
  }
  b.table.add_row({"step", ms(r.step_ms), "100.0%", "", "", ""});
  if (r.wall_step_ms) {
    b.notes.push_back(fmt::format("The same step with profiling off: {} ms (median of the timed steps); profiling "
                                  "added {:+.1f}%.", ms(*r.wall_step_ms), 100 * (r.step_ms / *r.wall_step_ms - 1)));
  }
  b.notes.push_back(fmt::format("Steps: {}; the median step is shown, each bucket's range over the steps beside it.",
                                r.steps_from));
  b.notes.push_back(fmt::format("Collectives ran {} ms in that step, {} ms of it under compute kernels; the exposed "
                                "rest is the communication bucket.", ms(r.communication_ms),
                                ms(r.communication_overlapped_ms)));
  b.notes.push_back("Compute buckets share the time some compute kernel runs by their kernel time; copies and "
                    "collectives count where no compute kernel runs; idle is the rest (docs/decompose.md).");
  if (!r.unclassified.empty()) {
    std::string list;
    for (size_t i = 0; i < r.unclassified.size() && i < 5; ++i) {
      const auto& k = r.unclassified[i];
      list += fmt::format("{}{} ({} ms, {}x)", i ? "; " : "", k.name.substr(0, 90), ms(k.ms), k.count);
    }
    b.notes.push_back("Kernels no rule classified (in \"other compute\"; classify them with --classes FILE): " + list);
  }
}

}  // namespace ub::report
