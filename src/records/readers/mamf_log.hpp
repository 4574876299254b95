// A matmul-ceiling run as `compare` reads it: mamf-finder.py's output (its header: `** Dtype:
// torch.bfloat16`, the device line `_CudaDeviceProperties(name='NVIDIA H200', ..., uuid=...)`, the
// critical software versions; per-shape `N | <x>(mean) <x>(median) <x>(max) @ MxNxK` lines; the
// `mean: / median: / max:` footer, the shape ranges, the arithmetic and geometric means) or our
// `mamf` records (the shapes measured in full; --search's quick looks are left out).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/line_source.hpp"
#include "records/mamf_result.hpp"
#include "records/provenance.hpp"

namespace ub {

struct MamfLog {
  std::string path, gpu, format;  // format: "mamf-finder" or "upgradebench"
  std::string dtype;              // our name (bf16, fp8, ...), or as the file wrote it; "" unknown
  std::string gpu_uuid;           // "" unknown
  std::string ranges;             // mamf-finder's shape ranges ("m=[0, 20480, 256] | n=[4096] | k=[4096]")
  std::vector<std::pair<std::string, std::string>> stack;  // software versions as the file names them
  MamfOutcome outcome;            // the shapes; the footer's best when only it is there
  std::optional<MamfShape> footer_mean, footer_median, footer_max;
  std::optional<double> arithmetic_mean, geometric_mean;  // of the shapes' mean TFLOPS
  std::vector<std::string> warnings;
  Provenance provenance;  // what the numbers are (records/provenance.hpp)

  // The best shape by `by`: from the shapes, else from the footer.
  std::optional<MamfShape> best(MamfOutcome::By by) const;
};

MamfLog read_mamf_log(const LineSource& t);

}  // namespace ub
