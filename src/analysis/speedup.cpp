// Speedups with intervals; the method is stated in speedup.hpp.
#include "analysis/speedup.hpp"

namespace ub {

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::faster: return "FASTER";
    case Verdict::slower: return "SLOWER";
    case Verdict::same: return "SAME";
    case Verdict::ambiguous: return "AMBIGUOUS";
    case Verdict::few_samples: return "FEW STEPS";
  }
  return "AMBIGUOUS";
}

Speedup speedup_of(const Summary& o, const Summary& n, double band) {
  Speedup s = speedup_in(o.median / n.median, o.median_low / n.median_high, o.median_high / n.median_low, band);
  if (o.n < kSamplesFor95 || n.n < kSamplesFor95) s.verdict = Verdict::few_samples;
  return s;
}

Speedup speedup_in(double ratio, double low, double high, double band) {
  Speedup s;
  s.ratio = ratio, s.low = low, s.high = high;
  if (s.low > 1.0) s.verdict = Verdict::faster;
  else if (s.high < 1.0) s.verdict = Verdict::slower;
  else if (s.low >= 1.0 - band && s.high <= 1.0 + band) s.verdict = Verdict::same;
  else s.verdict = Verdict::ambiguous;
  return s;
}

}  // namespace ub
