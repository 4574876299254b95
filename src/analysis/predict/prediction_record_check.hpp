// What a `prediction` record (predict --out, docs/records.md) may hold, checked before a report
// draws it or a prediction file grows: a record edited or damaged by hand (a negative speedup, an
// interval that does not hold its point, buckets that do not add up to the step, an MFU above 1)
// would otherwise be drawn as a prediction. A WorkError names the line and the field.
#pragma once

#include "records/fields.hpp"

namespace ub {

void check_prediction_record(const Fields& f);

}  // namespace ub
