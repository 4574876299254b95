// The context record; see context_record.hpp and docs/records.md.
#include "records/context_record.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "base/error.hpp"
#include "base/text.hpp"
#include "records/provenance.hpp"
#include "records/record_file.hpp"

namespace ub {

using nlohmann::json;

namespace {

void put(json& j, const char* key, const auto& optional) {
  if (optional) j[key] = *optional;
}

std::string scalar_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

void to_json(json& j, const GpuFacts& g) {
  j = {{"index", g.index}, {"name", g.name}};
  put(j, "uuid", g.uuid);
  put(j, "pci_bus_id", g.pci_bus_id);
  put(j, "compute_capability", g.compute_capability);
  put(j, "sm_count", g.sm_count);
  put(j, "l2_mib", g.l2_mib);
  put(j, "memory_gib", g.memory_gib);
  put(j, "max_sm_clock_mhz", g.max_sm_clock_mhz);
  put(j, "power_limit_w", g.power_limit_w);
  j["catalog_id"] = or_null(g.catalog_id);
}

void to_json(json& j, const Fingerprint& f) {
  json stack = json::object();
  for (const auto& [name, e] : f.stack) {
    if (e.path.empty() && e.absent.empty()) {
      stack[name] = or_null(e.version);
    } else {
      json entry = {{"version", or_null(e.version)}};
      if (!e.path.empty()) entry["path"] = e.path;
      if (!e.absent.empty()) entry["absent"] = e.absent;
      stack[name] = entry;
    }
  }
  j = {{"gpus", f.gpus}, {"stack", stack}, {"build", f.build}};
  put(j, "no_gpu", f.no_gpu);
  put(j, "nvml", f.nvml);
}

void to_json(json& j, const ContextRecord& c) {
  to_json(j, c.fingerprint);
  j["type"] = "context";
  j["schema"] = c.schema;
  j["tool"] = c.tool;
  j["command"] = c.command;
  j["argv"] = c.argv;
  j["date"] = c.date;
  j["host"] = c.host;
  j["config"] = c.config;
  put(j, "provenance", c.provenance);
  if (!c.world.is_null()) j["world"] = c.world;
}

Fingerprint read_fingerprint(const Fields& f) {
  Fingerprint out;
  const json& j = f.raw();
  if (j.contains("gpus") && j.at("gpus").is_array()) {
    for (const json& g : j.at("gpus")) {
      const Fields gf(g, f.where());
      GpuFacts x;
      const int64_t index = gf.optional_count("index").value_or(0);
      if (index < 0 || index > kMaxGpuIndex) {
        throw WorkError(fmt::format("{}: a GPU's \"index\" {} is past any machine's GPUs (0 to {})", f.where(), index,
                                    kMaxGpuIndex));
      }
      x.index = static_cast<int>(index);
      x.name = gf.string_or("name", "");
      if (x.name.empty() || x.name.find_first_not_of(' ') == std::string::npos) {
        throw WorkError(fmt::format("{}: GPU {} in \"gpus\" has no name", f.where(), x.index));
      }
      auto text = [&](const char* key) { return gf.has(key) ? std::optional<std::string>(scalar_text(g.at(key))) : std::nullopt; };
      x.uuid = text("uuid");
      // Each GPU of a run once, by its index and by its UUID: two of one index (both left without
      // one) or of one UUID would be one GPU's figures given twice.
      for (const GpuFacts& before : out.gpus) {
        if (before.index == x.index) {
          throw WorkError(fmt::format("{}: two GPUs with index {} in \"gpus\" (a GPU without \"index\" is GPU 0): each "
                                      "GPU of a run is listed once", f.where(), x.index));
        }
        if (x.uuid && !x.uuid->empty() && before.uuid == x.uuid) {
          throw WorkError(fmt::format("{}: GPUs {} and {} in \"gpus\" have one UUID ({}): one GPU listed twice",
                                      f.where(), before.index, x.index, printable(*x.uuid)));
        }
      }
      x.pci_bus_id = text("pci_bus_id");
      x.compute_capability = text("compute_capability");
      x.catalog_id = text("catalog_id");
      if (auto n = gf.optional_count("sm_count")) x.sm_count = static_cast<int>(*n);
      x.l2_mib = gf.optional_number("l2_mib");
      x.memory_gib = gf.optional_number("memory_gib");
      x.max_sm_clock_mhz = gf.optional_number("max_sm_clock_mhz");
      x.power_limit_w = gf.optional_number("power_limit_w");
      out.gpus.push_back(std::move(x));
    }
  }
  if (j.contains("stack") && j.at("stack").is_object()) {
    for (const auto& [name, v] : j.at("stack").items()) {
      StackEntry e;
      if (v.is_object()) {
        if (v.contains("version") && !v.at("version").is_null()) e.version = scalar_text(v.at("version"));
        if (v.contains("path") && v.at("path").is_string()) e.path = v.at("path").get<std::string>();
        if (v.contains("absent") && v.at("absent").is_string()) e.absent = v.at("absent").get<std::string>();
      } else if (!v.is_null()) {
        e.version = scalar_text(v);
      }
      out.stack[name] = e;
    }
  }
  if (j.contains("build") && j.at("build").is_object()) {
    for (const auto& [k, v] : j.at("build").items()) out.build[k] = scalar_text(v);
  }
  if (f.has("no_gpu")) out.no_gpu = scalar_text(j.at("no_gpu"));
  if (f.has("nvml")) out.nvml = scalar_text(j.at("nvml"));
  return out;
}

ContextRecord read_context(const Fields& f) {
  ContextRecord c;
  // The records' format: what another format (a newer upgradebench's, another tool's) means by a
  // field is not known, so its records are not read as if they were ours.
  const json schema = f.raw().contains("schema") ? f.raw().at("schema") : json();
  if (!schema.is_string() || schema.get<std::string>() != kRecordSchema) {
    throw WorkError(fmt::format("{}: schema {} is not one this upgradebench reads ({}): records of a newer "
                                "upgradebench or of another tool", f.where(), printable(schema.dump()), kRecordSchema));
  }
  c.schema = kRecordSchema;
  c.tool = f.has("tool") ? scalar_text(f.raw().at("tool")) : "";
  c.command = f.string_or("command", "");
  if (f.raw().contains("argv") && f.raw().at("argv").is_array()) {
    for (const json& a : f.raw().at("argv")) c.argv.push_back(scalar_text(a));
  }
  c.date = f.string_or("date", "");
  c.host = f.string_or("host", "");
  c.fingerprint = read_fingerprint(f);
  if (f.raw().contains("config") && f.raw().at("config").is_object()) c.config = f.raw().at("config");
  if (f.raw().contains("provenance")) c.provenance = provenance_field_note(f.raw().at("provenance"), f.where());
  if (f.has("world") && f.raw().at("world").is_object()) c.world = f.raw().at("world");
  return c;
}

const GpuFacts& ContextRecord::first_gpu(const std::string& where) const {
  if (fingerprint.gpus.empty()) throw WorkError(fmt::format("{}: context record names no GPU", where));
  return fingerprint.gpus.front();
}

ContextRecord make_context(const std::string& command, const std::vector<std::string>& argv, Fingerprint fingerprint,
                           json config) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  ContextRecord c;
  c.schema = kRecordSchema;
  c.tool = "upgradebench 0.1.0";
  c.command = command;
  c.argv = argv;
  c.date = utc_now_iso8601();
  c.host = host;
  c.fingerprint = std::move(fingerprint);
  c.config = std::move(config);
  return c;
}

RecordGpus record_gpus(const LineSource& t) {
  RecordGpus out;
  std::vector<std::string> warnings;
  for_each_record(t, [&](const RecordLine& r) {
    if (r.type != "context") return;
    const ContextRecord c = read_context(Fields(r.json, r.where));
    for (const auto& [name, e] : c.fingerprint.stack) {
      if (e.version) out.stack[name].insert(*e.version);
    }
    for (const GpuFacts& g : c.fingerprint.gpus) {
      if (out.first_name.empty()) out.first_name = g.name;
      if (g.uuid && !g.uuid->empty()) out.uuids.insert(*g.uuid);
      else out.unnamed = true;
      if (g.catalog_id && !g.catalog_id->empty()) out.catalog_ids.insert(*g.catalog_id);
    }
  }, warnings);
  return out;
}

}  // namespace ub
