// Reader of the canonical records as a training run; see records_reader.hpp.
#include "records/readers/records_reader.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "base/error.hpp"
#include "base/text.hpp"
#include "records/readers/repeated_points.hpp"
#include "records/readers/repeated_steps.hpp"
#include "records/train_records.hpp"
#include "records/workload_keys.hpp"

namespace ub {

namespace {

using nlohmann::json;

std::string describe(const std::optional<std::string>& model, const std::optional<int64_t>& layers, int64_t batch,
                     const std::string& dtype) {
  return fmt::format("{}{}, batch {}, {}", model.value_or("model unknown"),
                     layers ? fmt::format(" ({} layers)", *layers) : "", batch, dtype);
}

// A later context record (a sweep's next point) must describe the same workload: one per file.
void take_context(const ContextRecord& c, RunLog& run, const std::string& where, bool first, bool decompose_steps) {
  // Records of a command that measures no training step are another kind of file (exit 2).
  for (const char* other : {"predict", "mamf", "attention", "bandwidth", "nccl", "decompose"}) {
    if (c.command == other && !(decompose_steps && c.command == "decompose")) {
      throw UsageError(fmt::format("{}: records of `{}`, not a training log (train, sweep or the Hugging Face peer's "
                                   "records)", where, other));
    }
  }
  expect_one_gpu(run.gpu, c.first_gpu(where).name, where);
  const TrainWorkload w = read_train_workload(Fields(c.config, where));
  if (!first && (w.model != run.model || w.layers != run.layers || w.batch != run.batch || w.dtype != run.dtype)) {
    throw WorkError(fmt::format("{}: a second context record for another workload ({} vs {}): one workload per file",
                                where, describe(w.model, w.layers, w.batch, w.dtype),
                                describe(run.model, run.layers, run.batch, run.dtype)));
  }
  if (!first) {
    // The memory levers, the sharding and the precision make another workload as much as the
    // model does: points of two in one file would be fitted and compared as one.
    std::map<std::string, std::string> now;
    read_config_text(c, now);
    // A key one context leaves out is what it ran without saying (our_key_default).
    const auto same = [&](const char* key) {
      const auto before = run.config.find(key), here = now.find(key);
      const std::string absent = our_key_default(key) ? our_key_default(key) : "absent";
      const std::string b = before == run.config.end() ? absent : before->second;
      const std::string h = here == now.end() ? absent : here->second;
      if (b != h) {
        throw WorkError(fmt::format("{}: a second context record for another workload ({} {} here, {} before): one "
                                    "workload per file", where, key, printable(h), printable(b)));
      }
    };
    for (const char* key : kOurLeverKeys) same(key);
    for (const char* key : kOurFormerLeverKeys) same(key);
    for (const char* key : kOurStepKeys) same(key);
    // The same, in words, where a context does not say master_weights (builds have reworded it).
    if (!run.config.count("master_weights") || !now.count("master_weights")) same("precision");
  }
  for (const auto& [name, entry] : c.fingerprint.stack) {
    if (entry.version) run.software[name] = *entry.version;
  }
  if (!c.tool.empty()) run.software["upgradebench"] = c.tool;
  if (c.provenance) run.provenance = *c.provenance;
  if (first) run.date = c.date, run.host = c.host, run.command = c.command;
  read_config_text(c, run.config);
  run.model = w.model;
  run.layers = w.layers;
  run.batch = w.batch;
  run.dtype = w.dtype;
}

// The point of `seqlen` in the run of context record `run_index`: a length measured again by a
// later run of the same file (a re-run, a retried length) starts afresh
// (records/readers/repeated_points.hpp).
RunPoint& point_for(RunLog& run, int64_t seqlen, int line, size_t run_index, const std::string& where) {
  for (RunPoint& p : run.points) {
    if (p.seqlen == seqlen && p.run == run_index) return p;
  }
  RunPoint point;
  point.seqlen = seqlen;
  point.line = line;
  point.run = run_index;
  keep_later(run.points, std::move(point), [](const RunPoint& x, const RunPoint& y) { return x.seqlen == y.seqlen; },
             [](const RunPoint& x) { return fmt::format("first at line {}", x.line); }, where,
             fmt::format("seqlen {}", seqlen), run.warnings);
  return run.points.back();
}

}  // namespace

void read_config_text(const ContextRecord& context, std::map<std::string, std::string>& out) {
  const auto text = [](const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  for (const auto& [k, v] : context.config.items()) {
    if (!v.is_structured()) out[k] = text(v);
    // One level down, by its dotted name (the optimizer's name and hyperparameters): what differs
    // there differs in the run too.
    if (v.is_object()) {
      for (const auto& [sub, w] : v.items()) {
        if (!w.is_structured()) out[k + "." + sub] = text(w);
      }
    }
  }
}

RunLog read_records(const LineSource& t, WarmupOnly warmup_only, bool decompose_steps) {
  RunLog run;
  run.path = t.path;
  run.format = "upgradebench";
  bool seen_context = false;
  size_t contexts = 0;  // context records so far: which run of the file a record belongs to
  size_t skipped = 0;
  RepeatedSteps repeated;
  for_each_record(t, [&](const RecordLine& r) {
    const Fields f(r.json, r.where);
    if (r.type.empty()) throw WorkError(fmt::format("{}: a record must be a JSON object with a \"type\"", r.where));
    if (r.type == "context") {
      take_context(read_context(f), run, r.where, !seen_context, decompose_steps);
      seen_context = true;
      ++contexts;
      return;
    }
    if (!seen_context) throw WorkError(fmt::format("{}: the first record must be the context record", r.where));
    const int line = static_cast<int>(r.index + 1);
    if (r.type == "train_step") {
      RunPoint& p = point_for(run, f.positive_count("seqlen"), line, contexts, r.where);
      const TrainStep s = read_train_step(f, static_cast<int64_t>(p.steps.count()));
      // A step's tokens are its batch's: one that says another than its run's counts tokens wrongly.
      if (f.has("batch") && s.batch != run.batch) {
        throw WorkError(fmt::format("{}: a step of batch {} in a run of batch {} (its context record): one batch per run",
                                    r.where, s.batch, run.batch));
      }
      if (s.expert_tokens) refuse_expert_tokens_past(*s.expert_tokens, run.batch * p.seqlen, r.where);
      if (repeated.first_time(p.seqlen, contexts, s.step, s.exec_time_ms, line, r.where, run.warnings)) p.steps.add(s, line);
    } else if (r.type == "train_oom") {
      const TrainFailure oom = read_train_failure(f);
      RunPoint& p = point_for(run, oom.seqlen, line, contexts, r.where);
      // One run measured the length and ran out of memory at it: the steps stand, and it is said.
      if (p.steps.has_steady()) {
        run.warnings.push_back(fmt::format("{}: seqlen {} out of memory after steps measured at it (from line {}): the "
                                           "steps are kept", r.where, oom.seqlen, p.line));
      }
      p.oom_message = oom.what;
    } else if (r.type == "expert_load" && f.has("expert_tokens")) {
      // The Hugging Face MoE peer's tokens per expert at a length it timed (bench/peers/train_moe_peer.py).
      const int64_t seqlen = f.count("seqlen");
      const auto p = std::find_if(run.points.begin(), run.points.end(),
                                  [&](const RunPoint& q) { return q.seqlen == seqlen && q.run == contexts; });
      if (p == run.points.end()) {
        throw WorkError(fmt::format("{}: tokens per expert at seqlen {}, where no step of the run is", r.where, seqlen));
      }
      p->expert_tokens = read_expert_tokens(f.object("expert_tokens"), run.batch * seqlen);
    } else {
      ++skipped;
    }
  }, run.warnings);
  if (!seen_context) throw UsageError(fmt::format("{}: no context record: not an upgradebench records file", t.path));
  if (run.points.empty()) throw WorkError(fmt::format("{}: no train_step or train_oom records", t.path));
  leave_out_warmup_only(run, warmup_only, [&](const RunPoint& p) {
    return fmt::format("{}:{}: seqlen {} has no steady steps", t.path, p.line, p.seqlen);
  });
  note_sampled_points(run);
  for (RunPoint& p : run.points) {
    if (!p.steps.has_steady()) p.status = PointStatus::oom;
    if (!p.expert_tokens) p.expert_tokens = p.steps.expert_tokens();
  }
  std::sort(run.points.begin(), run.points.end(),
            [](const RunPoint& a, const RunPoint& b) { return a.seqlen < b.seqlen; });
  if (skipped) run.warnings.push_back(fmt::format("{} records of other types skipped", skipped));
  return run;
}

}  // namespace ub
