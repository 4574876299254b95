// upgradebench's own records (docs/records.md) as a training-step run: the context record gives
// the GPU, the software stack and the workload (model, layers, batch, dtype); `train_step`
// records the steps and `train_oom` records the points that did not fit. Records of other
// types are counted and skipped; a later context record (an appended run) must name the same GPU.
#pragma once

#include <map>
#include <string>

#include "base/line_source.hpp"
#include "records/context_record.hpp"
#include "records/record_file.hpp"
#include "records/run_log.hpp"

namespace ub {

// `decompose_steps`: a `decompose` run's training steps are read too (the history keeps their
// times beside the decomposition); otherwise its records are another kind of file (UsageError).
RunLog read_records(const LineSource& t, WarmupOnly warmup_only = WarmupOnly::refuse, bool decompose_steps = false);

// The scalar entries of a context record's `config` object (strings as they are, numbers and
// booleans as JSON), and those of its objects one level down as `object.key`, into `out`.
void read_config_text(const ContextRecord& context, std::map<std::string, std::string>& out);

}  // namespace ub
