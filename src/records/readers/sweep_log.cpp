// The sweep-log reader; the format is stated in sweep_log.hpp.
#include "records/readers/sweep_log.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "base/error.hpp"
#include "base/json_text.hpp"
#include "base/key_values.hpp"
#include "base/text.hpp"
#include "records/fields.hpp"
#include "records/provenance.hpp"
#include "records/readers/repeated_points.hpp"
#include "records/readers/repeated_steps.hpp"
#include "records/train_records.hpp"
#include "records/workload_keys.hpp"

namespace ub {

namespace {

using nlohmann::json;

constexpr std::string_view kBlockStart = "===== seq_len=";

// What benchmark.py's block says when its length did not fit: torch's "CUDA out of memory" and
// OutOfMemoryError, in any spelling.
bool says_out_of_memory(const std::string& line) {
  const std::string l = to_lower(line);
  return l.find("out of memory") != std::string::npos || l.find("outofmemory") != std::string::npos;
}

// Any other failure a block can end in (an illegal memory access, an NCCL or cuDNN error, a
// device-side assert, a watchdog, a crash): the length failed, which says nothing of memory.
bool says_failure(const std::string& line) {
  return line.find("Error") != std::string::npos || line.find("error:") != std::string::npos ||
         line.find("Segmentation fault") != std::string::npos || line.find("Watchdog") != std::string::npos ||
         line.find("core dumped") != std::string::npos || line.find("Aborted") != std::string::npos;
}

}  // namespace

std::optional<std::string> guide_model_preset(const std::string& size) {
  const std::string s = to_lower(trim(size));
  if (s == "8b") return "llama-3.1-8b";
  if (s == "70b") return "llama-3.1-70b";
  if (s == "405b") return "llama-3.1-405b";
  if (s == "1b") return "llama-3.2-1b";
  if (s == "3b") return "llama-3.2-3b";
  return std::nullopt;
}

bool is_sweep_block_line(std::string_view line) { return trim(line).rfind(kBlockStart, 0) == 0; }

bool looks_like_sweep_log(const LineSource& t) { return t.any(is_sweep_block_line); }

RunLog read_sweep_log(const LineSource& t, WarmupOnly warmup_only) {
  RunLog run;
  run.path = t.path;
  run.format = "benchmark.py";
  size_t blank = 0, other = 0, unknown_keys = 0;
  int gpu_line = 0;
  // What one log's steps must share beside its GPU: the first header's value and its line.
  std::map<std::string, std::pair<std::string, int>> workload;
  static const std::set<std::string> kStepKeys = {"step", "warmup", "exec_time_ms", "tflops",
                                                  "peak_mem_gib", "loss"};  // what benchmark.py writes
  RunPoint* cur = nullptr;
  RepeatedSteps repeated;
  std::map<int, std::string> failures;  // a block's line -> the failure it ended in
  // benchmark.py writes its `# env:` and `# gpu=` lines in every block: a block without its own
  // (pasted from another run) would take the GPU and levers of the block before it.
  bool env_here = false, gpu_here = false, env_seen = false, gpu_seen = false;
  t.for_each([&](const Line& l) {
    const size_t i = l.index;
    const std::string line = trim(l.text);
    const std::string where = t.where(i);
    if (line.empty()) {
      ++blank;
      return;
    }
    if (line.rfind(kBlockStart, 0) == 0) {
      std::string rest = line.substr(kBlockStart.size());
      const size_t eq = rest.find(' ');
      const std::string digits = trim(rest.substr(0, eq));
      if (digits.empty() || digits.size() > 15 || digits.find_first_not_of("0123456789") != std::string::npos ||
          digits.find_first_not_of('0') == std::string::npos) {
        throw WorkError(fmt::format("{}: expected `===== seq_len=<positive integer> =====`, got \"{}\"", where, line));
      }
      RunPoint point;
      point.seqlen = std::stoll(digits);
      point.line = static_cast<int>(i + 1);
      keep_later(run.points, std::move(point), [](const RunPoint& a, const RunPoint& b) { return a.seqlen == b.seqlen; },
                 [&](const RunPoint& a) { return fmt::format("first at line {}", a.line); }, where,
                 fmt::format("seq_len={}", digits), run.warnings);
      cur = &run.points.back();
      repeated.forget(cur->seqlen, 0);
      env_here = gpu_here = false;
      return;
    }
    if (line.rfind("# env:", 0) == 0) {
      env_here = env_seen = true;
      for (const auto& [k, v] : parse_key_values(line.substr(6), where)) {
        auto [it, fresh] = run.software.emplace(k, v);
        if (!fresh && it->second != v) {
          throw WorkError(fmt::format("{}: software changed within one log: {} was {}, now {}",
                                      where, k, it->second, v));
        }
      }
      return;
    }
    if (const auto note = provenance_line_note(line)) {
      run.provenance = *note;
      return;
    }
    if (line[0] == '#') {
      auto kv = parse_key_values(line.substr(1), where);
      if (kv.contains("gpu")) {
        if (!cur) throw WorkError(fmt::format("{}: a `# gpu=` header before any `===== seq_len=` block", where));
        if (run.gpu.empty()) gpu_line = static_cast<int>(i + 1);
        expect_one_gpu(run.gpu, kv["gpu"], fmt::format("{} (first GPU named at line {})", where, gpu_line));
        if (kv.contains("seq_len") && kv["seq_len"] != std::to_string(cur->seqlen)) {
          throw WorkError(fmt::format("{}: the header says seq_len={} in the block of seq_len={}", where,
                                      printable(kv["seq_len"]), cur->seqlen));
        }
        // benchmark.py's switches are 0 or 1 (Python's True and False read as them), its ZeRO stage
        // 0 to 3 and its world size a count: one reading for every reader, anything else refused.
        for (const char* key : {"gc", "offload_optim", "liger"}) {
          if (!kv.contains(key)) continue;
          std::string& v = kv[key];
          if (v == "True" || v == "true") v = "1";
          if (v == "False" || v == "false") v = "0";
          if (v != "0" && v != "1") {
            throw WorkError(fmt::format("{}: {}={} is neither 0 nor 1 (benchmark.py's switch)", where, key, printable(v)));
          }
        }
        if (kv.contains("zero") && (kv["zero"].size() != 1 || kv["zero"][0] < '0' || kv["zero"][0] > '3')) {
          throw WorkError(fmt::format("{}: zero={} is no ZeRO stage (0 to 3)", where, printable(kv["zero"])));
        }
        if (kv.contains("world_size")) {
          const std::string& v = kv["world_size"];
          if (v.empty() || v.size() > 6 || v.find_first_not_of("0123456789") != std::string::npos || v[0] == '0') {
            throw WorkError(fmt::format("{}: world_size={} is not a number of GPUs (1 to 999999)", where, printable(v)));
          }
        }
        // What makes another workload (the model, the batch, the GPUs and every memory lever):
        // points of two of them in one log would be fitted and compared as one.
        // A key one block leaves out and another names is changed as much as one with two values.
        const auto one_value = [&](const char* key) {
          const std::string value = kv.contains(key) ? kv[key] : std::string("(not said)");
          const auto [it, fresh] = workload.try_emplace(key, value, static_cast<int>(i + 1));
          if (!fresh && it->second.first != value) {
            throw WorkError(fmt::format("{}: {}={} here, {} at line {}: one log holds one workload", where, key,
                                        printable(value), printable(it->second.first), it->second.second));
          }
        };
        for (const char* key : {"model_size", "batch_size"}) one_value(key);
        for (const char* key : kBenchmarkPyLeverKeys) one_value(key);
        for (const char* key : kBenchmarkPyStepKeys) one_value(key);
        cur->header = kv;
        gpu_here = gpu_seen = true;
      }
      return;
    }
    if (line[0] == '{') {
      json obj;
      try {
        obj = parse_json_text(line, where);
      } catch (const ContradictoryJson&) {
        throw;
      } catch (const WorkError&) {
        if (l.cut_short) {
          run.warnings.push_back(fmt::format("{}: truncated last line ignored", where));
          return;
        }
        throw WorkError(fmt::format("{}: a step object that is not valid JSON: {}", where,
                                    line.substr(0, 80)));
      }
      if (!cur) throw WorkError(fmt::format("{}: a step before any `===== seq_len=` block", where));
      if ((gpu_seen && !gpu_here) || (env_seen && !env_here)) {
        throw WorkError(fmt::format("{}: a step of the block of seq_len={} (line {}), which has no `{}` line of its own: "
                                    "benchmark.py says its GPU, levers and software in every block; this one's are not "
                                    "known", where, cur->seqlen, cur->line, gpu_seen && !gpu_here ? "# gpu=" : "# env:"));
      }
      if (!obj.is_object()) throw WorkError(fmt::format("{}: a step must be a JSON object", where));
      TrainStep s = read_train_step(Fields(obj, where), static_cast<int64_t>(cur->steps.count()), false);
      s.seqlen = cur->seqlen;
      for (const auto& [k, v] : obj.items()) unknown_keys += !kStepKeys.contains(k);
      if (repeated.first_time(cur->seqlen, 0, s.step, s.exec_time_ms, static_cast<int>(i + 1), where, run.warnings)) {
        cur->steps.add(s, static_cast<int>(i + 1));
      }
      return;
    }
    if (says_out_of_memory(line) && cur) {
      if (cur->oom_message.empty()) cur->oom_message = line.substr(0, 200);
      return;
    }
    if (says_failure(line) && cur) {
      failures.try_emplace(cur->line, line.substr(0, 200));
      return;
    }
    ++other;
  });
  // A length that failed otherwise than out of memory, with no steady step: left out, said, in
  // every reader; it bounds no fit and decides no capability.
  std::erase_if(run.points, [&](const RunPoint& p) {
    const auto failed = failures.find(p.line);
    if (failed == failures.end() || p.steps.has_steady() || !p.oom_message.empty()) return false;
    run.warnings.push_back(fmt::format("{}:{}: seq_len={} failed, not out of memory (\"{}\"): left out", t.path, p.line,
                                       p.seqlen, printable(failed->second)));
    return true;
  });
  if (run.points.empty()) {
    throw WorkError(fmt::format("{}: no `===== seq_len=<n> =====` block: not a sweep log", t.path));
  }
  leave_out_warmup_only(run, warmup_only, [&](const RunPoint& p) {
    return fmt::format("{}:{}: seq_len={} has no steady steps and no out-of-memory line", t.path, p.line, p.seqlen);
  });
  note_sampled_points(run);
  for (RunPoint& p : run.points) {
    if (!p.steps.has_steady()) {
      p.status = PointStatus::oom;
    } else if (!p.oom_message.empty() || failures.count(p.line)) {
      run.warnings.push_back(fmt::format("{}:{}: seq_len={} has steps and an error line; its steps are kept",
                                         t.path, p.line, p.seqlen));
    }
  }
  std::sort(run.points.begin(), run.points.end(),
            [](const RunPoint& a, const RunPoint& b) { return a.seqlen < b.seqlen; });
  // Run-wide configuration from the first header.
  for (const RunPoint& p : run.points) {
    if (p.header.empty()) continue;
    for (const auto& [k, v] : p.header) {
      if (k != "gpu" && k != "seq_len") run.config[k] = v;
    }
    break;
  }
  if (run.config.contains("model_size")) {
    run.model = guide_model_preset(run.config["model_size"]);
    if (!run.model) run.warnings.push_back(fmt::format("model_size={} is not a size benchmark.py names; attention share unknown", run.config["model_size"]));
  }
  if (run.config.contains("batch_size")) {
    const std::string& b = run.config["batch_size"];
    if (b.empty() || b.size() > 15 || b.find_first_not_of("0123456789") != std::string::npos || std::stoll(b) <= 0 ||
        std::stoll(b) > kMaxBatch) {
      throw WorkError(fmt::format("{}: batch_size={} is not a whole number from 1 to {}", t.path, b, kMaxBatch));
    }
    run.batch = std::stoll(b);
  }
  if (run.gpu.empty()) run.warnings.push_back("no `# gpu=` header: the GPU is unknown");
  if (blank) run.warnings.push_back(fmt::format("{} blank lines", blank));
  if (other) run.warnings.push_back(fmt::format("{} other log lines ignored", other));
  if (unknown_keys) run.warnings.push_back(fmt::format("{} unknown step keys ignored", unknown_keys));
  return run;
}

}  // namespace ub
