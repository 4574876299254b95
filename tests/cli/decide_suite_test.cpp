// `suite` and `decide` on the command line, on the CPU: the plan and its budget, and the verdict
// from two machines' measurements: a real suite folder of one H200 (tests/fixtures/suite_h200_2l,
// measured), the ml-engineering guide's H200 and B200 figures (hand-written example logs), and
// the bad inputs (a folder that is not a suite's, an interrupted suite, another workload, prices
// of zero, a software stack that differs).
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "cli_run.hpp"
#include "measured_again.hpp"
#include "temp_files.hpp"

namespace {

using namespace ub_test;
namespace fs = std::filesystem;
using nlohmann::json;

const std::string kFx = UB_FIXTURES_DIR;
const std::string kSuite = kFx + "/suite_h200_2l";
const std::string kExamples = std::string(UB_DATA_DIR) + "/examples";

// A copy of the fixture suite whose manifest `edit` changes.
fs::path edited_suite(const std::string& name, const std::function<void(json&)>& edit) {
  const fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  fs::copy(kSuite, dir, fs::copy_options::recursive);
  json m = json::parse(slurp((dir / "manifest.json").string()));
  edit(m);
  std::ofstream(dir / "manifest.json") << m.dump(2);
  return dir;
}

const std::string kSuiteGpu = "GPU-5d5ef7b4-6d9f-1c74-d0fa-60ace3bdd669", kOtherGpu = "GPU-0ther000-6d9f-1c74-d0fa-60ace3bdd669";

// A copy of the fixture suite measured again `scale` times slower on another card of the same
// model, every part (its times longer, its rates lower; measured_again.hpp; its own GPU UUID): the
// same GPU model measured again (a copy with its figures alike is the same measurement, refused).
fs::path slower_suite(const std::string& name, double scale) {
  const fs::path other = edited_suite(name, [](json&) {});
  for (const fs::directory_entry& e : fs::directory_iterator(other)) {
    if (e.path().extension() != ".jsonl" && e.path().filename() != "env.json") continue;
    std::string again = slurp(e.path().string());
    if (e.path().extension() == ".jsonl") again = measured_again(again, scale);
    // Another card of the same model: its own UUID.
    for (size_t at = again.find(kSuiteGpu); at != std::string::npos; at = again.find(kSuiteGpu, at)) {
      again.replace(at, kSuiteGpu.size(), kOtherGpu);
    }
    std::ofstream(e.path()) << again;
  }
  return other;
}

// The file at `path` with every `from` written as `to`.
void replace_in_file(const fs::path& path, const std::string& from, const std::string& to) {
  std::string text = slurp(path.string());
  for (size_t at; (at = text.find(from)) != std::string::npos;) text.replace(at, from.size(), to);
  std::ofstream(path) << text;
}

// A copy of the fixture suite as measured on a B200: every file names that GPU, its figures
// `scale` times the H200's (faster below 1).
fs::path b200_suite(const std::string& name, double scale) {
  const fs::path dir = slower_suite(name, scale);
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".jsonl" && e.path().filename() != "env.json") continue;
    replace_in_file(e.path(), "NVIDIA H200", "NVIDIA B200");
    replace_in_file(e.path(), "h200-sxm", "b200-sxm");
  }
  return dir;
}

// The fixture suite again as a second folder: another machine of the same GPU model, 0.1% slower.
constexpr double kAgain = 1.001;
const std::string& suite_again() {
  // One copy per test process: CTest runs the tests of this binary in parallel.
  static const std::string dir = slower_suite(fmt::format("suite_again_{}", ::getpid()), kAgain).string();
  return dir;
}

TEST(Decide, OneGpusTwoSuitesAreTheSameGpuWithinNoise) {
  const Result r = run("decide " + kSuite + " " + suite_again() + " --price-old 3.5 --price-new 3.5 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["verdict"], "same GPU");
  EXPECT_EQ(j["data"], "MEASURED");
  EXPECT_NE(j["line"].get<std::string>().find("agree within noise"), std::string::npos) << j["line"];
  ASSERT_EQ(j["lengths"].size(), 2u);
  EXPECT_NEAR(j["lengths"][0]["speedup"].get<double>(), 1 / kAgain, 1e-9);
}

// The same GPU model in two machines: steps 0.5% apart resolve as a difference on a long run, yet
// are noise between machines; 15% apart is a difference the page names (this suite's intervals are about +-5%).
TEST(Decide, OneGpuModelInTwoMachinesDiffersOnlyBeyondTheSameBand) {
  for (const auto& [scale, said] : {std::pair{1.005, "agree within noise"}, std::pair{1.15, "yet their steps differ"}}) {
    const fs::path other = slower_suite(fmt::format("suite_slower_{}", scale), scale);
    const Result r = run("decide " + kSuite + " " + other.string() + " --price-old 3.5 --price-new 3.5 --json");
    ASSERT_EQ(r.code, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["verdict"], "same GPU");
    EXPECT_NE(j["line"].get<std::string>().find(said), std::string::npos) << scale << ": " << j["line"];
  }
}

TEST(Decide, TheVerdictLineComesFirstAndEveryRowSaysWhatItsNumbersAre) {
  const Result r = run("decide " + kSuite + " " + suite_again());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("Verdict\nSAME GPU:", 0), 0u) << r.out.substr(0, 200);
  // Every table row of the page ends in its data tag.
  std::istringstream lines(r.out);
  int tagged = 0;
  bool in_table = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("---", 0) == 0) {
      in_table = true;
      continue;
    }
    if (line.empty()) in_table = false;
    if (!in_table || line.find("  ") == std::string::npos) continue;
    if (line.find("Speedup =") == 0 || line.find("The catalog") == 0 || line.find("Hardware ratios") == 0) continue;
    ++tagged;
  }
  EXPECT_GT(tagged, 10);
  EXPECT_EQ(r.out.find("EXAMPLE DATA"), std::string::npos);
}

