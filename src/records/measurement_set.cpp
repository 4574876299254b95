// Gathering one GPU's measurements; see measurement_set.hpp.
#include "records/measurement_set.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include <fstream>
#include <sstream>

#include "base/error.hpp"
#include "base/text.hpp"
#include "base/json_text.hpp"
#include "records/context_record.hpp"
#include "records/readers/log_kind.hpp"
#include "records/readers/read_run.hpp"
#include "records/record_file.hpp"
#include "records/suite_part_backing.hpp"
#include "records/sweep_max.hpp"

namespace ub {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The GPU index a suite's parts measure: its workload's --device (train's option), else 0.
size_t suite_device(const SuiteWorkload& w, const std::string& where) {
  const auto flag = std::find(w.train_args.begin(), w.train_args.end(), "--device");
  if (flag == w.train_args.end() || flag + 1 == w.train_args.end()) return 0;
  const std::string& v = *(flag + 1);
  if (v.empty() || v.size() > 4 || v.find_first_not_of("0123456789") != std::string::npos) {
    throw WorkError(fmt::format("{}: its workload's --device {} is not a GPU index: the manifest was edited", where,
                                printable(v)));
  }
  return static_cast<size_t>(std::stoul(v));
}

// The stack a suite's env.json names: every component with a version; `gpu` and `catalog_id` (the
// catalog's entry the machine found for it, "" for none) are those of the GPU at `device`, the one
// the parts measured; `uuids` learns all its GPUs.
std::map<std::string, std::string> stack_of_env(const fs::path& env, size_t device, std::string& gpu,
                                                std::string& catalog_id, std::set<std::string>& uuids) {
  const json j = parse_json_text(read_json_file(env, "env's JSON"), env.string());
  const Fingerprint fp = read_fingerprint(Fields(j, env.string()));
  std::map<std::string, std::string> out;
  for (const auto& [name, e] : fp.stack) {
    if (e.version) out[name] = *e.version;
  }
  for (const auto& [k, v] : fp.build) {
    if (k == "upgradebench" || k == "version") out["upgradebench"] = v;
  }
  if (!fp.gpus.empty() && device >= fp.gpus.size()) {
    throw WorkError(fmt::format("{}: lists {} GPU(s), where the suite's parts measured GPU {} (--device): the folder was "
                                "edited", env.string(), fp.gpus.size(), device));
  }
  if (fp.gpus.empty() || fp.gpus[device].name.empty()) {
    throw WorkError(fmt::format("{}: names no GPU: a suite's env.json is `env --json` of the machine that measured it",
                                env.string()));
  }
  gpu = fp.gpus[device].name;
  catalog_id = fp.gpus[device].catalog_id.value_or("");
  for (const GpuFacts& g : fp.gpus) {
    if (g.uuid && !g.uuid->empty()) uuids.insert(*g.uuid);
  }
  return out;
}

// What `t` holds, into `s` (its GPU checked against the set's); `slot` names a suite's part.
void add_file(MeasurementSet& s, const LineSource& t, LogKind kind, const std::string& part) {
  const Provenance own = read_provenance(t);
  s.provenance = weaker(s.provenance, own);
  if (!own.measured()) s.not_measured.emplace_back(t.path, own);
  std::string gpu;
  auto once = [&](auto& slot, auto value, const char* what) {
    if (slot) {
      throw UsageError(fmt::format("{}: a second {} of {} ({} already holds one): one of each per GPU; two runs of one "
                                   "GPU side by side are `upgradebench compare OLD NEW`", t.path, what,
                                   s.gpu.empty() ? "this GPU" : s.gpu, s.where));
    }
    gpu = value.gpu;
    // What its reader said of it (a damaged line skipped, a point measured again) is said of the set.
    s.warnings.insert(s.warnings.end(), value.warnings.begin(), value.warnings.end());
    slot = std::move(value);
  };
  switch (kind) {
    case LogKind::mamf:
      if (part == "mamf-step") once(s.step_products, read_mamf_log(t), "set of the step's products");
      else once(s.ceiling, read_mamf_log(t), "matmul ceiling");
      break;
    case LogKind::attention: once(s.attention, read_attention_log(t), "attention run"); break;
    case LogKind::nccl: once(s.nccl, read_nccl_log(t), "collective run"); break;
    case LogKind::decomposition: {
      DecompositionLog d = read_decomposition_log(t);
      gpu = d.gpu;
      s.decompositions.push_back(std::move(d));
      break;
    }
    case LogKind::training: {
      once(s.sweep, read_run_log(t, WarmupOnly::leave_out), "training sweep");
      for (const auto& [k, v] : s.sweep->software) s.stack.emplace(k, v);
      if (const std::optional<SweepMax> max = read_sweep_max(t, *s.sweep, s.warnings)) {
        s.found = max;
      }
      break;
    }
    case LogKind::prediction:
      throw UsageError(fmt::format("{}: a prediction, not a measurement: decide predicts with --to GPU itself", t.path));
    case LogKind::unknown:
      if (has_record_type(t, "bandwidth")) {
        once(s.bandwidth, read_bandwidth_log(t), "bandwidth run");
        break;
      }
      // A suite's part with nothing in it is data missing from the folder (exit 1); a file given
      // that holds nothing is no log of any kind (exit 2, as every command says of it).
      if (t.first_nonblank().empty()) {
        const std::string empty = fmt::format("{}: empty: no measurement in it", printable(t.path));
        if (!part.empty()) throw WorkError(empty);
        throw UsageError(empty);
      }
      if (looks_like_records(t)) {  // a context record and no result after it: a run that stopped first
        throw WorkError(fmt::format("{}: our records with no measurement after the context record (a run that ended "
                                    "before its first result)", printable(t.path)));
      }
      refuse_records_without_context(t);
      throw UsageError(fmt::format("{}: not a measurement upgradebench reads (a training log, mamf, bandwidth, "
                                   "attention, decompose or nccl records, or the peers' printouts)", t.path));
  }
  const RecordGpus named = record_gpus(t);
  s.gpu_uuids.insert(named.uuids.begin(), named.uuids.end());
  if (!named.stack.empty()) s.file_stacks.emplace_back(t.path, named.stack);
  // One set is one GPU's: a part measured on another (a file copied in from another machine)
  // would put that GPU's figures under this one's name.
  if (!s.gpu.empty() && !gpu.empty() && to_lower(trim(s.gpu)) != to_lower(trim(gpu))) {
    throw WorkError(fmt::format("{}: measured on {}, while {} is of {}: one suite holds one GPU's measurements",
                                printable(t.path), printable(gpu), printable(s.where), printable(s.gpu)));
  }
  if (s.gpu.empty()) s.gpu = gpu;
}

// `b`, one file's set, into `a`: a kind both hold is a UsageError naming both.
void merge(MeasurementSet& a, MeasurementSet b) {
  auto take = [&](auto& into, auto& from, const char* what) {
    if (!from) return;
    if (into) {
      throw UsageError(fmt::format("{}: a second {} of {} ({} already holds one): one of each per GPU; two runs of one "
                                   "GPU side by side are `upgradebench compare OLD NEW`", b.where, what,
                                   a.gpu.empty() ? "this GPU" : a.gpu, a.where));
    }
    into = std::move(from);
  };
  take(a.ceiling, b.ceiling, "matmul ceiling");
  take(a.step_products, b.step_products, "set of the step's products");
  take(a.bandwidth, b.bandwidth, "bandwidth run");
  take(a.attention, b.attention, "attention run");
  take(a.sweep, b.sweep, "training sweep");
  take(a.nccl, b.nccl, "collective run");
  if (b.found) a.found = b.found;
  for (DecompositionLog& d : b.decompositions) a.decompositions.push_back(std::move(d));
  for (const auto& [k, v] : b.stack) a.stack.emplace(k, v);
  a.provenance = weaker(a.provenance, b.provenance);
  a.not_measured.insert(a.not_measured.end(), b.not_measured.begin(), b.not_measured.end());
  a.gpu_uuids.insert(b.gpu_uuids.begin(), b.gpu_uuids.end());
  a.file_stacks.insert(a.file_stacks.end(), b.file_stacks.begin(), b.file_stacks.end());
  if (a.gpu.empty()) a.gpu = b.gpu;
}

// A suite's parts are one workload on one stack, the manifest's and env.json's: a part's file
// from another run (another depth, batch or library version) would mix its figures in.
void refuse_parts_of_another_workload(const MeasurementSet& s, const std::map<std::string, std::string>& env_stack) {
  const SuiteWorkload& w = s.manifest->workload;
  std::vector<std::string> differs;
  if (s.sweep) {
    const RunLog& r = *s.sweep;
    differs = w.departures_of(r);
    // Its lengths are the manifest's (a length the budget dropped, or one that failed, may be
    // missing), and --find-max's probes beside them.
    // --find-max probes only above the longest length asked for that fit, and writes its result.
    const ManifestPart* part = s.manifest->part("sweep");
    const bool find_max = part && std::find(part->command.begin(), part->command.end(), "--find-max") != part->command.end();
    const bool probed = find_max && s.found && s.found->longest_fit;
    if (part && !find_max && s.found) {
      differs.push_back("a result of sweep --find-max, where the manifest's sweep ran without --find-max");
    }
    int64_t longest_asked_fit = 0;
    for (const RunPoint& p : r.points) {
      const bool asked = std::find(w.seqlens.begin(), w.seqlens.end(), p.seqlen) != w.seqlens.end();
      if (asked && p.status == PointStatus::ok) longest_asked_fit = std::max(longest_asked_fit, p.seqlen);
    }
    for (const RunPoint& p : r.points) {
      const bool asked = std::find(w.seqlens.begin(), w.seqlens.end(), p.seqlen) != w.seqlens.end();
      if (!w.seqlens.empty() && !asked && !(probed && p.seqlen > longest_asked_fit)) {
        differs.push_back(fmt::format("a step of {} tokens, a length the manifest does not ask for ({})", p.seqlen,
                                      fmt::join(w.seqlens, ", ")));
        break;
      }
    }
    // A done sweep's lengths are the manifest's but what the budget dropped (that its records hold
    // each length its command names is the part's backing, read with the part): said after what
    // makes it another run's.
    std::string damaged;
    if (part && part->status == PartStatus::done) {
      const auto flag = std::find(part->command.begin(), part->command.end(), "--seqlens");
      const std::vector<int64_t> ran = part->lengths_asked();
      for (const int64_t len : w.seqlens) {
        const bool dropped = std::any_of(s.manifest->dropped.begin(), s.manifest->dropped.end(), [&](const std::string& d) {
          return d.rfind(fmt::format("length {} ", len), 0) == 0;
        });
        if (!ran.empty() && std::find(ran.begin(), ran.end(), len) == ran.end() && !dropped && damaged.empty()) {
          damaged = fmt::format("{}: its manifest asks for {} tokens, which its sweep's command (--seqlens {}) "
                                "leaves out and the budget did not drop: the folder was edited or damaged",
                                printable(s.where), len, printable(*(flag + 1)));
        }
      }
    }
    for (const auto& [component, version] : r.software) {
      const auto env = env_stack.find(component);
      if (env != env_stack.end() && env->second != version) {
        differs.push_back(fmt::format("{} {} vs {}", component, printable(version), printable(env->second)));
      }
    }
    if (!differs.empty()) {
      throw WorkError(fmt::format("{}: its training sweep {} is of another run than the suite's ({}; the sweep's, then the "
                                  "manifest's and env.json's): give the suite's own file", printable(s.where),
                                  printable(r.path), fmt::join(differs, ", ")));
    }
    if (!damaged.empty()) throw WorkError(damaged);
  }
  for (const DecompositionLog& d : s.decompositions) {
    const auto layers = d.header.find("layers");
    if (w.layers > 0 && layers != d.header.end() && layers->second != std::to_string(w.layers)) {
      throw WorkError(fmt::format("{}: its decomposition {} is of {} layers, the suite's of {}: give the suite's own file",
                                  printable(s.where), printable(d.path), printable(layers->second), w.layers));
    }
  }
}

// A done part the folder no longer backs (its records missing, not a file, empty, a non-zero exit
// code, a sweep short of a length its command asks for) is a damaged folder (exit 1), as `suite
// --resume` reads it. Records of another run are said by the reading and the workload's checks,
// which name what differs.
void refuse_unbacked(const fs::path& dir, const ManifestPart& p, const SuiteWorkload& w) {
  const PartBacking b = backing_of(dir, p, w);
  if (b.damage == PartDamage::none || b.damage == PartDamage::not_a_sweep || b.damage == PartDamage::other_workload) return;
  throw WorkError(fmt::format("{}: part {} is done, but {}: the folder was edited or damaged (suite --resume measures "
                              "the part again)", printable(dir.string()), printable(p.name), b.why));
}

}  // namespace

MeasurementSet read_suite_folder(const fs::path& dir) {
  MeasurementSet s;
  s.where = dir.string();
  s.manifest = read_suite_manifest(dir);
  std::error_code ec;
  // The machine's GPUs, by UUID: env.json's, else the first part's that names them.
  std::set<std::string> machine;
  std::string machine_where = "env.json";
  // The part that wrote env.json is done: its file is the machine's word on its GPU and stack.
  if (const ManifestPart* env = s.manifest->part("env"); env && env->status == PartStatus::done) {
    refuse_unbacked(dir, *env, s.manifest->workload);
    s.stack = stack_of_env(dir / env->records, suite_device(s.manifest->workload, dir.string()), s.gpu, s.catalog_id,
                           machine);
  } else {
    s.warnings.push_back(fmt::format("{}: no env.json (its part is not done): the GPU and the stack are the parts' own, "
                                     "unchecked against the machine", dir.string()));
  }
  const std::map<std::string, std::string> env_stack = s.stack;
  std::map<std::string, std::string> part_of_file;  // records file -> the part that names it
  for (const ManifestPart& p : s.manifest->parts) {
    if (p.name == "env") continue;
    // Two parts reading one file would count one measurement twice, under two names.
    if (const auto [it, fresh] = part_of_file.emplace(p.records, p.name); !fresh && p.status == PartStatus::done) {
      throw WorkError(fmt::format("{}: parts {} and {} both name {} as their records: one measurement would count twice",
                                  dir.string(), it->second, p.name, printable(p.records)));
    }
    if (p.status != PartStatus::done) {
      s.warnings.push_back(fmt::format("{}: part {} is {}{}: its measurements are left out", dir.string(), p.name,
                                       to_string(p.status), p.why.empty() ? "" : " (" + p.why + ")"));
      continue;
    }
    refuse_unbacked(dir, p, s.manifest->workload);
    const LineSource t = LineSource::file(dir / p.records);
    const size_t decompositions = s.decompositions.size();
    add_file(s, t, detect_log_kind(t), p.name);
    // Two GPUs of one name are still two GPUs: a part copied in from another machine's H200.
    const RecordGpus gpus = record_gpus(t);
    if (gpus.unnamed && !machine.empty()) {
      throw WorkError(fmt::format("{}: part {} ({}) names its GPU without a UUID, where {} names the machine's ({}): one "
                                  "suite holds one machine's measurements", dir.string(), p.name, printable(p.records),
                                  printable(machine_where), printable(fmt::format("{}", fmt::join(machine, ", ")))));
    }
    // The catalog's entry env.json found for the GPU is the one its parts found (it picks the
    // peaks, MAMF and memory the figures are held to and predicted from).
    for (const std::string& id : gpus.catalog_ids) {
      if (s.catalog_id.empty() || id == s.catalog_id) continue;
      throw WorkError(fmt::format("{}: part {} ({}) says its GPU is the catalog's {}, where env.json says {}: one suite "
                                  "holds one machine's measurements (the folder was edited)", dir.string(), p.name,
                                  printable(p.records), printable(id), printable(s.catalog_id)));
    }
    // A part run again after the loader found another library (a resume on a changed machine)
    // measured another stack than env.json's: its figures set beside the other GPU's would compare
    // software as hardware. (The sweep's is said with the rest of its run, below.)
    for (const auto& [component, versions] : gpus.stack) {
      const auto env = env_stack.find(component);
      if (p.name == "sweep" || env == env_stack.end()) continue;
      for (const std::string& v : versions) {
        if (v == env->second) continue;
        throw WorkError(fmt::format("{}: part {} ({}) ran on {} {}, where env.json says {}: one suite holds one stack's "
                                    "measurements; run the suite again on one stack", dir.string(), p.name,
                                    printable(p.records), component, printable(v), printable(env->second)));
      }
    }
    const std::set<std::string>& uuids = gpus.uuids;
    if (machine.empty() && !uuids.empty()) {
      machine = uuids;
      machine_where = p.records;
    }
    for (const std::string& u : uuids) {
      if (!machine.count(u)) {
        throw WorkError(fmt::format("{}: part {} ({}) ran on GPU {}, which is not the suite's ({}: {}): one suite holds "
                                    "one machine's measurements", dir.string(), p.name, printable(p.records),
                                    printable(u), printable(machine_where), printable(fmt::format("{}", fmt::join(machine, ", ")))));
      }
    }
    // A decomposition is of the length its part's command asked for.
    const auto asked = std::find(p.command.begin(), p.command.end(), "--seqlen");
    if (s.decompositions.size() > decompositions && asked != p.command.end() && asked + 1 != p.command.end()) {
      const std::optional<int64_t>& got = s.decompositions.back().seqlen;
      if (got && std::to_string(*got) != *(asked + 1)) {
        throw WorkError(fmt::format("{}: part {} ran with --seqlen {}, its records {} decompose a step of {} tokens: give "
                                    "the part's own file", dir.string(), p.name, printable(*(asked + 1)),
                                    printable(p.records), *got));
      }
    }
  }
  refuse_parts_of_another_workload(s, env_stack);
  return s;
}

std::vector<MeasurementSet> read_measurement_files(const std::vector<LineSource>& files) {
  std::vector<MeasurementSet> sets;
  for (const LineSource& t : files) {
    const LogKind kind = detect_log_kind(t);
    MeasurementSet* into = nullptr;
    // A file's GPU is known once it is read: read it alone, then into the set of its GPU.
    MeasurementSet one;
    one.where = t.path;
    add_file(one, t, kind, "");
    for (MeasurementSet& s : sets) {
      if (!one.gpu.empty() && s.gpu == one.gpu) into = &s;
    }
    if (!into && one.gpu.empty() && !sets.empty()) into = &sets.back();
    if (!into) {
      sets.push_back(std::move(one));
      continue;
    }
    merge(*into, std::move(one));
  }
  // Files of one GPU measured on other libraries: the set's stack is said as one (its sweep's, else
  // its first file's), so a file that differs is named.
  for (MeasurementSet& s : sets) {
    std::map<std::string, std::pair<std::string, std::string>> said;  // component -> (version, file)
    for (const auto& [component, version] : s.stack) said[component] = {version, "its training sweep"};
    for (const auto& [path, stack] : s.file_stacks) {
      for (const auto& [component, versions] : stack) {
        for (const std::string& v : versions) {
          const auto [known, fresh] = said.emplace(component, std::pair{v, path});
          if (fresh || known->second.first == v) continue;
          s.warnings.push_back(fmt::format("{}: measured with {} {}, where {} of {} says {}: its figures are of another "
                                           "stack", printable(path), component, printable(v),
                                           printable(known->second.second), printable(s.gpu), printable(known->second.first)));
        }
      }
    }
  }
  return sets;
}

}  // namespace ub
