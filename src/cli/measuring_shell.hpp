// The shell every measuring command runs in (nccl-tests' shape: what a benchmark measures is its
// descriptor in measure/, and everything around it is written once, here and in the two GPU
// halves beside it):
//
//   options   --out (the records file), --db (the history database the records also go to),
//             --devices where a command measures several GPUs at once, and the output format;
//   records   the file opened for appending with the context record first, every record also
//             handed to the history database as it is written;
//   the GPU   one worker per device (cli/gpu_workers.hpp), or this process as one rank of a job
//             (cli/gpu_job.hpp);
//   the table the record kind's view (report/measurement_views.hpp);
//   the end   the table in the chosen format with the records' path under it, then the exit
//             code: 130 when Ctrl-C stopped the run, 1 when a point failed its check against the
//             reference (after every record was written), the count in the last line.
//
// This half builds without the GPU libraries: `decompose TRACE` and `sweep` use it as it is.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "cli/context.hpp"
#include "cli/output.hpp"
#include "records/context_record.hpp"
#include "records/point_counts.hpp"
#include "records/record_file.hpp"

namespace ub::cli {

struct ShellOptions {
  std::string out;            // "" : upgradebench-<command>-<date>.jsonl
  std::string devices = "0";  // "0", "0,1" or "all"
  OutputOptions output;
};

// Which of the shell's options a command takes, beyond --out and --db.
struct ShellParts {
  bool devices = false;  // --devices: several GPUs measured at the same time
  bool output = true;    // --json, --csv, --md (a command that prints records has none)
};

// Declares --out, --db (into ctx.history_db) and the parts `command` takes.
void add_shell_options(CLI::App& cmd, Context& ctx, ShellOptions& o, const std::string& command, ShellParts parts);

// A command that runs as a job of GPUs, one process per GPU (cli/gpu_job.hpp): started by
// torchrun --no-python, srun or mpirun, or by --gpus N on one host.
inline constexpr long kMaxLocalRanks = 4096;                  // --gpus N: no host holds more GPUs
inline constexpr double kMaxRendezvousTimeoutS = 7 * 86400.0;  // a week: beyond it, a typo

struct JobOptions {
  std::string gpus;                   // --gpus: N ranks on this host, or "all"
  double rendezvous_timeout_s = 120;  // --rendezvous-timeout

  // UsageError for --gpus that is not 1..kMaxLocalRanks or 'all', and for a timeout that is not a
  // finite number of seconds above 0 (the parser already refuses both as they are typed).
  void validate() const;
};
// Declares --gpus and --rendezvous-timeout; returns them.
std::vector<CLI::Option*> add_job_options(CLI::App& cmd, JobOptions& o);

// `out`, or the default records file of `command`.
std::string records_path(const std::string& command, const std::string& out);

// Opens the records file `path` for appending, hands every record from now on to the history
// database --db named (UsageError before anything is measured when it cannot be opened), and
// writes `context` first.
std::unique_ptr<RecordWriter> open_records(const Context& ctx, const std::string& path, const ContextRecord& context);

// Records appended without the history sink (a sweep's result after its lengths' runs): the file
// added to the history database --db names, as `history add` adds it (a run already there grows
// by its new records). Nothing without --db.
void add_file_to_history(const Context& ctx, const std::string& path);

// How a measuring command ends once its records are written: exit 130 when interrupted;
// otherwise a WorkError (exit 1) when points failed their check, its message (the last line
// the command prints) naming how many of how many, and where their records are.
void finish_measurement(Context& ctx, const std::string& command, const PointCounts& counts, bool interrupted,
                        const std::string& records);

}  // namespace ub::cli
