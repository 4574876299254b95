// What the points of a measuring run came to: measured (checked, then timed), wrong (the result
// failed its check against the reference: nothing was timed), failed (could not be prepared or
// run) and out of memory. The driver counts them as it writes each point's record; the command
// shell ends the run by them: a wrong point fails the command, after every record is written.
#pragma once

namespace ub {

struct PointCounts {
  int measured = 0, wrong = 0, failed = 0, out_of_memory = 0;

  int total() const { return measured + wrong + failed + out_of_memory; }
  PointCounts& operator+=(const PointCounts& o) {
    measured += o.measured, wrong += o.wrong, failed += o.failed, out_of_memory += o.out_of_memory;
    return *this;
  }
};

}  // namespace ub
