// One rule for a step read twice in one point, in the training readers: the line pasted twice, a
// log concatenated with itself, would count its step twice in the median and the interval. The
// same step with the same time is counted once and the warnings name both lines; the same step
// with another time is two measurements claiming one step, and which one is right no reader can
// tell: an error naming both. Bounded: past kTracked steps (a file far longer than any run)
// repeats are no longer looked for.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "base/error.hpp"

namespace ub {

class RepeatedSteps {
 public:
  // True the first time step `step` of the point (`seqlen`, of run `run` of the file) is read at
  // `line`; false after, with a warning "<where>: step N of seqlen S read again (first at line L):
  // counted once". WorkError when the step read again took another `ms` than the first time.
  bool first_time(int64_t seqlen, size_t run, int64_t step, double ms, int line, const std::string& where,
                  std::vector<std::string>& warnings) {
    if (seen_.size() >= kTracked) return true;
    const auto [it, fresh] = seen_.try_emplace(std::tuple{seqlen, run, step}, First{line, ms});
    if (fresh) return true;
    if (it->second.ms != ms) {
      throw WorkError(fmt::format("{}: step {} of seqlen {} again, in {} ms where line {} says {} ms: one step, two "
                                  "measurements", where, step, seqlen, ms, it->second.line, it->second.ms));
    }
    // Named up to kNamed times; a file of a million copies says so once, in bounded memory.
    if (++repeats_ <= kNamed) {
      warnings.push_back(fmt::format("{}: step {} of seqlen {} read again (first at line {}): counted once", where, step,
                                     seqlen, it->second.line));
    } else if (repeats_ == kNamed + 1) {
      warnings.push_back(fmt::format("{}: more steps read again from here on: each counted once, not named", where));
    }
    return false;
  }
  // A point measured again from its start (a block or a run repeated): its steps are new.
  void forget(int64_t seqlen, size_t run) {
    seen_.erase(seen_.lower_bound(std::tuple{seqlen, run, INT64_MIN}), seen_.upper_bound(std::tuple{seqlen, run, INT64_MAX}));
  }

 private:
  static constexpr size_t kTracked = size_t{1} << 14;
  static constexpr size_t kNamed = 20;
  size_t repeats_ = 0;
  struct First {
    int line;
    double ms;
  };
  std::map<std::tuple<int64_t, size_t, int64_t>, First> seen_;
};

}  // namespace ub
