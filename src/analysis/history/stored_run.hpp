// A run as the history database keeps it: what identifies it (a key from its context record, or
// from the whole content of a peer's log, so adding it twice stores it once), what it is filtered
// by (command, date, host, GPUs, model, the stack's versions), its lines exactly as the file had
// them (compare and report read a stored run back as that file) and its figures (run_metrics.hpp).
//
// A file of our records holds one run per context record (a sweep appends one per length); a
// peer's log (benchmark.py, mamf-finder.py, bench_flash_attn.py, bench_decompose.py, the
// torch.distributed collective script) is one run.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "analysis/history/run_metrics.hpp"
#include "base/line_source.hpp"
#include "records/readers/attention_log.hpp"
#include "records/readers/decomposition_log.hpp"
#include "records/readers/mamf_log.hpp"
#include "records/run_log.hpp"

namespace ub {

struct StoredGpu {
  int index = 0;
  std::string name, uuid;  // uuid "" where the log does not say
};

struct StoredRun {
  std::string key;      // 16 hex digits
  std::string kind;     // training, attention, decomposition, mamf, nccl, bandwidth, prediction, other
  std::string command;  // ours: train, mamf, ...; a peer's log: its script (benchmark.py, ...)
  std::string format;   // "upgradebench", or the peer script's name
  std::string date;     // ISO 8601 (UTC for ours; as the peer's log printed it), "" unknown
  std::string host, model, provenance;
  std::string workload;    // what a series may pool it with (workload.hpp)
  int64_t world_size = 1;  // the job's GPUs, which a peer's log may name one of
  std::vector<StoredGpu> gpus;
  std::map<std::string, std::string> stack;  // component -> version
  std::vector<std::string> lines;            // without newlines
  std::vector<MetricPoint> metrics;
  std::vector<std::string> warnings;         // what the reader tolerated
};

// The most of a file the history holds while it reads it into runs (each line's text and its
// string): a records file of a thousand-length sweep is a few MiB.
inline constexpr size_t kMaxHeldBytes = size_t{512} << 20;

// What the caller holds a run to before it is stored (a WorkError refuses it): the figures no GPU
// measures (analysis/run_limits.hpp), which need the catalog, one check per kind of log; an empty
// one checks nothing. Called from the threads that read the runs.
struct RunCheck {
  std::function<void(const RunLog&)> training;
  std::function<void(const MamfLog&)> ceiling;
  std::function<void(const AttentionLog&)> attention;
  // May give a printout without seq= the length its work is (the history stores its figures there).
  std::function<void(DecompositionLog&)> decomposition;
};

// The runs of a file of our records or of a peer's log (its lines move into the runs; the runs
// are read in parallel), each training run held to `check`. Throws WorkError naming the file
// (and line) when it is neither, when a reader refuses it, or past kMaxHeldBytes.
std::vector<StoredRun> runs_of_file(const LineSource& t, const RunCheck& check = {});

// A peer's log keyed and read for its figures as `history add` would (its `key`, its `metrics`),
// a line at a time: nothing of it held, for telling two inputs of one measurement apart.
struct PeerFigures {
  std::string key;
  std::vector<MetricPoint> metrics;
};
PeerFigures peer_figures(const LineSource& t);

// One run of our records from its lines so far (the context record first): what `--db` stores
// as a measuring command writes its records. `name` stands for the file in messages.
StoredRun run_of_records(const std::vector<std::string>& lines, const std::string& name);

// Every kind a stored run can have (its `kind` column): each log kind's name, and bandwidth.
const std::vector<std::string>& run_kinds();

// Whether `line` is a whole context record (one that parses): the line a run of records starts with.
bool is_context_line(const std::string& line);

// Whether a line of a peer's log says when, where or on what it ran rather than what it measured
// (a date, a GPU's UUID, a `#` header): a peer's run is keyed by its other lines, so a copy with
// those edited is the run it copies.
bool says_where_or_when(const std::string& line);

// One figure per (GPU, metric, point), in that order: a log that repeats a point keeps its first.
std::vector<const MetricPoint*> distinct_points(const std::vector<MetricPoint>& points);

// Whether two runs' figures are one measurement, whatever their contexts or headers say: every
// point both hold (one metric at one point) alike, to printing precision (1e-9 relative), in all
// the figures behind it (MetricPoint::steps and ::summary): a training point's steps of the same
// number alike (a copy keeps each step's number with its time, whatever steps it leaves out); a
// timed record's time summary (the figures both write); a figure printed once, its value and
// interval. At least two steps or samples alike, or figures printed once alike at two points (a
// few rounded digits can meet by chance at one). One point that differs is two measurements: a
// copy never differs where both hold a figure. A length added or left out is not a point both
// hold. A training step's TFLOPS, logged rounded beside its time, is told by the time.
bool one_measurement(const std::vector<MetricPoint>& a, const std::vector<MetricPoint>& b);
// The figures of a stored run read again from its kept lines (`format`: "upgradebench" or the
// peer's), with the steps and summaries behind them that the database's columns do not hold.
std::vector<MetricPoint> stored_figures(std::vector<std::string> lines, const std::string& format, const std::string& name);
// The points one_measurement compares.
std::vector<const MetricPoint*> compared_points(const std::vector<MetricPoint>& points);

}  // namespace ub
