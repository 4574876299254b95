// What every training run that reads goes through next, for the records and sweep-log fuzz
// targets: each point's statistics (records/run_log.hpp) and the limits no GPU passes
// (analysis/run_limits.hpp: steps, warm-up steps too, against the catalog's GPU of the run).
#pragma once

#include "analysis/run_limits.hpp"
#include "input_file.hpp"
#include "facts/catalog.hpp"
#include "records/run_log.hpp"

inline void check_run(const ub::RunLog& r) {
  for (const ub::RunPoint& p : r.points) {
    if (p.status == ub::PointStatus::ok) (void)ub::point_stats(r, p);
  }
  static const ub::Catalog catalog = ub::Catalog::load(fuzz_data_dir() + "/accelerators.json");
  ub::refuse_impossible_points(r, catalog.try_find(r.gpu), {});
}
