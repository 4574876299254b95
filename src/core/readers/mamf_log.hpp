// A matmul-ceiling run as `compare` reads it: mamf-finder.py's output (per-shape
// `N | <x>(mean) <x>(median) <x>(max) @ MxNxK` lines and the `mean: / median: / max:` footer) or
// our `mamf` records (the shapes measured in full; --search's quick looks are left out).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/mamf_result.hpp"
#include "core/readers/text_lines.hpp"

namespace ub {

struct MamfLog {
  std::string path, gpu, dtype, format;  // format: "mamf-finder" or "upgradebench"
  MamfOutcome outcome;                   // the shapes; the footer's best when only it is there
  std::optional<MamfShape> footer_mean, footer_median, footer_max;
  std::vector<std::string> warnings;

  // The best shape by `by`: from the shapes, else from the footer.
  std::optional<MamfShape> best(MamfOutcome::By by) const;
};

MamfLog read_mamf_log(const TextLines& t);

}  // namespace ub