TEST(Decide, TheGuidesFiguresGiveLongContextOnlyAndStayExampleData) {
  const std::string logs = kExamples + "/example_h200_handwritten.log " + kExamples + "/example_b200_handwritten.log";
  // The guide's two runs used different torch versions: refused, then compared when forced.
  expect_error("decide " + logs + " --price-old 3.50 --price-new 6.00", 2, "the two stacks differ (torch 2.13.0");
  const Result r = run("decide " + logs + " --price-old 3.50 --price-new 6.00 --force --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["verdict"], "upgrade for long context only");
  EXPECT_EQ(j["data"], "EXAMPLE DATA");
  EXPECT_NE(j["line"].get<std::string>().find("from 32k tokens on"), std::string::npos) << j["line"];
  EXPECT_NEAR(j["break_even"].get<double>(), 6.0 / 3.5, 1e-12);
  const Result text = run("decide " + logs + " --price-old 3.50 --price-new 6.00 --force");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_EQ(text.out.rfind("EXAMPLE DATA: " + kExamples + "/example_h200_handwritten.log: hand-written", 0), 0u) << text.out.substr(0, 200);
  EXPECT_NE(text.out.find("SOFTWARE DIFFERS"), std::string::npos);
  EXPECT_NE(text.out.find("[EXAMPLE DATA] UPGRADE FOR LONG CONTEXT ONLY"), std::string::npos);
  EXPECT_EQ(text.out.find("MEASURED"), std::string::npos) << "example data called measured";
}

// Cheaper from some length on is "for long context only" when every shorter length is decided
// dearer; one the noise leaves undecided is measured more first (the H100 predicted from the
// suite: 4k cheaper, 2k inside the break-even).
TEST(Decide, AnUndecidedShorterLengthIsMeasuredMoreNotLongContext) {
  const Result r = run("decide " + kSuite + " --to h100 --price-old 3 --price-new 2 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["verdict"], "measure more") << j["line"];
  EXPECT_NE(j["line"].get<std::string>().find("at 2048 tokens"), std::string::npos) << j["line"];
}

TEST(Decide, NeedingADtypeTheOldGpuLacksIsACapabilityVerdict) {
  const std::string logs = kExamples + "/example_h200_handwritten.log " + kExamples + "/example_b200_handwritten.log";
  const Result r = run("decide " + logs + " --price-old 3.50 --price-new 6.00 --force --need-dtype nvfp4 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["verdict"], "upgrade for capability");
}

// A needed dtype the old GPU executes and the new one cannot: whatever the speed and the prices,
// the new GPU scores zero there (an A100 runs no fp8).
TEST(Decide, NeedingADtypeTheNewGpuLacksIsNoUpgrade) {
  const Result r = run("decide " + kSuite + " --to a100-sxm --need-dtype fp8 --price-old 3.5 --price-new 1 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const json d = json::parse(r.out);
  EXPECT_EQ(d["verdict"], "do not upgrade") << d["line"];
  EXPECT_NE(d["line"].get<std::string>().find("the recipe needs fp8, which the NVIDIA H200 executes and the a100-sxm "
                                              "cannot"), std::string::npos) << d["line"];
}

TEST(Decide, WithoutPricesItSaysTheSpeedupAndAsksForThem) {
  const std::string logs = kExamples + "/example_h200_handwritten.log " + kExamples + "/example_b200_handwritten.log";
  const Result r = run("decide " + logs + " --force --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["verdict"], "no prices");
  EXPECT_NE(j["line"].get<std::string>().find("1.69-2.03x"), std::string::npos) << j["line"];
}

// A manifest kept gzip-compressed (the folder compressed file by file) is read as the plain one:
// the same decision, not "a NUL byte" in binary.
TEST(Decide, AGzipCompressedManifestReadsAsThePlainOne) {
  const fs::path gz = edited_suite("suite_manifest_gz", [](json&) {});
  ASSERT_EQ(std::system(fmt::format("gzip -f {}", (gz / "manifest.json").string()).c_str()), 0);
  fs::rename(gz / "manifest.json.gz", gz / "manifest.json");
  const Result plain = run("decide " + kSuite + " --to h100 --price-old 3 --price-new 2 --json");
  const Result r = run("decide " + gz.string() + " --to h100 --price-old 3 --price-new 2 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(json::parse(r.out)["line"], json::parse(plain.out)["line"]);
}

TEST(Decide, BadInputIsRefusedNamingWhat) {
  const fs::path empty = fs::path(::testing::TempDir()) / "not_a_suite";
  fs::create_directories(empty);
  expect_error("decide " + empty.string() + " " + kSuite, 2, "not a suite folder (no manifest.json");
  const fs::path other_kind = edited_suite("suite_other_kind", [](json& m) { m["type"] = "something else"; });
  expect_error("decide " + other_kind.string() + " " + kSuite, 2, "not a suite manifest");
  const fs::path newer = edited_suite("suite_newer", [](json& m) { m["version"] = 99; });
  expect_error("decide " + newer.string() + " " + kSuite, 2, "manifest version 99");
  expect_error("decide " + kSuite, 2, "holds one GPU's measurements (NVIDIA H200): give the other GPU's folder, or --to GPU");
  expect_error("decide " + kSuite + " " + suite_again() + " --price-old 0 --price-new 3", 2, "--price-old: must be positive");
  expect_error("decide " + kSuite + " " + suite_again() + " --price-old 3", 2, "give both --price-old and --price-new");
  // A manifest that says another depth than its parts ran: the suite is not one run.
  const fs::path deeper = edited_suite("suite_3_layers", [](json& m) { m["workload"]["layers"] = 3; });
  expect_error("decide " + kSuite + " " + deeper.string(), 1,
               "sweep.jsonl is of another run than the suite's (layers 2 vs 3; the sweep's, then the manifest's");
}

TEST(Decide, AnInterruptedSuiteIsReadForWhatItFinishedAndSaysWhatIsMissing) {
  const fs::path cut = slower_suite("suite_interrupted", 1.01);  // measured again, then cut short
  json m = json::parse(slurp((cut / "manifest.json").string()));
  for (json& p : m["parts"]) {
    if (p["name"] == "sweep") p["status"] = "interrupted";
  }
  std::ofstream(cut / "manifest.json") << m.dump(2);
  const Result r = run("decide " + kSuite + " " + cut.string() + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["verdict"], "measure more");
  ASSERT_FALSE(j["warnings"].empty());
  EXPECT_NE(j["warnings"][0].get<std::string>().find("part sweep is interrupted"), std::string::npos) << j["warnings"];
}

TEST(Decide, APageWithItsVerdictFirst) {
  const fs::path out = fs::path(::testing::TempDir()) / "decide_page";
  fs::remove_all(out);
  const Result r = run("decide " + kSuite + " " + suite_again() + " --price-old 3 --price-new 3 -o " + out.string());
  if (report_tools_missing(r)) GTEST_SKIP() << r.err;
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string md = slurp((out / "report.md").string());
  EXPECT_LT(md.find("SAME GPU:"), md.find("Why, in the ml-engineering guide's order")) << md.substr(0, 400);
  EXPECT_TRUE(fs::exists(out / "report.html"));
}

// With one folder and --to, -o writes the same page as of two folders, part 2 PREDICTED on every
// row and in the verdict; with the catalog alone, the catalog's page, its verdict first.
TEST(Decide, EveryWayOfCallingItWritesItsPage) {
  const fs::path predicted = fs::path(::testing::TempDir()) / "decide_page_predicted";
  fs::remove_all(predicted);
  const Result p = run("decide " + kSuite + " --to b200 --price-old 3.5 --price-new 6 -o " + predicted.string());
  if (report_tools_missing(p)) GTEST_SKIP() << p.err;
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out.rfind("PREDICTED: ", 0), 0u) << p.out.substr(0, 300);
  const std::string md = slurp((predicted / "report.md").string());
  const size_t verdict = md.find("[PREDICTED] "), table = md.find("The training step per sequence length");
  ASSERT_NE(verdict, std::string::npos) << md.substr(0, 600);
  EXPECT_LT(verdict, table);
  // What is predicted says so; only the old GPU's own rows (its memory fit, its stack) are its
  // measurements, and a predicted range is never called a 95% interval.
  for (size_t at = md.find("MEASURED"); at != std::string::npos; at = md.find("MEASURED", at + 1)) {
    const std::string line = md.substr(md.rfind('\n', at) + 1, md.find('\n', at) - md.rfind('\n', at) - 1);
    EXPECT_TRUE(line.find("NVIDIA H200 |") != std::string::npos || line.find(" | - |  | MEASURED |") != std::string::npos)
        << "called measured: " << line;
  }
  EXPECT_NE(md.find("| NVIDIA B200 SXM | 253326 (a guess: 62x the longest measured) |"), std::string::npos) << md;
  EXPECT_EQ(md.find("95% interval"), std::string::npos) << md;
  EXPECT_NE(md.find("| predicted range |"), std::string::npos) << md;
  EXPECT_NE(md.find("Speedup new/old (band: predicted range, worst to best case)"), std::string::npos) << md;
  // A predicted interval that holds the break-even is settled on the new GPU, not by more steps:
  // the verdict names the measurement the prediction says narrows it most.
  EXPECT_NE(p.out.find("MEASURE MORE"), std::string::npos) << p.out.substr(0, 600);
  EXPECT_NE(p.out.find("measure on the b200-sxm first the step's GEMMs shape by shape (upgradebench mamf --shapes-of "
                       "llama-3.1-8b --seqlen 2048 --layers 2"), std::string::npos) << p.out.substr(0, 600);
  EXPECT_EQ(p.out.find("--steps 30"), std::string::npos) << p.out.substr(0, 600);
  const Result j = run("decide " + kSuite + " --to b200 --price-old 3.5 --price-new 6 --json");
  const json d = json::parse(j.out);
  EXPECT_EQ(d["data"], "PREDICTED");
  EXPECT_EQ(d["speedup_range"], "predicted: the worst to the best case");
  ASSERT_EQ(d["lengths"].size(), 2u) << "a prediction at each length the sweep ran";
  for (const auto& l : d["lengths"]) EXPECT_GT(l["speedup"].get<double>(), 1.0) << l;

  const fs::path catalog = fs::path(::testing::TempDir()) / "decide_page_catalog";
  fs::remove_all(catalog);
  const Result c = run("decide --from h200 --to b200 -o " + catalog.string());
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(c.out.rfind("Verdict: ", 0), 0u) << c.out.substr(0, 300);
  const std::string cmd = slurp((catalog / "report.md").string());
  EXPECT_LT(cmd.find("Verdict: "), cmd.find("peak bf16 TFLOPS"));
  EXPECT_NE(cmd.find("FROM THE CATALOG"), std::string::npos);
}

// Runs of the suite's workload with other memory levers (the hand-written levers fixtures, made
// the suite's 2 layers with fp32 master weights), for the old GPU.
std::string lever_runs(const std::vector<std::string>& names) {
  const fs::path dir = fs::path(::testing::TempDir()) / "decide_levers";
  fs::create_directories(dir);
  std::string args;
  for (const std::string& n : names) {
    std::ifstream in(kFx + "/levers/" + n + ".jsonl");
    std::string all, line;
    while (std::getline(in, line)) {
      json r = json::parse(line);
      if (r["type"] == "context") r["config"]["layers"] = 2, r["config"]["master_weights"] = true;
      all += r.dump() + "\n";
    }
    std::ofstream((dir / (n + ".jsonl")).string()) << all;
    args += " " + (dir / (n + ".jsonl")).string();
  }
  return args;
}

// The memory question per lever: 200000 tokens fit the B200 (the suite's fit at its capacity) and
// not the H200 without levers, by fits carried far past the suite's lengths: measure first. With
// a run whose levers reach it on the H200, the length is a cost in step time, not a capability;
// with levers that fall short, the reasons name the furthest.
TEST(Decide, ALengthALeverReachesOnTheOldGpuIsACostNotACapability) {
  const std::string base = "decide " + kSuite + " --to b200 --need-seqlen 200000 --json";
  // The suite ran 2k and 4k: the H200's 187585 and the B200's 253326 are a line carried 46x and
  // 62x past them, a guess that decides nothing. Measure near the length first.
  const json without = json::parse(run(base).out);
  EXPECT_EQ(without["verdict"], "measure more") << without["line"];
  EXPECT_NE(without["line"].get<std::string>().find("whether 200000 tokens per sequence fit rests on the NVIDIA H200's "
                                                    "longest sequence, 187585 tokens is 46x the longest length measured "
                                                    "(4096)"), std::string::npos) << without["line"];
  EXPECT_EQ(without["warnings"].size(), 2u) << without["warnings"].dump(1);

  const Result r = run(base + " --levers" + lever_runs({"checkpointing", "tiles_chunked", "offloaded_checkpoints"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const json with = json::parse(r.out);
  EXPECT_NE(with["verdict"], "upgrade for capability") << with["line"];
  EXPECT_EQ(with["data"], "EXAMPLE DATA") << "hand-written lever runs make the page example data";
  ASSERT_EQ(with["levers"].size(), 4u);
  EXPECT_EQ(with["levers"][0]["levers"], "none");  // the suite's own sweep
  EXPECT_EQ(with["levers"][3]["levers"], "checkpointing + MLP tiles + chunked loss + offloaded checkpoints");
  EXPECT_TRUE(with["levers"][2]["longest"]["h200-sxm"]["capped"].get<bool>()) << "measured out of memory on the H200";
  bool said = false;
  for (const auto& reason : with["reasons"]) {
    said = said || reason.get<std::string>().find("reaches the 200000 tokens the team needs with checkpointing + MLP "
                                                  "tiles + chunked loss + offloaded checkpoints") != std::string::npos;
  }
  EXPECT_TRUE(said) << with["reasons"].dump(1);

  const json short_of_it = json::parse(run(base + " --levers" + lever_runs({"checkpointing"})).out);
  EXPECT_EQ(short_of_it["verdict"], "measure more") << short_of_it["line"];
  EXPECT_NE(short_of_it["reasons"].dump().find("no lever measured takes the NVIDIA H200 to 200000 tokens (the furthest: "
                                               "187585 with none"), std::string::npos) << short_of_it["reasons"].dump(1);
  // A lever run of another GPU is not the old GPU's.
  {
    const fs::path dir = fs::path(::testing::TempDir()) / "decide_levers";
    std::ifstream in((dir / "checkpointing.jsonl").string());
    std::string all, line;
    while (std::getline(in, line)) {
      json r = json::parse(line);
      if (r["type"] == "context") r["gpus"][0]["name"] = "NVIDIA B200";
      all += r.dump() + "\n";
    }
    std::ofstream((dir / "b200_run.jsonl").string()) << all;
    const Result other = run(base + " --levers " + (dir / "b200_run.jsonl").string());
    EXPECT_EQ(other.code, 2) << other.err;
    EXPECT_NE(other.err.find("measured on NVIDIA B200, not on the old GPU"), std::string::npos) << other.err;
  }
  // --levers needs the old GPU's sweep to stand beside.
  const Result catalog_only = run("decide --from h200 --to b200 --levers" + lever_runs({"checkpointing"}));
  EXPECT_EQ(catalog_only.code, 2);
  EXPECT_NE(catalog_only.err.find("--levers goes with the old GPU's suite folder"), std::string::npos) << catalog_only.err;
}

// Both files' own words head the page of two example files, not the first file's alone.
TEST(Decide, EachExampleFileIsNamedInTheBanner) {
  const std::string logs = kExamples + "/example_h200_handwritten.log " + kExamples + "/example_b200_handwritten.log";
  const Result r = run("decide " + logs + " --force");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string first = r.out.substr(0, r.out.find('\n'));
  EXPECT_NE(first.find("example_h200_handwritten.log"), std::string::npos) << first;
  EXPECT_NE(first.find("example_b200_handwritten.log"), std::string::npos) << first;
  // A measured file beside an example one: the banner names the example file, not the first of
  // its GPU's files.
  std::string b200 = measured_again(slurp(kSuite + "/sweep.jsonl"), 0.5);
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"NVIDIA H200", "NVIDIA B200"}, {"h200-sxm", "b200-sxm"},
                                 {kSuiteGpu, kOtherGpu}}) {
    for (size_t at; (at = b200.find(from)) != std::string::npos;) b200.replace(at, from.size(), to);
  }
  const Result mixed = run("decide " + kSuite + "/sweep.jsonl " + kFx + "/mamf_finder_h200.txt " +
                           write_file("b200_sweep.jsonl", b200));
  ASSERT_EQ(mixed.code, 0) << mixed.err;
  const std::string banner = mixed.out.substr(0, mixed.out.find('\n'));
  EXPECT_NE(banner.find("EXAMPLE DATA: " + kFx + "/mamf_finder_h200.txt:"), std::string::npos) << banner;
  EXPECT_EQ(banner.find("sweep.jsonl"), std::string::npos) << banner;
}

// Energy: the suite's steps recorded their power, so the page gives tokens per joule and, with a
// price of electricity and a PUE, its cost per token; benchmark.py's logs say they have none.
TEST(Decide, TokensPerJouleAndTheElectricityPerToken) {
  const Result r = run("decide " + kSuite + " " + suite_again() + " --price-old 3 --price-new 3 --power-price 0.12 --pue 1.3 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  bool said = false;
  for (const auto& line : j["reasons"]) said = said || line.get<std::string>().rfind("Energy: ", 0) == 0;
  EXPECT_TRUE(said) << j["reasons"];
  const Result text = run("decide " + kSuite + " " + suite_again() + " --price-old 3 --price-new 3 --power-price 0.12 --pue 1.3");
  EXPECT_NE(text.out.find("Energy per sequence length"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("PUE 1.30"), std::string::npos);
  // At a tenth of a cent per kWh the electricity per million tokens keeps two significant digits.
  const Result cheap = run("decide " + kSuite + " " + suite_again() + " --price-old 3 --price-new 3 --power-price 0.001");
  ASSERT_EQ(cheap.code, 0) << cheap.err;
  EXPECT_EQ(cheap.out.find("0.00000"), std::string::npos) << cheap.out;
  EXPECT_NE(cheap.out.find("e-0"), std::string::npos) << cheap.out;
  const std::string logs = kExamples + "/example_h200_handwritten.log " + kExamples + "/example_b200_handwritten.log";
  const Result none = run("decide " + logs + " --force");
  EXPECT_NE(none.out.find("neither run recorded the GPU's power"), std::string::npos) << none.out;
  expect_error("decide " + kSuite + " " + suite_again() + " --power-price 0.12 --pue 0.8", 2, "--pue: '0.8' is outside 1 to 10");
  expect_error("decide " + kSuite + " " + suite_again() + " --power-price -1", 2, "--power-price");
}

// compare reads `bandwidth` records too: each operation and size side by side, the best copy beyond
// L2 against the datasheet's ratio.
TEST(Compare, BandwidthRecordsSizeBySize) {
  const std::string bw = kSuite + "/bandwidth.jsonl";
  const Result r = run("compare " + bw + " " + suite_again() + "/bandwidth.jsonl --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["rows"].size(), 6u);
  EXPECT_NEAR(j["hbm_copy_ratio"].get<double>(), 1 / kAgain, 1e-9);
  EXPECT_EQ(j["data"], "MEASURED");
  expect_error("compare " + bw + " " + kSuite + "/mamf.jsonl", 2, "compare needs two logs of one kind");
}

// A suite whose copies the driver's memcpy timed beside one whose copies a tiled kernel timed:
// decide refuses the pair as compare does, naming both kernels, in folders and in files.
TEST(Decide, CopiesTimedByAnotherKernelAreRefused) {
  const fs::path other = b200_suite("suite_memcpy_copies", 0.6);
  const fs::path bw = other / "bandwidth.jsonl";
  replace_in_file(bw, "tiled8cs", "memcpy");
  const std::string refused = "with different kernels (tiled8cs vs memcpy, old vs new): measure both with one --kernel";
  expect_error("decide " + kSuite + " " + other.string() + " --price-old 3.5 --price-new 6", 2, refused);
  expect_error(fmt::format("decide {0}/sweep.jsonl {0}/bandwidth.jsonl {1}/sweep.jsonl {2}", kSuite, other.string(), bw.string()),
               2, refused);
  EXPECT_EQ(run("decide " + kSuite + " " + suite_again() + " --price-old 3.5 --price-new 6").code, 0);
}

// A suite measured on GPU 1 (--device 1): every part measures that GPU, and the folder is of the GPU
// its parts measured, not of env.json's first (another model, on a mixed machine).
TEST(Suite, EveryPartMeasuresTheDeviceAsked) {
  const Result plan = run("suite --out " + (fs::path(::testing::TempDir()) / "ub-plan-device").string() +
                          " --dry-run --layers 2 --seqlens 2k --device 1 --json");
  ASSERT_EQ(plan.code, 0) << plan.err;
  const json parts = json::parse(plan.out)["parts"];
  size_t measuring = 0;
  for (const json& p : parts) {
    if (p["name"] == "env") continue;
    const std::vector<std::string> c = p["command"].get<std::vector<std::string>>();
    const auto at = std::find_if(c.begin(), c.end(), [](const std::string& a) { return a == "--devices" || a == "--device"; });
    ASSERT_NE(at, c.end()) << p["name"] << " measures GPU 0";
    ASSERT_NE(at + 1, c.end());
    EXPECT_EQ(*(at + 1), "1") << p["name"];
    ++measuring;
  }
  EXPECT_GE(measuring, 6u) << plan.out;
}

TEST(Decide, ASuiteOfAnotherDeviceIsOfTheGpuItsPartsMeasured) {
  const auto on_device = [](const std::string& name, const std::vector<std::string>& args) {
    const fs::path dir = edited_suite(name, [&](json& m) { m["workload"]["train_args"] = args; });
    json env = json::parse(slurp((dir / "env.json").string()));
    json other = env["gpus"][0];
    other["name"] = "NVIDIA H100 80GB HBM3", other["catalog_id"] = "h100-sxm", other["memory_gib"] = 79.1;
    other["uuid"] = "GPU-00000000-6d9f-1c74-d0fa-60ace3bdd669";
    env["gpus"][0]["index"] = 1;
    env["gpus"].insert(env["gpus"].begin(), other);
    std::ofstream(dir / "env.json") << env.dump(2);
    return dir.string();
  };
  const std::string second = on_device("suite_device_1", {"--layers", "2", "--device", "1"});
  const Result r = run("decide " + second + " --to b200 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("NVIDIA H200"), std::string::npos) << r.out;
  const std::string first = on_device("suite_device_0", {"--layers", "2"});
  expect_error("decide " + first + " --to b200", 1, "measured on NVIDIA H200, while " + first + " is of NVIDIA H100 80GB HBM3");
  expect_error("decide " + on_device("suite_device_5", {"--layers", "2", "--device", "5"}) + " --to b200", 1,
               "lists 2 GPU(s), where the suite's parts measured GPU 5 (--device): the folder was edited");
}

// `suite` writes its whole plan before it runs a part: a manifest without a part every plan has
// (the sweep, or every part), or with a part other than a decomposition skipped, is an edited one,
// refused by decide and by a resume alike, not read as a finished suite that measured less.
TEST(Decide, AManifestMissingAPartOrSkippingTheSweepIsEdited) {
  const auto without = [](const std::string& name) {
    return [name](json& m) {
      json kept = json::array();
      for (const json& p : m["parts"]) {
        if (p["name"] != name) kept.push_back(p);
      }
      m["parts"] = kept;
    };
  };
  const fs::path no_sweep = edited_suite("manifest_no_sweep", without("sweep"));
  const fs::path none = edited_suite("manifest_no_parts", [](json& m) { m["parts"] = json::array(); });
  const fs::path skipped = edited_suite("manifest_sweep_skipped", [](json& m) {
    for (json& p : m["parts"]) {
      if (p["name"] == "sweep") p["status"] = "skipped";
    }
  });
  for (const auto& [dir, says] : {std::pair{no_sweep, std::string("no part sweep, which every suite's plan has: the manifest was edited")},
                                  std::pair{none, std::string("no part env, which every suite's plan has")},
                                  std::pair{skipped, std::string("part sweep is skipped, where a suite skips only a "
                                                                 "decomposition: the manifest was edited")}}) {
    expect_error("decide " + kSuite + " " + dir.string() + " --price-old 3.5 --price-new 6", 1, says);
    expect_error("suite --out " + dir.string() + " --resume --layers 2 --seqlens 2k,4k --no-find-max --dry-run", 1, says);
  }
}

// A part measured again after the loader found another cuDNN (a resume on a changed machine): the
// suite holds two stacks, refused naming the part; the same files given one by one are compared,
// the file of the other stack named.
TEST(Decide, APartOfAnotherStackThanTheSuitesIsNamed) {
  const fs::path other = b200_suite("suite_part_other_cudnn", 0.6);
  const fs::path attention = other / "attention.jsonl";
  replace_in_file(attention, "\"version\":\"9.19.0\"", "\"version\":\"9.10.0\"");
  expect_error("decide " + kSuite + " " + other.string() + " --price-old 3.5 --price-new 6", 1,
               "part attention (attention.jsonl) ran on cudnn 9.10.0, where env.json says 9.19.0: one suite holds one "
               "stack's measurements");
  const Result files = run(fmt::format("decide {0}/sweep.jsonl {0}/attention.jsonl {1}/sweep.jsonl {2} --price-old 3.5 "
                                       "--price-new 6 --json", kSuite, other.string(), attention.string()));
  ASSERT_EQ(files.code, 0) << files.err;
  EXPECT_NE(json::parse(files.out)["warnings"].dump().find(attention.string() + ": measured with cudnn 9.10.0, where its "
                                                           "training sweep of NVIDIA B200 says 9.19.0"),
            std::string::npos) << files.out;
  // compare of the two attention runs names the library that differs.
  const Result both = run("compare " + kSuite + "/attention.jsonl " + attention.string());
  ASSERT_EQ(both.code, 0) << both.err;
  EXPECT_NE(both.err.find("cudnn differs: 9.19.0 (old) vs 9.10.0 (new)"), std::string::npos) << both.err;
}

// A resume measures the folder's lengths: --seqlens of others is said not measured.
TEST(Suite, AResumeSaysLengthsItWillNotMeasure) {
  const fs::path dir = edited_suite("suite_resume_other_lengths", [](json&) {});
  const Result r = run("suite --out " + dir.string() + " --resume --layers 2 --seqlens 8k,16k --no-find-max --dry-run");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("measures its own lengths (2048,4096), not --seqlens 8192,16384"), std::string::npos) << r.err;
  const Result same = run("suite --out " + dir.string() + " --resume --layers 2 --seqlens 2k,4k --no-find-max --dry-run");
  EXPECT_EQ(same.code, 0) << same.err;
  EXPECT_EQ(same.err.find("its own lengths"), std::string::npos) << same.err;
  EXPECT_EQ(same.err.find("changes nothing"), std::string::npos) << same.err;
  // The plan's options are the first run's: a budget or a trace given to a resume is said unused.
  const Result planned = run("suite --out " + dir.string() + " --resume --layers 2 --seqlens 2k,4k --no-find-max --dry-run "
                             "--budget 1h --trace " + kFx + "/trace_kineto_small.json");
  EXPECT_EQ(planned.code, 0) << planned.err;
  EXPECT_NE(planned.err.find("runs its parts as its manifest recorded them, so --trace, --budget changes nothing"),
            std::string::npos) << planned.err;
}

// Files given one by one: the guide's 32-layer decompositions beside our 2-layer sweeps are said
// to be of another workload than the step they are set beside.
TEST(Decide, FilesOfAnotherWorkloadThanTheSweepAreSaid) {
  const fs::path other = b200_suite("suite_beside_printouts", 0.6);
  const Result r = run(fmt::format("decide {0}/sweep.jsonl {1}/guide/decompose_h200.txt {2}/sweep.jsonl "
                                   "{1}/guide/decompose_b200.txt --price-old 3.5 --price-new 6 --json",
                                   kSuite, kFx, other.string()));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(json::parse(r.out)["warnings"].dump().find("guide/decompose_h200.txt: a decomposition of another workload "
                                                       "than the training sweep"),
            std::string::npos) << r.out;
}

// A prediction from our records beside a run whose records say another attention: the page says
// so, as for benchmark.py's attn_backend.
TEST(Report, APredictionFromOurRecordsSaysAnotherAttention) {
  const std::string out = (fs::path(::testing::TempDir()) / "prediction_from_records.jsonl").string();
  fs::remove(out);
  ASSERT_EQ(run("predict --to b200 " + kSuite + "/sweep.jsonl --out " + out).code, 0);
  const fs::path b200 = b200_suite("suite_other_attention", 0.6);
  for (const auto& [attention, said] : {std::pair{std::string("cuDNN fused SDPA, causal"), false}, {std::string("eager"), true}}) {
    if (said) replace_in_file(b200 / "sweep.jsonl", "\"attention\":\"cuDNN fused SDPA, causal\"", "\"attention\":\"eager\"");
    const fs::path dir = fs::path(::testing::TempDir()) / "report_other_attention";
    fs::remove_all(dir);
    const Result r = run("report " + out + " " + (b200 / "sweep.jsonl").string() + " -o " + dir.string());
    if (report_tools_missing(r)) GTEST_SKIP() << r.err;
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(slurp((dir / "report.md").string()).find("ATTENTION BACKEND: the measured run's is eager") != std::string::npos,
              said) << attention;
  }
}

TEST(Decide, OldSpellingsOfThePricesStillWork) {
  const std::string logs = kExamples + "/example_h200_handwritten.log " + kExamples + "/example_b200_handwritten.log";
  const Result a = run("decide " + logs + " --price-from 3.50 --price-to 6.00 --force --json");
  const Result b = run("decide " + logs + " --price-old 3.50 --price-new 6.00 --force --json");
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
}

TEST(Suite, ThePlanFitsTheBudgetByLeavingOutWhatMattersLeast) {
  const Result full = run("suite --out /tmp/ub-plan --dry-run --layers 2 --json");
  ASSERT_EQ(full.code, 0) << full.err;
  const json all = json::parse(full.out);
  std::vector<std::string> names;
  for (const json& p : all["parts"]) names.push_back(p["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"env", "mamf", "mamf-step", "bandwidth", "attention", "sweep",
                                             "decompose-short", "decompose-long"}));
  EXPECT_TRUE(all["dropped"].empty());
  const double total = all["total_s"];
  // A budget just under the whole plan: the bisection goes first.
  const Result cut = run(fmt::format("suite --out /tmp/ub-plan --dry-run --layers 2 --json --budget {:.0f}s", total - 1));
  ASSERT_EQ(cut.code, 0) << cut.err;
  const json fit = json::parse(cut.out);
  ASSERT_FALSE(fit["dropped"].empty());
  EXPECT_NE(fit["dropped"][0].get<std::string>().find("--find-max"), std::string::npos) << fit["dropped"];
  EXPECT_LE(fit["total_s"].get<double>(), total - 1);
  expect_error("suite --out /tmp/ub-plan --dry-run --budget 10s", 2, "more than --budget 10 s");
  expect_error("suite --out /tmp/ub-plan --dry-run --budget 10x", 2, "--budget: '10x' is not a duration");
}
// The attention part measures the model's attention: within the window where every layer has the
// same one (Mistral), at full attention where windowed and full layers mix (Qwen2's
// max_window_layers), saying so.
TEST(Suite, TheAttentionPartMeasuresTheModelsWindow) {
  const auto attention_of = [](const std::string& options) {
    const Result r = run("suite --out /tmp/ub-plan --dry-run --seqlens 4k,64k --json " + options);
    EXPECT_EQ(r.code, 0) << r.err;
    const json plan = r.code == 0 ? json::parse(r.out) : json::object();
    for (const json& p : plan.value("parts", json::array())) {
      if (p["name"] == "attention") return p;
    }
    return json::object();
  };
  const json mistral = attention_of("--model mistral-7b-v0.1 --layers 2");
  const std::vector<std::string> command = mistral["command"];
  const auto window = std::find(command.begin(), command.end(), "--window");
  ASSERT_NE(window, command.end()) << mistral.dump();
  EXPECT_EQ(*(window + 1), "4096");
  EXPECT_NE(mistral["what"].get<std::string>().find("within the layers' window of 4096 tokens"), std::string::npos);
  const json full = attention_of("--model llama-3.1-8b --layers 2");
  EXPECT_EQ(full["command"].dump().find("--window"), std::string::npos) << full.dump();
  // The window's work, not full attention's: its estimate is the smaller.
  EXPECT_LT(mistral["estimate_s"].get<double>(), full["estimate_s"].get<double>());
  json qwen = json::parse(slurp(std::string(UB_DATA_DIR) + "/models/qwen2.5-7b.json"));
  qwen["use_sliding_window"] = true, qwen["max_window_layers"] = 2, qwen["sliding_window"] = 4096;
  const json mixed = attention_of("--layers 4 --model " + write_file("qwen2_mixed_windows.json", qwen.dump()));
  EXPECT_EQ(mixed["command"].dump().find("--window"), std::string::npos) << mixed.dump();
  EXPECT_NE(mixed["what"].get<std::string>().find("full causal as 2 of its 4 layers run it (the other 2 attend within a "
                                                  "window"), std::string::npos) << mixed["what"];
}


// A build without the GPU side refuses a suite before it makes a folder (the plan still prints).
// A resumed suite whose every part is done measures nothing: on a machine without the GPU side
// (here the binary copied alone) it prints where it stands, as docs/suite.md shows.
TEST(Suite, ResumingAFinishedSuiteNeedsNoGpuSide) {
  const fs::path alone = fs::path(::testing::TempDir()) / "cpu_side_alone";
  fs::remove_all(alone);
  fs::create_directories(alone);
  fs::copy_file(UB_BINARY, alone / "upgradebench");
  fs::permissions(alone / "upgradebench", fs::perms::owner_all);
  const fs::path folder = alone / "suite_h200_2l";
  fs::copy(kSuite, folder, fs::copy_options::recursive);
  const Result r = capture(fmt::format("UPGRADEBENCH_DATA={} {} suite --out {} --resume --layers 2 --seqlens 2k,4k "
                                       "--no-find-max 2>/dev/null", UB_DATA_DIR, (alone / "upgradebench").string(),
                                       folder.string()));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("decompose-long   done"), std::string::npos) << r.out;
  // With a part left to run, the GPU side is asked for.
  const std::string manifest = slurp((folder / "manifest.json").string());
  const size_t sweep = manifest.find("\"sweep\"");
  ASSERT_NE(sweep, std::string::npos);
  std::string pending = manifest;
  const size_t done = pending.find("\"done\"", sweep);
  ASSERT_NE(done, std::string::npos);
  pending.replace(done, 6, "\"failed\"");
  std::ofstream(folder / "manifest.json") << pending;
  const Result again = capture(fmt::format("UPGRADEBENCH_DATA={} {} suite --out {} --resume --layers 2 --seqlens 2k,4k "
                                           "--no-find-max 2>&1", UB_DATA_DIR, (alone / "upgradebench").string(),
                                           folder.string()));
  EXPECT_EQ(again.code, 1) << again.out;
  EXPECT_NE(again.out.find("no GPU side"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("the resume would run sweep; --resume --dry-run says why"), std::string::npos) << again.out;
  // A part done whose records are gone is not finished either: it runs again.
  std::ofstream(folder / "manifest.json") << manifest;
  fs::remove(folder / "mamf.jsonl");
  const Result gone = capture(fmt::format("UPGRADEBENCH_DATA={} {} suite --out {} --resume --layers 2 --seqlens 2k,4k "
                                          "--no-find-max 2>&1", UB_DATA_DIR, (alone / "upgradebench").string(),
                                          folder.string()));
  EXPECT_EQ(gone.code, 1) << gone.out;
  EXPECT_NE(gone.out.find("the resume would run mamf;"), std::string::npos) << gone.out;
}

// `--resume --dry-run` shows what the resume would run, with the command lines it would run them
// with, and changes nothing in the folder.
TEST(Suite, AResumesDryRunShowsThePartsItWouldRun) {
  const fs::path dir = edited_suite("suite_resume_dry_run", [](json& m) {
    for (json& p : m["parts"]) {
      if (p["name"] == "mamf-step") p["status"] = "pending";
    }
  });
  fs::remove(dir / "sweep.jsonl");
  const std::string manifest = slurp((dir / "manifest.json").string());
  const std::string args = fmt::format("suite --out {} --resume --layers 2 --seqlens 2k,4k --no-find-max --dry-run", dir.string());
  const Result r = run(args + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  std::map<std::string, json> parts;
  for (const json& p : j["parts"]) parts[p["name"].get<std::string>()] = p;
  EXPECT_EQ(parts["env"]["action"], "keep");
  EXPECT_TRUE(parts["env"]["command"].empty());
  EXPECT_EQ(parts["mamf-step"]["action"], "run");
  EXPECT_EQ(parts["sweep"]["action"], "run again");
  EXPECT_EQ(parts["sweep"]["why"], "done, but its records sweep.jsonl are missing");
  EXPECT_EQ(parts["sweep"]["command"], json({"sweep", "--seqlens", "2048,4096", "--layers", "2", "--out",
                                             (dir / "sweep.jsonl").string()}));
  EXPECT_DOUBLE_EQ(j["total_s"].get<double>(),
                   parts["mamf-step"]["estimate_s"].get<double>() + parts["sweep"]["estimate_s"].get<double>());
  const Result text = run(args);
  EXPECT_NE(text.out.find("2 of 8 parts would run"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("sweep: done, but its records sweep.jsonl are missing"), std::string::npos) << text.out;
  EXPECT_EQ(slurp((dir / "manifest.json").string()), manifest);
  EXPECT_FALSE(fs::exists(dir / "logs" / "sweep.earlier-1.jsonl"));
}

// A resume that would run a command of another workload than the manifest's refuses the folder.
TEST(Suite, AResumeRefusesAPartWhoseCommandRunsAnotherWorkload) {
  const fs::path dir = edited_suite("suite_resume_edited", [](json& m) {
    for (json& p : m["parts"]) {
      if (p["name"] == "sweep") {
        p["status"] = "pending";
        p["command"] = {"sweep", "--seqlens", "2048,4096", "--layers", "32", "--out", "sweep.jsonl"};
      }
    }
  });
  expect_error(fmt::format("suite --out {} --resume --layers 2 --seqlens 2k,4k --no-find-max --dry-run", dir.string()), 1,
               "part sweep's command runs another workload than the manifest's (layers 32 vs 2, the command's, then the "
               "workload's): the manifest was edited");
  // A part's name makes file names (its log, its earlier records): one that climbs out is refused.
  const fs::path named = edited_suite("suite_resume_named", [](json& m) { m["parts"][1]["name"] = "../../escaped"; });
  expect_error(fmt::format("suite --out {} --resume --layers 2 --seqlens 2k,4k --no-find-max --dry-run", named.string()), 1,
               "a part's name \"../../escaped\" is not one a suite writes");
}

// A suite is finished when `decide` can read it: a folder whose parts are all done, one of them
// another GPU's, is said to be unreadable rather than finished.
TEST(Suite, AFinishedFolderDecideRefusesIsNotCalledFinished) {
  const fs::path dir = edited_suite("suite_resume_unreadable", [](json&) {});
  std::string env = slurp((dir / "env.json").string());
  env.replace(env.find(kSuiteGpu), kSuiteGpu.size(), kOtherGpu);
  std::ofstream(dir / "env.json") << env;
  expect_error(fmt::format("suite --out {} --resume --layers 2 --seqlens 2k,4k --no-find-max", dir.string()), 1,
               fmt::format("every part of {} is done, and decide cannot read the folder:", dir.string()));
  // Its dry run says the same, after what it would run (nothing).
  const Result dry = run(fmt::format("suite --out {} --resume --layers 2 --seqlens 2k,4k --no-find-max --dry-run", dir.string()));
  EXPECT_EQ(dry.code, 1) << dry.out;
  EXPECT_NE(dry.out.find("nothing would run"), std::string::npos) << dry.out;
  EXPECT_NE(dry.err.find("decide cannot read the folder"), std::string::npos) << dry.err;
}

TEST(Suite, WithoutAGpuSideNothingIsStarted) {
  if (fs::exists(fs::path(UB_BINARY).parent_path() / "upgradebench-gpu")) GTEST_SKIP() << "this build has a GPU side";
  const fs::path out = fs::path(::testing::TempDir()) / "suite_no_gpu_side";
  fs::remove_all(out);
  expect_error("suite --out " + out.string(), 1, "this build of upgradebench has no GPU side");
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(run("suite --out " + out.string() + " --dry-run").code, 0);
}

TEST(Suite, AFolderInUseOrNotASuitesIsRefused) {
  expect_error("suite --out " + kSuite, 2, "is not empty: give a new folder, or --resume");
  const fs::path empty = fs::path(::testing::TempDir()) / "not_a_suite_either";
  fs::create_directories(empty);
  expect_error("suite --resume --out " + empty.string(), 2, "is not a suite folder");
  expect_error("suite --out " + kSuite + " --resume --layers 3", 2, "holds another workload (layers 2 vs 3, the folder's vs these options')");
}

// A suite is one GPU's: its env.json renamed to another GPU while its records still name the
// first is refused, not decided as the renamed GPU.
TEST(Decide, ASuiteWhosePartsNameAnotherGpuThanItsEnvIsRefused) {
  const fs::path renamed = slower_suite("suite_renamed_b200", 0.98);
  std::string env = slurp((renamed / "env.json").string());
  for (const auto& [from, to] : {std::pair{std::string("NVIDIA H200"), std::string("NVIDIA B200")},
                                 std::pair{std::string("h200-sxm"), std::string("b200-sxm")}}) {
    for (size_t at; (at = env.find(from)) != std::string::npos;) env.replace(at, from.size(), to);
  }
  std::ofstream(renamed / "env.json") << env;
  const Result r = run("decide " + kSuite + " " + renamed.string());
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("measured on NVIDIA H200, while " + renamed.string() + " is of NVIDIA B200"), std::string::npos) << r.err;
  // The name left alone and the catalog's entry changed: the entry picks the peaks it is held to.
  const fs::path other_entry = slower_suite("suite_other_entry", 0.98);
  std::string entry = slurp((other_entry / "env.json").string());
  for (size_t at; (at = entry.find("h200-sxm")) != std::string::npos;) entry.replace(at, 8, "b200-sxm");
  std::ofstream(other_entry / "env.json") << entry;
  expect_error("decide " + kSuite + " " + other_entry.string(), 1,
               "says its GPU is the catalog's h200-sxm, where env.json says b200-sxm: one suite holds one machine's "
               "measurements");
}

// A done sweep ran every length its command names, and those are the manifest's but what the
// budget dropped: a length asked for and never measured (a cut file, an edit) is refused, not left
// out of the verdict without a word.
TEST(Decide, ALengthTheSuiteAskedForAndNeverMeasuredIsRefused) {
  const fs::path asked = edited_suite("suite_asked_8k", [](json& m) { m["workload"]["seqlens"] = {2048, 4096, 8192}; });
  expect_error("decide " + asked.string() + " --to b200", 1,
               asked.string() + ": its manifest asks for 8192 tokens, which its sweep's command (--seqlens 2048,4096) leaves "
               "out and the budget did not drop: the folder was edited or damaged");
  const fs::path ran = edited_suite("suite_ran_8k", [](json& m) {
    m["workload"]["seqlens"] = {2048, 4096, 8192};
    for (json& p : m["parts"]) {
      if (p["name"] == "sweep") p["command"][2] = "2048,4096,8192";
    }
  });
  expect_error("decide " + ran.string() + " --to b200", 1,
               ran.string() + ": part sweep is done, but its records sweep.jsonl hold neither a step nor an out-of-memory "
               "record at 8192 tokens: the folder was edited or damaged (suite --resume measures the part again)");
  // The budget's dropping is said in the manifest: such a length is no finding.
  const fs::path dropped = edited_suite("suite_dropped_8k", [](json& m) {
    m["workload"]["seqlens"] = {2048, 4096, 8192};
    m["dropped"] = {"length 8192 (attention, sweep)"};
  });
  EXPECT_EQ(run("decide " + dropped.string() + " --to b200").code, 0);
}

// A fixture of H200 records measured again on a B200: every step 0.6x the time, each step record
// then given to `edit` (its out-of-memory lengths kept).
fs::path records_on_b200(const std::string& fixture, const std::string& name,
                         const std::function<void(json&)>& edit = [](json&) {}) {
  std::string b200;
  std::istringstream in(slurp(kFx + "/" + fixture));
  for (std::string line; std::getline(in, line);) {
    json r = json::parse(line);
    if (r["type"] == "train_step") {
      ub_test::measure_again(r, 0.6);
      edit(r);
    } else if (r["type"] == "context") {
      std::string text = r.dump();
      for (const auto& [from, to] : {std::pair{std::string("NVIDIA H200"), std::string("NVIDIA B200")},
                                     std::pair{std::string("h200-sxm"), std::string("b200-sxm")},
                                     std::pair{std::string("GPU-test"), std::string("GPU-best")}}) {
        for (size_t at; (at = text.find(from)) != std::string::npos;) text.replace(at, from.size(), to);
      }
      r = json::parse(text);
    }
    b200 += r.dump() + "\n";
  }
  const fs::path faster = fs::path(::testing::TempDir()) / name;
  std::ofstream(faster) << b200;
  return faster;
}

// The hand-written H200 run without levers, measured again on a B200.
fs::path levers_none_on_b200() { return records_on_b200("levers/none.jsonl", "levers_none_b200.jsonl"); }

// Dropless routing: the busiest expert sets the step's pace. Two runs whose busiest expert took
// other counts of tokens routed other work, and decide refuses them as two workloads (--force
// compares them, saying so before the verdict).
TEST(Decide, RunsWhoseExpertsTookOtherTokensAreTwoWorkloads) {
  // Qwen3-30B-A3B's 128 experts take top 8 of the step's tokens: 256 each on average at 4k, in
  // proportion at the other lengths.
  const auto tokens = [](int64_t most) {
    return [most](json& r) {
      const int64_t per_4k = r["seqlen"].get<int64_t>() / 4096;
      r["expert_tokens"] = {{"min", 10}, {"median", 256 * per_4k}, {"max", most * per_4k}};
    };
  };
  const auto of_qwen3 = [](const fs::path& f) {
    std::ofstream(f.string() + ".tmp") << replaced(slurp(f.string()), "llama-3.1-8b", "qwen3-30b-a3b");
    fs::rename(f.string() + ".tmp", f);
    return f;
  };
  const fs::path old_run = fs::path(::testing::TempDir()) / "experts_h200.jsonl";
  {
    std::string text;
    std::istringstream in(slurp(kFx + "/records_h200.jsonl"));
    for (std::string line; std::getline(in, line);) {
      json r = json::parse(line);
      if (r["type"] == "train_step") tokens(320)(r);
      text += r.dump() + "\n";
    }
    std::ofstream(old_run) << text;
  }
  of_qwen3(old_run);
  const fs::path alike = of_qwen3(records_on_b200("records_h200.jsonl", "experts_b200_alike.jsonl", tokens(330)));
  const fs::path other = of_qwen3(records_on_b200("records_h200.jsonl", "experts_b200_other.jsonl", tokens(4096)));
  EXPECT_EQ(run("decide " + old_run.string() + " " + alike.string() + " --price-old 3 --price-new 6").code, 0);
  expect_error("decide " + old_run.string() + " " + other.string() + " --price-old 3 --price-new 6", 2,
               "at 4096 tokens the busiest expert took 320 tokens on the NVIDIA H200 and 4096 on the NVIDIA B200: the "
               "two runs routed their tokens differently");
  const Result forced = run("decide " + old_run.string() + " " + other.string() + " --price-old 3 --price-new 6 --force");
  ASSERT_EQ(forced.code, 0) << forced.err;
  EXPECT_NE(forced.out.find("WORKLOAD DIFFERS"), std::string::npos) << forced.out;
}

// Lengths timed over too few steps for a 95% interval (two each here) decide nothing: MEASURE MORE,
// naming the command that would, never a verdict from a min..max of two.
TEST(Decide, TooFewStepsForAnIntervalDecideNothing) {
  const Result r = run("decide " + kFx + "/levers/none.jsonl " + levers_none_on_b200().string() +
                       " --price-old 3.5 --price-new 6 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const json d = json::parse(r.out);
  EXPECT_EQ(d["verdict"], "measure more") << d["line"];
  EXPECT_NE(d["line"].get<std::string>().find("too few steps were timed for a 95% interval"), std::string::npos) << d["line"];
  // Nor does any reason on the page: no length is "costlier per token", nothing "COSTS MORE".
  const std::string reasons = d["reasons"].dump();
  EXPECT_EQ(reasons.find("costlier"), std::string::npos) << reasons;
  EXPECT_EQ(reasons.find("COSTS MORE"), std::string::npos) << reasons;
  EXPECT_NE(reasons.find("At 4k-8k tokens too few steps were timed for a 95% interval: no cost verdict."), std::string::npos)
      << reasons;
}

// The new GPU's sweep ran without levers and went out of memory at 16384: the ladder's rung without
// levers says on the new GPU what the headroom line says (capped below it), not the old run's fit.
TEST(Decide, ALeverRungTheNewGpuMeasuredHoldsItsMeasurement) {
  const Result r = run("decide " + kFx + "/levers/none.jsonl " + levers_none_on_b200().string() +
                       " --price-old 3.5 --price-new 6 --json --levers " + kFx + "/levers/checkpointing.jsonl");
  ASSERT_EQ(r.code, 0) << r.err;
  const json d = json::parse(r.out);
  const json headroom = d["longest"]["new"];
  ASSERT_TRUE(headroom["capped"].get<bool>()) << headroom;
  const json none = d["levers"][0];
  ASSERT_EQ(none["levers"], "none");
  EXPECT_EQ(none["longest"]["b200-sxm"]["tokens"], headroom["tokens"]) << none;
  EXPECT_TRUE(none["longest"]["b200-sxm"]["capped"].get<bool>()) << none;
  // The rung the B200 did not run is still read from the H200's run at the B200's capacity.
  EXPECT_FALSE(d["levers"][1]["longest"]["b200-sxm"]["capped"].get<bool>()) << d["levers"][1];
}

// Each part's records are its own: a decompose-long part pointing at the short decomposition
// would count one measurement twice, and predict a 4096-token step from a 2048-token one.
TEST(Decide, APartReadingAnotherPartsRecordsIsRefused) {
  const fs::path same = edited_suite("suite_same_decomposition", [](json& m) {
    for (json& p : m["parts"]) {
      if (p["name"] == "decompose-long") p["records"] = "decompose-short.jsonl";
    }
  });
  expect_error("decide " + same.string() + " --to b200 --price-old 3.5 --price-new 6", 1,
               "parts decompose-short and decompose-long both name decompose-short.jsonl as their records");
  const fs::path swapped = edited_suite("suite_swapped_decomposition", [](json& m) {
    for (json& p : m["parts"]) {
      if (p["name"] == "decompose-long") p["records"] = "decompose-short.jsonl";
      if (p["name"] == "decompose-short") p["records"] = "decompose-long.jsonl";
    }
  });
  expect_error("decide " + swapped.string() + " --to b200 --price-old 3.5 --price-new 6", 1,
               "part decompose-short ran with --seqlen 2048, its records decompose-long.jsonl decompose a step of 4096 tokens");
  const fs::path killed = edited_suite("suite_done_killed", [](json& m) {
    for (json& p : m["parts"]) {
      if (p["name"] == "sweep") p["exit_code"] = 137;
    }
  });
  expect_error("decide " + killed.string() + " --to b200 --price-old 3.5 --price-new 6", 1,
               "part sweep is done, but it exited with code 137");
  for (const std::string option : {"--model llama-3.1-70b", "--seqlens 65536", "--layers 80"}) {
    expect_error("decide " + kSuite + " --to b200 " + option, 2, "does not go with a suite folder and --to");
  }
}

// A part no GPU of its model measures is refused whether or not the other side has it: the
// step's own products (shown beside the step, paired with nothing) twenty times faster than an
// H200's dense peak allows.
TEST(Decide, APartPastTheGpusPeakIsRefusedPairedOrNot) {
  const fs::path fast = slower_suite("suite_step_products_past_peak", kAgain);
  const std::string step_products = (fast / "mamf-step.jsonl").string();
  const std::string again = measured_again(slurp(step_products), 1.0 / 20);
  std::ofstream(step_products) << again;
  expect_error("decide " + kSuite + " " + fast.string(), 1, "is past the h200-sxm's dense bf16 peak");
  const fs::path without = edited_suite("suite_without_step_products", [](json& m) {
    for (json& p : m["parts"]) {
      if (p["name"] == "mamf-step") p["status"] = "failed";
    }
  });
  fs::remove(without / "mamf-step.jsonl");
  expect_error("decide " + without.string() + " " + fast.string(), 1, "is past the h200-sxm's dense bf16 peak");
  // A decomposition alike, as decide --to reads it too.
  const fs::path decomposed = slower_suite("suite_decomposition_past_peak", kAgain);
  const std::string short_one = (decomposed / "decompose-short.jsonl").string();
  const std::string faster = measured_again(slurp(short_one), 1.0 / 20);
  std::ofstream(short_one) << faster;
  expect_error("decide " + kSuite + " " + decomposed.string(), 1, "is past the h200-sxm's dense bf16 peak");
  expect_error("decide " + decomposed.string() + " --to b200", 1, "is past the h200-sxm's dense bf16 peak");
}

// sweep --find-max's result is held to the lengths its sweep measured, by `decide` and by
// `history add`: 10M tokens "fit" with no run of that length decided a capability from nothing
// measured.
TEST(Decide, ALongestFitTheSweepDidNotMeasureIsRefused) {
  const fs::path dir = slower_suite("suite_sweep_max", kAgain);
  const std::string sweep = (dir / "sweep.jsonl").string(), measured = slurp(sweep);
  const auto with_result = [&](const std::string& fit, const std::string& out_of_memory) {
    std::ofstream(sweep, std::ios::trunc) << measured << fmt::format(R"({{"type":"sweep_max","longest_fit":{},)"
                                                                     R"("shortest_out_of_memory":{},"granularity":1024}})", fit, out_of_memory)
                                          << "\n";
  };
  const auto refused = [&](const std::string& says) {
    expect_error("decide " + kSuite + " " + dir.string() + " --need-seqlen 1M", 1, says);
    expect_error(fmt::format("history add --db {} {}", fresh_db("sweep_max"), sweep), 1, says);
  };
  with_result("10000000", "null");
  refused("says 10000000 tokens fit, a length the file holds no run of");
  with_result("2048", "null");
  refused("says 2048 tokens are the longest that fit, and 4096 ran");
  with_result("4096", "4096");
  refused("says 4096 tokens do not fit, and 4096 ran");
  with_result("null", "null");
  refused("names no length that fits and none that does not");
  std::ofstream(sweep, std::ios::trunc) << measured << R"({"type":"sweep_max","longest_fit":4096,"granularity":0})" << "\n";
  refused("a granularity of 0 tokens");
  // The result moved to the top: the file no longer starts with its context record.
  std::ofstream(sweep, std::ios::trunc) << R"({"type":"sweep_max","longest_fit":4096,"granularity":1024})" << "\n" << measured;
  refused(sweep + ":1: our records start with their context record, and the first here is a \"sweep_max\" record");
  // A length that ran out of memory bounds the shortest that does not fit from above.
  {
    nlohmann::json context;
    std::istringstream lines(measured);
    for (std::string l; std::getline(lines, l);) {
      if (l.find("\"context\"") != std::string::npos) context = nlohmann::json::parse(l);
    }
    ASSERT_FALSE(context.is_null());
    for (auto& a : context["argv"]) {
      if (a == "4096") a = "8192";
    }
    context["config"]["seqlen"] = 8192;
    const nlohmann::json oom = {{"type", "train_oom"}, {"seqlen", 8192}, {"batch", 1}, {"device", 0},
                                {"error", "CUDA error 'out of memory'"}, {"what", "CUDA error 'out of memory'"}};
    std::ofstream(sweep, std::ios::trunc) << measured << context.dump() << "\n" << oom.dump() << "\n"
                                          << R"({"type":"sweep_max","longest_fit":4096,"shortest_out_of_memory":16384,"granularity":1024})"
                                          << "\n";
    refused("says 16384 tokens are the shortest that do not fit, and 8192 ran out of memory");
  }
  // A result in a suite whose sweep ran without --find-max is a file joined from another run; with
  // --find-max in the manifest's sweep, it is the suite's.
  with_result("4096", "5120");
  expect_error("decide " + kSuite + " " + dir.string(), 1,
               "a result of sweep --find-max, where the manifest's sweep ran without --find-max");
  std::string manifest = slurp((dir / "manifest.json").string());
  const size_t at = manifest.find(R"("sweep.jsonl")");
  ASSERT_NE(at, std::string::npos);
  manifest.insert(at + 13, R"(, "--find-max")");
  std::ofstream(dir / "manifest.json", std::ios::trunc) << manifest;
  const Result r = run("decide " + kSuite + " " + dir.string());
  EXPECT_EQ(r.code, 0) << r.err;
  const Result added = run(fmt::format("history add --db {} {}", fresh_db("sweep_max_ok"), sweep));
  EXPECT_EQ(added.code, 0) << added.err;
}

// A longest sequence that nothing bounds is not known, and a length whose answer is not known on
// one GPU decides nothing: MEASURE MORE, naming what to run. One length measured on the H200 (its
// 8k block of the example log) said nothing of 300k, and was read as "does not fit".
TEST(Decide, ALengthNotKnownToFitOrNotIsMeasuredFirst) {
  const std::string h200 = slurp(kExamples + "/example_h200_handwritten.log");
  const std::string one_length = write_file("example_h200_8k_only.log", h200.substr(0, h200.find("===== seq_len=32768")));
  const std::string both = "decide " + one_length + " " + kExamples + "/example_b200_handwritten.log --force --price-old 3.5 --price-new 6 --json";
  const Result r = run(both + " --need-seqlen 300k");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["verdict"], "measure more") << j["line"];
  EXPECT_NE(j["line"].get<std::string>().find("whether 307200 tokens per sequence fit one NVIDIA H200 is not known: the "
                                              "longest length it ran is 8192"), std::string::npos) << j["line"];
  EXPECT_NE(j["line"].get<std::string>().find("`sweep --seqlens 307200` on it measures it"), std::string::npos) << j["line"];
  // A length both GPUs ran fits both: neither "fits neither GPU" nor a verdict by length.
  const json ran = json::parse(run(both + " --need-seqlen 8k").out);
  EXPECT_EQ(ran["reasons"].dump().find("fit neither GPU"), std::string::npos) << ran["reasons"].dump(1);
  EXPECT_NE(ran["verdict"], "measure more") << ran["line"];
}

// sweep --find-max that tried no longer length (its ceiling) found what fits, not the most that
// does: a length past it is not known to fit or not.
TEST(Decide, AFindMaxResultWithoutAnOutOfMemoryLengthIsALowerBound) {
  const fs::path dir = slower_suite("suite_find_max_ceiling", kAgain);
  std::string manifest = slurp((dir / "manifest.json").string());
  manifest.insert(manifest.find(R"("sweep.jsonl")") + 13, R"(, "--find-max")");
  std::ofstream(dir / "manifest.json", std::ios::trunc) << manifest;
  const std::string sweep = (dir / "sweep.jsonl").string(), measured = slurp(sweep);
  const auto decided = [&](const std::string& out_of_memory, const std::string& need) {
    std::ofstream(sweep, std::ios::trunc) << measured << fmt::format(
        R"({{"type":"sweep_max","longest_fit":4096,"shortest_out_of_memory":{},"granularity":1024}})", out_of_memory) << "\n";
    const Result r = run("decide " + dir.string() + " --to b200 --json --need-seqlen " + need);
    EXPECT_EQ(r.code, 0) << r.err;
    return r.code == 0 ? json::parse(r.out) : json();
  };
  const json open = decided("null", "5k");
  EXPECT_EQ(open["verdict"], "measure more") << open["line"];
  EXPECT_NE(open["line"].get<std::string>().find("whether 5120 tokens per sequence fit one NVIDIA H200 is not known: sweep "
                                                 "--find-max found 4096 fit and no longer length out of memory"),
            std::string::npos) << open["line"];
  EXPECT_TRUE(open["longest"]["old"]["at_least"].get<bool>());
  EXPECT_TRUE(open["longest"]["old"]["unsettled_below"].is_null());
  // Stopped short of 16384 by a failure that was not memory: 5k is not known either.
  const json gap = decided("16384", "5k");
  EXPECT_NE(gap["line"].get<std::string>().find("did not settle the boundary below 16384 (out of memory)"),
            std::string::npos) << gap["line"];
  EXPECT_EQ(gap["longest"]["old"]["unsettled_below"], 16384);
  // Settled to its granularity, the result is the most that fits.
  const json settled = decided("5120", "5k");
  EXPECT_FALSE(settled["longest"]["old"]["at_least"].get<bool>());
  EXPECT_EQ(settled["line"].get<std::string>().find("is not known"), std::string::npos) << settled["line"];
}

// A batch of two that does not hold a length the same GPU holds at one sequence per step is a
// step-time cost (gradient accumulation keeps the global batch), not a capability gap.
TEST(Decide, ALengthTheOldGpuHoldsAtBatchOneIsNoCapabilityGap) {
  // Twice the tokens per step in twice the time: the same rate, as logged.
  const auto at_batch_two = [](const std::string& log) {
    std::istringstream in(slurp(kExamples + "/" + log));
    std::string text;
    for (std::string line; std::getline(in, line);) {
      for (size_t at; (at = line.find("batch_size=1")) != std::string::npos;) line.replace(at, 12, "batch_size=2");
      if (line.rfind("{", 0) == 0) {
        json step = json::parse(line);
        const json& ms = step["exec_time_ms"];
        step["exec_time_ms"] = fmt::format("{:.2f}", 2 * (ms.is_string() ? std::stod(ms.get<std::string>()) : ms.get<double>()));
        line = step.dump();
      }
      text += line + "\n";
    }
    return write_file("batch2_" + log, text);
  };
  const std::string both = "decide " + at_batch_two("example_h200_handwritten.log") + " " +
                           at_batch_two("example_b200_handwritten.log") + " --force --json --need-seqlen ";
  const Result r = run(both + "300k");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_NE(j["verdict"], "upgrade for capability") << j["line"];
  EXPECT_NE(j["reasons"].dump().find("holds 307200 tokens per sequence at one sequence per step"), std::string::npos)
      << j["reasons"].dump(1);
  EXPECT_EQ(j["longest"]["old"]["batch"], 2);
  EXPECT_NE(j["longest"]["old"]["how"].get<std::string>().find("at batch 2"), std::string::npos) << j["longest"];
  // One sequence per step holds no more tokens than a step measured out of memory: the H200 ran
  // out at 2 x 262144 tokens, so 540k is not within its reach whatever its line says; the B200
  // holds it at one sequence per step, and the line says so, figures at one sequence per step.
  const json gap = json::parse(run(both + "540000").out);
  EXPECT_EQ(gap["verdict"], "upgrade for capability") << gap["line"];
  EXPECT_NE(gap["line"].get<std::string>().find("540000 tokens per sequence fit one b200-sxm at one sequence per step "
                                                "(gradient accumulation)"), std::string::npos) << gap["line"];
  EXPECT_NE(gap["line"].get<std::string>().find("and not one NVIDIA H200 (523264 at most)"), std::string::npos)
      << gap["line"];
  EXPECT_EQ(gap["reasons"].dump().find("the NVIDIA H200 holds 540000"), std::string::npos) << gap["reasons"].dump(1);
}

// A length a GPU ran, or ran out of memory at, is known whatever its memory fit says: a fit carried
// far past its lengths (the H200 suite's 187585 from 2k and 4k) leaves the answer as measured.
TEST(Decide, ALengthAGpuRanOrRanOutOfMemoryAtIsKnownWhateverItsFit) {
  std::string b200 = measured_again(slurp(kSuite + "/sweep.jsonl"), 0.5);
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"NVIDIA H200", "NVIDIA B200"}, {"h200-sxm", "b200-sxm"},
                                 {kSuiteGpu, kOtherGpu}}) {
    for (size_t at; (at = b200.find(from)) != std::string::npos;) b200.replace(at, from.size(), to);
  }
  // The B200 ran 2048 and ran out of memory at 4096.
  std::istringstream in(b200);
  std::string kept;
  json context;
  for (std::string line; std::getline(in, line);) {
    json r = json::parse(line);
    if (r["type"] == "context" && context.is_null()) context = r;
    if (r.value("seqlen", 0) == 4096 || (r["type"] == "context" && r["config"].value("seqlen", 0) == 4096)) continue;
    kept += line + "\n";
  }
  ASSERT_FALSE(context.is_null());
  context["config"]["seqlen"] = 4096;
  for (auto& a : context["argv"]) {
    if (a == "2048") a = "4096";
  }
  const json oom = {{"type", "train_oom"}, {"seqlen", 4096}, {"batch", 1}, {"device", 0},
                    {"error", "CUDA error 'out of memory'"}, {"what", "CUDA error 'out of memory'"}};
  kept += context.dump() + "\n" + oom.dump() + "\n";
  const Result r = run("decide " + kSuite + "/sweep.jsonl " + write_file("b200_oom_4k.jsonl", kept) +
                       " --need-seqlen 4k --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["verdict"], "do not upgrade") << j["line"];
  EXPECT_NE(j["line"].get<std::string>().find("and not one b200-sxm (2048 ran)"), std::string::npos) << j["line"];
}

// A lever whose longest sequence is a fit carried far past its lengths reaches nothing for sure:
// the old GPU "reaching it with the lever" is measured first, and the guess is in the warnings.
TEST(Decide, ALeverReachingTheLengthByAGuessIsMeasuredFirst) {
  std::istringstream in(slurp(kFx + "/levers/checkpointing.jsonl"));
  std::string all;
  for (std::string line; std::getline(in, line);) {
    json r = json::parse(line);
    if (r["type"] == "context") r["config"]["layers"] = 2, r["config"]["master_weights"] = true;
    if (r.contains("seqlen") && r["seqlen"] != 8192 && r["seqlen"] != 16384) continue;
    if (r.contains("peak_mem_gib") && r["seqlen"] == 16384) r["peak_mem_gib"] = 40.0;  // barely above 8k's
    if (r.contains("peak_mem_gib") && r["seqlen"] == 8192) r["peak_mem_gib"] = 39.9;
    all += r.dump() + "\n";
  }
  const std::string lever = write_file("lever_guess_checkpointing.jsonl", all);
  const Result r = run("decide " + kSuite + " --to b200 --need-seqlen 200000 --json --levers " + lever);
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["verdict"], "measure more") << j["line"];
  EXPECT_NE(j["line"].get<std::string>().find("whether the NVIDIA H200 reaches 200000 tokens per sequence with "
                                              "checkpointing rests on that run's longest sequence"),
            std::string::npos) << j["line"];
  EXPECT_NE(j["warnings"].dump().find("the h200-sxm's longest sequence with checkpointing:"), std::string::npos)
      << j["warnings"].dump(1);
  EXPECT_NE(j["reasons"].dump().find("with checkpointing rests on a guess"), std::string::npos) << j["reasons"].dump(1);
}

// A GPU name the catalog does not know bounds nothing: said beside the verdict; refused where the
// suite's own machine matched the GPU to a catalog entry (an edited name, or an alias missing).
TEST(Decide, AGpuNameTheCatalogDoesNotKnowIsSaidOrRefused) {
  const fs::path renamed = slower_suite("suite_unknown_name", kAgain);
  for (const fs::directory_entry& e : fs::directory_iterator(renamed)) {
    if (!e.is_regular_file()) continue;
    std::string text = slurp(e.path().string());
    for (size_t at; (at = text.find("\"NVIDIA H200\"")) != std::string::npos;) text.replace(at, 13, "\"NVIDIA H200 SXM 141GB\"");
    std::ofstream(e.path(), std::ios::trunc) << text;
  }
  expect_error("decide " + kSuite + " " + renamed.string(), 1,
               "its GPU is named \"NVIDIA H200 SXM 141GB\", which the catalog does not know, while its env.json matched "
               "it to h200-sxm");
  std::string env = slurp((renamed / "env.json").string());
  for (size_t at; (at = env.find("\"h200-sxm\"")) != std::string::npos;) env.replace(at, 10, "null");
  std::ofstream(renamed / "env.json", std::ios::trunc) << env;
  const Result r = run("decide " + kSuite + " " + renamed.string() + " --force");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("the catalog does not know the \"NVIDIA H200 SXM 141GB\""),
            std::string::npos) << r.out;
}

}  // namespace

// Two runs of other workloads and other programs, compared under --force: the page says both
// first, and never calls our engine and torch the same software.
TEST(Decide, AForcedComparisonSaysWhatDiffersBeforeTheVerdict) {
  const std::string ours = kExamples + "/sweep_h200_llama-3.1-8b-4layers.jsonl", guide = kFx + "/guide/sweep_b200.log";
  expect_error("decide " + ours + " " + guide + " --price-old 3.5 --price-new 6", 2, "the two stacks differ (the steps ran under upgradebench");
  const Result r = run("decide " + ours + " " + guide + " --price-old 3.5 --price-new 6 --force");
  ASSERT_EQ(r.code, 0) << r.err;
  // Our records' levers and benchmark.py's, by their own keys, compared as one.
  const size_t workload = r.out.find("WORKLOAD DIFFERS between the two GPUs' training runs (different depth: 4 vs all layers; "
                                     "different ZeRO stage: 0 vs 3; different offloaded optimizer: 0 vs 1)");
  const size_t software = r.out.find("SOFTWARE DIFFERS between the two GPUs' measurements (the steps ran under upgradebench");
  const size_t verdict = r.out.find("DO NOT UPGRADE");
  ASSERT_NE(workload, std::string::npos) << r.out;
  ASSERT_NE(software, std::string::npos) << r.out;
  EXPECT_LT(workload, verdict);
  EXPECT_LT(software, verdict);
  EXPECT_NE(r.out.find("Workload: the training runs differ (different depth"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("the same software on both"), std::string::npos) << r.out;
}

// The new GPU cheaper at the shorter lengths only, or unable to run a length the old one runs: no
// plain UPGRADE, and no length said to hold the break-even when every length is decided. The
// guide's example logs the other way round (a B200 you have, an H200 you consider) give both.
TEST(Decide, CheaperUpToALengthIsShortContextOnly) {
  const std::string logs = kExamples + "/example_b200_handwritten.log " + kExamples + "/example_h200_handwritten.log --force";
  const auto verdict = [&](const std::string& options) {
    const Result r = run("decide " + logs + " " + options + " --json");
    EXPECT_EQ(r.code, 0) << r.err;
    return r.code == 0 ? json::parse(r.out) : json();
  };
  // Cheaper at every length both ran; the H200 runs out of memory at 256k, which the B200 runs.
  const json cheaper = verdict("--price-old 6 --price-new 1");
  EXPECT_EQ(cheaper["mode"], "measurements");  // the shape of decide on measurements (docs/json.md)
  EXPECT_EQ(cheaper["verdict"], "upgrade for short context only");
  EXPECT_NE(cheaper["line"].get<std::string>().find("cheaper per token up to 128k tokens"), std::string::npos) << cheaper["line"];
  EXPECT_NE(cheaper["line"].get<std::string>().find("and cannot run 256k tokens, which the NVIDIA B200 runs"),
            std::string::npos) << cheaper["line"];
  // Cheaper at 8k and 32k, dearer at 128k (each interval wholly on one side of the break-even).
  const json prefix = verdict("--price-old 6 --price-new 3.12");
  EXPECT_EQ(prefix["verdict"], "upgrade for short context only");
  EXPECT_NE(prefix["line"].get<std::string>().find("up to 32k tokens"), std::string::npos) << prefix["line"];
  EXPECT_NE(prefix["line"].get<std::string>().find("costs more per token from 128k tokens"), std::string::npos) << prefix["line"];
  EXPECT_EQ(prefix["line"].get<std::string>().find("holds the break-even"), std::string::npos) << prefix["line"];
  // Whatever the verdict, its line says the length the new GPU loses.
  for (const std::string& options : {"--price-old 1 --price-new 6", ""}) {
    const json lost = verdict(options);
    EXPECT_EQ(lost["verdict"], options.empty() ? "no prices" : "do not upgrade");
    EXPECT_NE(lost["line"].get<std::string>().find("cannot run 256k tokens, which the NVIDIA B200 runs."), std::string::npos)
        << lost["line"];
  }
  // The other way round, a length only the new GPU fits: the B200's 359533 is fitted from lengths
  // up to 256k (no guess), the H200's capped below its out of memory at 256k.
  {
    const Result gained = run("decide " + kExamples + "/example_h200_handwritten.log " + kExamples +
                              "/example_b200_handwritten.log --force --need-seqlen 300k --price-old 3.5 --price-new 6 --json");
    ASSERT_EQ(gained.code, 0) << gained.err;
    const json g = json::parse(gained.out);
    EXPECT_EQ(g["verdict"], "upgrade for capability") << g["line"];
    EXPECT_NE(g["line"].get<std::string>().find("307200 tokens per sequence fit one b200-sxm (359533 at most) and not one "
                                                "NVIDIA H200 (261120 at most)"), std::string::npos) << g["line"];
    // Both logs are of 8-GPU ZeRO-3 jobs: what fits is per GPU of such a job, and said so.
    EXPECT_NE(g["line"].get<std::string>().find("(as measured: the NVIDIA H200 per GPU of a job of 8 GPUs (ZeRO-3, the "
                                                "optimizer offloaded); the NVIDIA B200 per GPU of a job of 8 GPUs"),
              std::string::npos) << g["line"];
    EXPECT_EQ(g["line"].get<std::string>().find("only more GPUs with sharded activations"), std::string::npos) << g["line"];
  }
  // A length the team needs that only the old GPU fits decides it.
  const json need = verdict("--price-old 6 --price-new 3.12 --need-seqlen 256k");
  EXPECT_EQ(need["verdict"], "do not upgrade");
  EXPECT_NE(need["line"].get<std::string>().find("262144 tokens per sequence fit one NVIDIA B200"), std::string::npos) << need["line"];
  // Cheaper and dearer in no order of length (the B200's 32k steps taken 1.5 times as long).
  std::istringstream in(slurp(kExamples + "/example_b200_handwritten.log"));
  std::string b200, block;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("=====", 0) == 0) block = line;
    if (block.find("seq_len=32768") != std::string::npos && line.rfind("{", 0) == 0) {
      json step = json::parse(line);
      ub_test::measure_again(step, 1.5);
      line = step.dump();
    }
    b200 += line + "\n";
  }
  const fs::path slower = fs::path(::testing::TempDir()) / "example_b200_slower_32k.log";
  std::ofstream(slower) << b200;
  const Result mixed = run("decide " + kExamples + "/example_h200_handwritten.log " + slower.string() +
                           " --force --price-old 3.5 --price-new 5.25 --json");
  ASSERT_EQ(mixed.code, 0) << mixed.err;
  const json m = json::parse(mixed.out);
  EXPECT_EQ(m["verdict"], "measure more");
  EXPECT_NE(m["line"].get<std::string>().find("cheaper per token at 8192, 131072 tokens and costlier at 32768 tokens, in no "
                                              "order of length"), std::string::npos) << m["line"];
}

// A failed part's file left in a folder is read by no command: not even to tell two folders'
// measurements apart (a leftover equal to the other folder's would refuse a valid pair).
TEST(Decide, AFailedPartsLeftoverIsNotReadForTheSameMeasurement) {
  const fs::path other = slower_suite("suite_failed_attention_leftover", 1.01);
  json m = json::parse(slurp((other / "manifest.json").string()));
  for (json& p : m["parts"]) {
    if (p["name"] == "attention") p["status"] = "failed", p["why"] = "exit code 1";
  }
  std::ofstream(other / "manifest.json") << m.dump(2);
  fs::copy_file(fs::path(kSuite) / "attention.jsonl", other / "attention.jsonl", fs::copy_options::overwrite_existing);
  const Result r = run("decide " + kSuite + " " + other.string() + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["verdict"], "same GPU");
  // One figure at every length is said once, not as a span from it to itself.
  const Result text = run("decide " + kSuite + " " + other.string() + " --price-old 3 --price-new 3");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("Wall clock: the same work takes 101% of the time on the h200-sxm (0.99x faster)."),
            std::string::npos) << text.out;
}

// A folder whose sweep failed, its decompositions done: decide --to says what they predict and
// what gives the verdict, not that no step was measured on both GPUs.
TEST(Decide, AFolderWithoutItsSweepSaysWhatItsDecompositionsPredict) {
  const fs::path cut = edited_suite("suite_sweep_failed", [](json& m) {
    for (json& p : m["parts"]) {
      if (p["name"] == "sweep") p["status"] = "failed", p["why"] = "exit code 1";
    }
  });
  const Result r = run("decide " + cut.string() + " --to b200 --price-old 3.5 --price-new 6 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["verdict"], "measure more");
  const std::string line = j["line"];
  EXPECT_NE(line.find("holds no training sweep to set the predicted steps beside"), std::string::npos) << line;
  EXPECT_NE(line.find("x at 2048 tokens"), std::string::npos) << line;
  EXPECT_EQ(line.find("measured on both GPUs"), std::string::npos) << line;
}
