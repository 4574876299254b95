// How fast the history takes records in and answers a trend: writes FILES record files holding
// RECORDS `train_step` records in all (runs of 100 steps, each run its own context record, the
// lengths 4k to 128k in turn; the records copied from the bundled sweep's real ones, their
// times varied), then times `upgradebench history add` of all of them into DB as a child process,
// and `upgradebench history trend train.tflops --at 8192` on the result five times (the median
// is the figure). Prints one JSON object.
//
//   history_speed UPGRADEBENCH SWEEP_RECORDS DB RECORDS FILES
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr int kStepsPerRun = 100;
constexpr long kLengths[] = {4096, 8192, 16384, 32768, 65536, 131072};

double run_seconds(const std::string& command) {
  const auto start = std::chrono::steady_clock::now();
  const int rc = std::system((command + " > /dev/null").c_str());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (rc != 0) {
    std::fprintf(stderr, "history_speed: `%s` failed (%d)\n", command.c_str(), rc);
    std::exit(1);
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: history_speed UPGRADEBENCH SWEEP_RECORDS DB RECORDS FILES\n");
    return 2;
  }
  const std::string ub = argv[1], sweep = argv[2], db = argv[3];
  const long records = std::atol(argv[4]), files = std::atol(argv[5]);
  if (records <= 0 || files <= 0 || records % (files * kStepsPerRun) != 0) {
    std::fprintf(stderr, "history_speed: RECORDS must be a multiple of FILES x %d\n", kStepsPerRun);
    return 2;
  }
  // The templates: the sweep's first context record and its first steady step at each length
  // (a step's time and TFLOPS agree with the model's FLOPs at its length, as `history add` checks).
  json context;
  std::map<long, json> step_at;
  {
    std::ifstream in(sweep);
    for (std::string line; std::getline(in, line);) {
      const json j = json::parse(line);
      if (j.value("type", "") == "context" && context.is_null()) context = j;
      if (j.value("type", "") == "train_step" && !j.value("warmup", true)) step_at.emplace(j["seqlen"].get<long>(), j);
    }
  }
  for (const long seqlen : kLengths) {
    if (context.is_null() || !step_at.count(seqlen)) {
      std::fprintf(stderr, "history_speed: %s holds no context and steady train_step at %ld tokens\n", sweep.c_str(), seqlen);
      return 2;
    }
  }
  const fs::path dir = fs::temp_directory_path() / ("ub-history-speed-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::vector<std::string> paths;
  long run = 0;
  uint64_t bytes = 0;
  for (long f = 0; f < files; ++f) {
    const std::string path = (dir / ("records_" + std::to_string(f) + ".jsonl")).string();
    std::ofstream out(path);
    for (long r = 0; r < records / files / kStepsPerRun; ++r, ++run) {
      const long seqlen = kLengths[run % std::size(kLengths)];
      json c = context;
      char date[32];
      std::snprintf(date, sizeof date, "2026-11-%02ldT%02ld:%02ld:%02ldZ", 1 + run / 86400 % 28, run / 3600 % 24,
                    run / 60 % 60, run % 60);
      c["date"] = date;
      c["config"]["seqlen"] = seqlen;
      out << c.dump() << "\n";
      for (int s = 0; s < kStepsPerRun; ++s) {
        const json& step = step_at.at(seqlen);
        json x = step;
        // Within 1%, and another value for every run and step: each run its own measurement.
        const double jitter = 1.0 + 0.01 * std::sin(static_cast<double>(run) * 12.9898 + static_cast<double>(s) * 78.233);
        x["step"] = s;
        x["warmup"] = s == 0;
        x["exec_time_ms"] = step["exec_time_ms"].get<double>() * jitter;
        x["tflops"] = step["tflops"].get<double>() / jitter;
        out << x.dump() << "\n";
      }
    }
    out.close();
    bytes += fs::file_size(path);
    paths.push_back(path);
  }
  std::string add = ub + " history add --db '" + db + "'";
  for (const std::string& p : paths) add += " " + p;
  const double add_s = run_seconds(add);
  std::vector<double> trend;
  for (int i = 0; i < 5; ++i) {
    trend.push_back(run_seconds(ub + " history trend train.tflops --at 8192 --db '" + db + "'") * 1e3);
  }
  std::vector<double> sorted = trend;
  std::sort(sorted.begin(), sorted.end());
  const json result = {{"db", db},
                       {"records", records},
                       {"files", files},
                       {"runs", run},
                       {"megabytes", static_cast<double>(bytes) / 1e6},
                       {"add_s", add_s},
                       {"records_per_s", static_cast<double>(records) / add_s},
                       {"trend_ms", trend},
                       {"trend_ms_median", sorted[sorted.size() / 2]}};
  std::printf("%s\n", result.dump().c_str());
  fs::remove_all(dir);
  return 0;
}
