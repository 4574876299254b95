// Splitting a file into the runs a history stores; see stored_run.hpp.
#include "analysis/history/stored_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <exception>
#include <map>
#include <optional>
#include <thread>
#include <set>
#include <string_view>
#include <tuple>

#include "analysis/history/workload.hpp"
#include "base/dates.hpp"
#include "base/error.hpp"
#include "base/text.hpp"
#include "records/context_record.hpp"
#include "records/provenance.hpp"
#include "records/readers/attention_log.hpp"
#include "records/readers/decomposition_log.hpp"
#include "records/readers/log_kind.hpp"
#include "records/readers/mamf_log.hpp"
#include "records/readers/nccl_log.hpp"
#include "records/readers/read_run.hpp"
#include "records/readers/records_reader.hpp"
#include "records/record_file.hpp"
#include "records/sweep_max.hpp"

namespace ub {

bool is_context_line(const std::string& line) {
  if (line.find("\"context\"") == std::string::npos) return false;  // cheap test first
  try {
    const nlohmann::json j = nlohmann::json::parse(line);
    return j.is_object() && j.value("type", std::string()) == "context";
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

namespace {

void append(std::vector<MetricPoint>& to, std::vector<MetricPoint> from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

// Every GPU's bandwidth records; one whose check failed is left out and said, and a file of
// nothing else is refused (a run of no figures would be stored as a measurement).
std::vector<BandwidthRecord> bandwidth_records(const LineSource& t, std::vector<std::string>& warnings) {
  std::vector<BandwidthRecord> out;
  size_t left_out = 0;
  std::string first;
  for_each_record(t, [&](const RecordLine& r) {
    if (r.type != "bandwidth") return;
    BandwidthRecord b = read_bandwidth_record(Fields(r.json, r.where));
    if (!b.ok) {
      warnings.push_back(fmt::format("{}: {} of {} bytes left out: {}", r.where, b.op, b.bytes, b.error));
      if (left_out++ == 0) first = warnings.back();
      return;
    }
    out.push_back(std::move(b));
  }, warnings);
  if (out.empty() && left_out > 0) {
    throw WorkError(fmt::format("{}: no bandwidth record to store, {} left out (the first: {})", t.path, left_out, first));
  }
  return out;
}

// Every GPU's measured shapes of a `mamf --devices ...` run (--search's quick looks left out), a
// shape measured twice on one GPU as its later measurement (as the reader keeps the first GPU's).
// The file's damaged lines were said by the reader's own pass: not said again.
std::vector<MamfShape> all_gpus_shapes(const LineSource& t) {
  std::vector<MamfShape> out;
  std::map<std::tuple<int, int64_t, int64_t, int64_t, std::string>, size_t> at;
  std::vector<std::string> said_already;
  for_each_record(t, [&](const RecordLine& r) {
    if (r.type != "mamf") return;
    MamfShape s = read_mamf_shape(Fields(r.json, r.where));
    if (s.quick) return;
    const auto [it, first] = at.try_emplace(std::tuple{s.device, s.m, s.n, s.k, s.dtype}, out.size());
    if (first) out.push_back(std::move(s));
    else out[it->second] = std::move(s);
  }, said_already);
  return out;
}

// What a log of each kind is called in the history, and which peer script writes it.
struct KindNames {
  const char* kind;
  const char* peer;
};
KindNames names_of(LogKind k) {
  switch (k) {
    case LogKind::training: return {"training", "benchmark.py"};
    case LogKind::attention: return {"attention", "bench_flash_attn.py"};
    case LogKind::decomposition: return {"decomposition", "bench_decompose.py"};
    case LogKind::mamf: return {"mamf", "mamf-finder.py"};
    case LogKind::nccl: return {"nccl", "torch.distributed"};
    case LogKind::prediction: return {"prediction", ""};
    case LogKind::unknown: return {"other", ""};
  }
  return {"other", ""};
}

// The figures of one run, by what it holds.
void read_figures(const LineSource& t, LogKind kind, StoredRun& run, const RunCheck& check) {
  switch (kind) {
    case LogKind::training: {
      // A run still being written (or stopped) may hold a length with warm-up steps only.
      const RunLog log = read_run_log(t, WarmupOnly::leave_out);
      if (check.training) check.training(log);
      append(run.metrics, training_metrics(log));
      run.warnings.insert(run.warnings.end(), log.warnings.begin(), log.warnings.end());
      if (run.format != "upgradebench") {
        if (!log.gpu.empty()) run.gpus.push_back({0, log.gpu, ""});
        run.stack.insert(log.software.begin(), log.software.end());
        if (log.model) run.model = *log.model;
        run.provenance = log.provenance;
        const Workload w = workload_of_sweep_log(log);
        run.workload = w.text, run.world_size = w.world_size;
      }
      return;
    }
    case LogKind::attention: {
      const AttentionLog log = read_attention_log(t);
      if (check.attention) check.attention(log);
      append(run.metrics, attention_metrics(log));
      run.warnings.insert(run.warnings.end(), log.warnings.begin(), log.warnings.end());
      if (run.format != "upgradebench") {
        if (!log.gpu.empty()) run.gpus.push_back({0, log.gpu, ""});
        const Workload w = workload_of_peer_attention(log.header);
        run.workload = w.text, run.world_size = w.world_size;
      }
      return;
    }
    case LogKind::decomposition: {
      DecompositionLog log = read_decomposition_log(t);
      if (check.decomposition) check.decomposition(log);
      append(run.metrics, decomposition_metrics(log, run.warnings));
      run.warnings.insert(run.warnings.end(), log.warnings.begin(), log.warnings.end());
      if (run.format != "upgradebench") {
        if (!log.gpu.empty()) run.gpus.push_back({0, log.gpu, ""});
        run.model = kPrintoutModel;  // the model bench_decompose.py trains, as its workload says
        const Workload w = workload_of_printout(log.header);
        run.workload = w.text, run.world_size = w.world_size;
      }
      // A trace's decomposition: the context lists no GPU (reading a trace measures none); each
      // record names the GPU it decomposed, under its index or rank.
      if (run.format == "upgradebench" && run.gpus.empty()) {
        std::set<int64_t> listed;  // the first of each index, as its figures
        for (const DecompositionRecord& r : log.records) {
          const int64_t index = decomposition_gpu_index(r);
          if (!r.gpu.empty() && listed.insert(index).second) run.gpus.push_back({static_cast<int>(index), r.gpu, ""});
          if (r.world_size) run.world_size = std::max(run.world_size, *r.world_size);
        }
        // A rank of a job of N is another workload than a GPU's step on its own; our engine's step
        // traced is another program's than a torch.profiler trace's.
        if (run.world_size > 1) run.workload += fmt::format(", a job of {} ranks", run.world_size);
        if (!log.records.empty() && log.records.front().source != kTraceSource) {
          run.workload += ", " + log.records.front().source;
        }
      }
      if (run.format == "upgradebench" && has_record_type(t, "train_step")) {
        const RunLog steps = read_records(t, WarmupOnly::leave_out, true);  // its steps' times
        if (check.training) check.training(steps);
        append(run.metrics, training_metrics(steps));
      }
      return;
    }
    case LogKind::mamf: {
      MamfLog log = read_mamf_log(t);
      if (run.format == "upgradebench") log.outcome.shapes = all_gpus_shapes(t);  // the reader keeps the first GPU's
      if (check.ceiling) check.ceiling(log);
      append(run.metrics, mamf_metrics(log));
      // A ceiling is of its shapes: runs of other shapes are other series (the step's own products too).
      if (const std::string set = mamf_shape_set(log.outcome.shapes); !set.empty()) {
        run.workload = run.workload.empty() ? set : run.workload + "; " + set;
      }
      run.warnings.insert(run.warnings.end(), log.warnings.begin(), log.warnings.end());
      if (run.format != "upgradebench") {
        if (!log.gpu.empty()) run.gpus.push_back({0, log.gpu, log.gpu_uuid});
        for (const auto& [name, version] : log.stack) run.stack[name] = version;
      }
      return;
    }
    case LogKind::nccl: {
      const NcclLog log = read_nccl_log(t);
      append(run.metrics, nccl_metrics(log));
      run.warnings.insert(run.warnings.end(), log.warnings.begin(), log.warnings.end());
      if (run.format != "upgradebench") {
        if (!log.gpu.empty()) run.gpus.push_back({0, log.gpu, ""});
        for (const char* component : {"torch", "nccl"}) {  // the versions each of the peer's lines names
          if (auto it = log.details.find(component); it != log.details.end()) run.stack[component] = it->second;
        }
        const Workload w = workload_of_peer_nccl(log.world_size);
        run.workload = w.text, run.world_size = w.world_size;
      }
      return;
    }
    case LogKind::prediction:
    case LogKind::unknown: return;
  }
}

// Our records: the context record says what ran, where and on what. The lines move into the run.
StoredRun records_run(std::vector<std::string> lines, bool cut_short, const std::string& name, const RunCheck& check) {
  StoredRun run;
  run.format = "upgradebench";
  // A last line cut mid-record (a file still being written, a copy cut short) is ignored, and so
  // not stored: the finished file then adds as the run grown, not as a rewritten one.
  std::optional<std::string> cut_line;
  if (cut_short && lines.size() > 1 && !nlohmann::json::accept(lines.back())) {
    cut_line = LineSource::view(lines, cut_short, name).where(lines.size() - 1);
    lines.pop_back();
  }
  run.lines = std::move(lines);
  if (cut_line) run.warnings.push_back(*cut_line + ": truncated last line ignored");
  const LineSource t = LineSource::view(run.lines, cut_short && !cut_line, name);
  run.key = fnv1a_hex(run.lines.front());
  if (!is_context_line(run.lines.front())) {
    throw WorkError(fmt::format("{}: the run's first line is not a whole context record (damaged): its run cannot "
                                "be told apart", t.where(0)));
  }
  const nlohmann::json j = nlohmann::json::parse(run.lines.front());
  const ContextRecord c = read_context(Fields(j, t.where(0)));
  run.command = c.command;
  if (!c.date.empty() && !is_timestamp(c.date)) {
    throw WorkError(fmt::format("{}: date '{}' is not a time of the calendar (2026-11-30T08:00:00Z): a run is stored "
                                "by its date", t.where(0), printable(c.date)));
  }
  run.date = utc_timestamp(c.date);
  run.host = c.host;
  run.provenance = c.provenance.value_or("");
  if (c.config.contains("model") && c.config.at("model").is_string()) run.model = c.config.at("model").get<std::string>();
  const Workload w = workload_of_records(c.command, c.config, c.world);
  run.workload = w.text, run.world_size = w.world_size;
  for (const GpuFacts& g : c.fingerprint.gpus) run.gpus.push_back({g.index, g.name, g.uuid.value_or("")});
  for (const auto& [component, entry] : c.fingerprint.stack) {
    if (entry.version) run.stack[component] = *entry.version;
  }
  if (!c.tool.empty()) run.stack["upgradebench"] = c.tool;
  const LogKind kind = detect_log_kind(t);
  run.kind = kind == LogKind::unknown && has_record_type(t, "bandwidth") ? "bandwidth" : names_of(kind).kind;
  if (run.kind == "bandwidth") {
    append(run.metrics, bandwidth_metrics(bandwidth_records(t, run.warnings)));
  } else {
    read_figures(t, kind, run, check);
  }
  return run;
}

// The first date and time `line` prints ("[2026-11-30 10:00:00]", "2026-11-30T10:00:00") that
// is one of the calendar (base/dates.hpp): "[2026-11-30 25:61:61]" dates nothing.
std::optional<std::string> date_in(const std::string& line) {
  constexpr std::string_view form = "dddd-dd-dd?dd:dd:dd";  // d: a digit; ?: ' ' or 'T'
  const auto at = [&](std::string_view s) {
    for (size_t i = 0; i < form.size(); ++i) {
      const char c = s[i];
      if (form[i] == 'd' ? !(c >= '0' && c <= '9') : form[i] == '?' ? !(c == ' ' || c == 'T') : c != form[i]) return false;
    }
    return true;
  };
  for (size_t i = 0; i + form.size() <= line.size(); ++i) {
    const std::string_view s(line.data() + i, form.size());
    if (at(s) && is_timestamp(s)) return std::string(s.substr(0, 10)) + "T" + std::string(s.substr(11, 8));
  }
  return std::nullopt;
}

std::string first_date(const std::vector<std::string>& lines) {
  for (const std::string& line : lines) {
    if (const auto d = date_in(line)) return *d;
  }
  return "";
}


// A peer's log is kept without the blank lines around it: a copy with one more newline at its
// end (an editor's, an `echo >>`'s) is the same measurement, and its key must say so.
void drop_blank_edges(std::vector<std::string>& lines) {
  const auto blank = [](const std::string& l) { return l.find_first_not_of(" \t\r") == std::string::npos; };
  while (!lines.empty() && blank(lines.back())) lines.pop_back();
  const auto first = std::find_if_not(lines.begin(), lines.end(), blank);
  lines.erase(lines.begin(), first);
}

StoredRun peer_run(std::vector<std::string> lines, bool cut_short, const std::string& name, const RunCheck& check) {
  StoredRun run;
  drop_blank_edges(lines);
  run.lines = std::move(lines);
  const LineSource t = LineSource::view(run.lines, cut_short, name);
  const LogKind kind = detect_log_kind(t);
  if (kind == LogKind::unknown || kind == LogKind::prediction) {
    refuse_records_without_context(t);
    throw UsageError(fmt::format("{}: not a log the history reads (our records, or the output of benchmark.py, "
                                "mamf-finder.py, bench_flash_attn.py, bench_decompose.py or the collective script)",
                                t.path));
  }
  run.kind = names_of(kind).kind;
  run.command = run.format = names_of(kind).peer;
  // Keyed by what it measured: the same lines under another date, GPU UUID or header are one run.
  std::string all = run.format + "\n";
  for (const std::string& line : run.lines) {
    if (!says_where_or_when(line)) all += line + "\n";
  }
  run.key = fnv1a_hex(all);
  run.date = first_date(run.lines);
  read_figures(t, kind, run, check);
  // Example data says so in its first lines, whatever kind of log it is.
  if (const Provenance p = read_provenance(t); run.provenance.empty() && !p.measured()) run.provenance = p.note;
  return run;
}

}  // namespace

PeerFigures peer_figures(const LineSource& t) {
  const LogKind kind = detect_log_kind(t);
  if (kind == LogKind::unknown || kind == LogKind::prediction) {
    throw UsageError(fmt::format("{}: not a log the history reads", t.path));
  }
  // peer_run's key, streamed: its format, then every line that says no where or when, the blank
  // lines at either end left out.
  uint64_t h = 14695981039346656037ull;
  const auto add = [&](std::string_view s) {
    for (const unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  };
  add(names_of(kind).peer), add("\n");
  std::vector<std::string> blanks;  // held until a line that is not blank follows them
  bool started = false;
  t.for_each([&](const Line& l) {
    if (l.text.find_first_not_of(" \t\r") == std::string::npos) {
      if (started) blanks.emplace_back(l.text);
      return;
    }
    started = true;
    for (const std::string& b : blanks) add(b), add("\n");
    blanks.clear();
    if (!says_where_or_when(std::string(l.text))) add(l.text), add("\n");
  });
  StoredRun run;
  run.format = names_of(kind).peer;
  read_figures(t, kind, run, {});
  return {fmt::format("{:016x}", h), std::move(run.metrics)};
}

bool says_where_or_when(const std::string& line) {
  const size_t first = line.find_first_not_of(" \t");
  return (first != std::string::npos && line[first] == '#') || to_lower(line).find("uuid") != std::string::npos ||
         date_in(line).has_value();
}

const std::vector<std::string>& run_kinds() {
  static const std::vector<std::string> kinds = [] {
    std::vector<std::string> k;
    for (LogKind x : {LogKind::training, LogKind::attention, LogKind::decomposition, LogKind::mamf, LogKind::nccl,
                      LogKind::prediction, LogKind::unknown}) {
      k.emplace_back(names_of(x).kind);
    }
    k.emplace_back("bandwidth");  // records_run's name for `bandwidth` records, of no log kind of their own
    return k;
  }();
  return kinds;
}

std::vector<const MetricPoint*> distinct_points(const std::vector<MetricPoint>& points) {
  std::map<std::tuple<int, std::string, double>, const MetricPoint*> unique;
  for (const MetricPoint& m : points) unique.emplace(std::make_tuple(m.gpu, m.metric, m.x), &m);
  std::vector<const MetricPoint*> out;
  out.reserve(unique.size());
  for (const auto& entry : unique) out.push_back(entry.second);
  return out;
}

std::vector<const MetricPoint*> compared_points(const std::vector<MetricPoint>& points) {
  std::vector<const MetricPoint*> out = distinct_points(points);
  std::erase_if(out, [](const MetricPoint* m) { return m->metric == "train.tflops"; });
  return out;
}

namespace {

// Alike to printing precision: a copy re-printed with fewer digits (80.07999999999998 as 80.08)
// is the figure it copies.
bool alike(double a, double b) { return a == b || std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); }

// The steps both lists number alike, each with its time alike: how many; nullopt when one of
// them differs. A copy keeps each step's number with its time, whatever steps it leaves out.
std::optional<size_t> steps_alike(const std::vector<std::pair<int64_t, double>>& a,
                                  const std::vector<std::pair<int64_t, double>>& b) {
  std::map<int64_t, double> of_b;
  for (const auto& [step, ms] : b) of_b.emplace(step, ms);
  size_t common = 0;
  for (const auto& [step, ms] : a) {
    const auto it = of_b.find(step);
    if (it == of_b.end()) continue;
    if (!alike(ms, it->second)) return std::nullopt;
    ++common;
  }
  return common;
}

// A time summary's figures alike, those one of the two left out (NaN) aside.
bool summaries_alike(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!std::isnan(a[i]) && !std::isnan(b[i]) && !alike(a[i], b[i])) return false;
  }
  return true;
}

}  // namespace

bool one_measurement(const std::vector<MetricPoint>& a, const std::vector<MetricPoint>& b) {
  std::map<std::tuple<int, std::string, double>, const MetricPoint*> of_b;
  for (const MetricPoint* m : compared_points(b)) of_b.emplace(std::make_tuple(m->gpu, m->metric, m->x), m);
  size_t samples = 0;             // steps and timed samples alike
  std::set<double> printed_at;    // the points (lengths, sizes) of figures printed once, alike
  for (const MetricPoint* m : compared_points(a)) {
    const auto it = of_b.find(std::make_tuple(m->gpu, m->metric, m->x));
    if (it == of_b.end()) continue;
    const MetricPoint& o = *it->second;
    if (!m->steps.empty() && !o.steps.empty()) {
      const std::optional<size_t> common = steps_alike(m->steps, o.steps);
      if (!common) return false;
      samples += *common;
    } else if (!m->summary.empty() && !o.summary.empty()) {
      if (!summaries_alike(m->summary, o.summary)) return false;
      samples += m->n;
    } else {
      if (m->n != o.n || !alike(m->median, o.median) || !alike(m->low, o.low) || !alike(m->high, o.high)) return false;
      printed_at.insert(m->x);
    }
  }
  // Figures printed once, rounded to a few digits, can meet by chance at one point: alike at two.
  return samples >= 2 || printed_at.size() >= 2;
}

std::vector<MetricPoint> stored_figures(std::vector<std::string> lines, const std::string& format, const std::string& name) {
  return (format == "upgradebench" ? records_run(std::move(lines), true, name, {}) : peer_run(std::move(lines), true, name, {}))
      .metrics;
}

StoredRun run_of_records(const std::vector<std::string>& lines, const std::string& name) {
  if (lines.empty() || !is_context_line(lines.front())) {
    throw WorkError(fmt::format("{}: a run of records starts with its context record", name));
  }
  return records_run(lines, false, name, {});
}

std::vector<StoredRun> runs_of_file(const LineSource& source, const RunCheck& check) {
  // The history keeps a run's text: the file is read into memory once, up to kMaxHeldBytes (a
  // pipe without end, a file of nothing but short lines, is refused there).
  // A pipe that is no log is told from its kept start, before its lines are held.
  if (source.is_stream() && !looks_like_records(source) && detect_log_kind(source) == LogKind::unknown) {
    throw UsageError(fmt::format("{}: not a log the history reads (our records, or the output of benchmark.py, "
                                 "mamf-finder.py, bench_flash_attn.py, bench_decompose.py or the collective script)",
                                 source.path));
  }
  HeldLines held = source.hold(kMaxHeldBytes);
  std::vector<std::string>& lines = held.lines;
  const bool cut_short = held.cut_short;
  size_t first = 0;
  while (first < lines.size() && lines[first].find_first_not_of(" \t\r") == std::string::npos) ++first;
  if (first == lines.size()) throw UsageError(fmt::format("{}: empty: no run to add", source.path));
  // Told from the lines held, not by reading the source again (a pipe is read once).
  if (!looks_like_records(LineSource::view(lines, cut_short, source.path))) {
    return {peer_run(std::move(lines), cut_short, source.path, check)};
  }
  // sweep --find-max's result is of the whole sweep (each length a run of its own): held to the
  // lengths the file ran before its runs are split, as `decide` holds it.
  std::vector<std::string> file_warnings;
  if (std::any_of(lines.begin(), lines.end(), [](const std::string& l) { return l.find("\"sweep_max\"") != std::string::npos; })) {
    const LineSource whole = LineSource::view(lines, cut_short, source.path);
    (void)read_sweep_max(whole, read_run_log(whole, WarmupOnly::leave_out), file_warnings);
  }
  // The runs, split at their context records (their lines moved out of `lines`)...
  struct Segment {
    std::vector<std::string> lines;
    bool cut_short = false;
    std::string name;
  };
  std::vector<Segment> segments;
  size_t begin = first;
  for (size_t i = first + 1; i <= lines.size(); ++i) {
    if (i < lines.size() && !is_context_line(lines[i])) continue;
    Segment segment;
    segment.name = begin == first ? source.path : fmt::format("{} (the run from line {})", source.path, begin + 1);
    segment.lines.assign(std::make_move_iterator(lines.begin() + static_cast<std::ptrdiff_t>(begin)),
                         std::make_move_iterator(lines.begin() + static_cast<std::ptrdiff_t>(i)));
    segment.cut_short = i == lines.size() && cut_short;
    segments.push_back(std::move(segment));
    begin = i;
  }
  // ...read on every core (parsing the JSON is most of an ingest); the first failure in file
  // order is the one reported.
  std::vector<StoredRun> runs(segments.size());
  std::vector<std::exception_ptr> errors(segments.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < segments.size(); i = next++) {
      try {
        runs[i] = records_run(std::move(segments[i].lines), segments[i].cut_short, segments[i].name, check);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const size_t threads = std::min<size_t>(segments.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (size_t i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (std::thread& th : pool) th.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  if (!runs.empty()) runs.back().warnings.insert(runs.back().warnings.end(), file_warnings.begin(), file_warnings.end());
  return runs;
}

}  // namespace ub
