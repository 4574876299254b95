// A stored run's rows as one digest: its runs row (its id and key, kind, command, format, date,
// host, model, provenance, source, when added, workload, world size, line count), its lines, its
// GPUs, its stack and its figures (a run copied under another id, with its digest, is told too).
// `history add` stores it with every run it adds or grows; a reader that finds the rows no longer
// give it knows the database was edited since (as a report page's digest tells an edited page):
// a figure, a GPU's name, a version or the example-data label changed by hand would otherwise be
// shown as measured. Not a defence against anyone who recomputes it.
#pragma once

#include <cstdint>
#include <string>

#include "store/database.hpp"

namespace ub::history {

// The digest of run `run`'s rows as they are now.
std::string run_rows_digest(Database& db, int64_t run);

// Stores run `run`'s digest of its rows as they are now (after `history add` wrote them).
void store_run_digest(Database& db, int64_t run);

// WorkError "history database D: run N's rows are not as `history add` stored them ..." where the
// rows no longer give the digest stored with them, or the run has none.
void check_run_digest(Database& db, int64_t run);

}  // namespace ub::history
