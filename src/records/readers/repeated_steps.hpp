// One rule for a step read twice in one point, in the training readers: the line pasted twice, a
// log concatenated with itself, would count its step twice in the median and the interval. The
// first is kept and the warnings name both lines. Bounded: past kTracked steps (a file far
// longer than any run) repeats are no longer looked for.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace ub {

class RepeatedSteps {
 public:
  // True the first time step `step` of the point (`seqlen`, of run `run` of the file) is read at
  // `line`; false after, with a warning "<where>: step N of seqlen S read again (first at line L): counted once".
  bool first_time(int64_t seqlen, size_t run, int64_t step, int line, const std::string& where,
                  std::vector<std::string>& warnings) {
    if (lines_.size() >= kTracked) return true;
    const auto [it, fresh] = lines_.try_emplace(std::tuple{seqlen, run, step}, line);
    if (!fresh) {
      warnings.push_back(fmt::format("{}: step {} of seqlen {} read again (first at line {}): counted once", where, step,
                                     seqlen, it->second));
    }
    return fresh;
  }
  // A point measured again from its start (a block or a run repeated): its steps are new.
  void forget(int64_t seqlen, size_t run) {
    lines_.erase(lines_.lower_bound(std::tuple{seqlen, run, INT64_MIN}), lines_.upper_bound(std::tuple{seqlen, run, INT64_MAX}));
  }

 private:
  static constexpr size_t kTracked = size_t{1} << 14;
  std::map<std::tuple<int64_t, size_t, int64_t>, int> lines_;
};

}  // namespace ub
