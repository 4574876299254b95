// `--db` on a measuring command: every record it writes to its file also goes to the history
// database as it is written, the run growing record by record (history_store's "grown"; records
// that come faster than one a second go in batches, the last at the end of the run). The
// file stays the record of truth: a database that fails mid-run is reported once on stderr with
// the command that adds the file later, and the measurement goes on.
#pragma once

#include <string>

#include "records/record_file.hpp"

namespace ub::history {

// Opens `spec` (UsageError before anything is measured when it cannot be) and makes `writer`
// hand it every record from now on.
void record_into_history(RecordWriter& writer, const std::string& spec);

}  // namespace ub::history
