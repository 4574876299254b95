// What `suite --resume` runs (cli/suite_resume.hpp), on copies of the real suite folder
// tests/fixtures/suite_h200_2l: a done part the folder no longer backs runs again, a sweep short
// of lengths continues its records, a part whose command runs another workload refuses the
// folder, and records an earlier attempt left are moved aside, never deleted.
#include "cli/suite_resume.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.hpp"
#include "file_text.hpp"

namespace ub::cli {
namespace {

namespace fs = std::filesystem;

std::string slurp(const std::filesystem::path& p) { return ub_test::file_text(p); }

fs::path copy_of_suite(const char* name) {
  const fs::path d = fs::path(::testing::TempDir()) / name;
  fs::remove_all(d);
  fs::copy(fs::path(UB_FIXTURES_DIR) / "suite_h200_2l", d, fs::copy_options::recursive);
  return d;
}

ManifestPart& part(SuiteManifest& m, const std::string& name) {
  for (ManifestPart& p : m.parts) {
    if (p.name == name) return p;
  }
  throw std::runtime_error("no part " + name);
}

size_t index_of(const SuiteManifest& m, const std::string& name) {
  for (size_t i = 0; i < m.parts.size(); ++i) {
    if (m.parts[i].name == name) return i;
  }
  throw std::runtime_error("no part " + name);
}

// The model the fixture suite measured: Llama-3.1-8B, 2 layers.
ModelShape the_suites_model() { return with_layers(load_model("llama-3.1-8b", fs::path(UB_DATA_DIR) / "models"), 2); }

SuiteWorkload two_layers() {
  SuiteWorkload w;
  w.model = "llama-3.1-8b";
  w.layers = 2;
  w.batch = 1;
  return w;
}

TEST(SuiteResume, ACommandRunsTheManifestsWorkloadOrSaysWhatDiffers) {
  const SuiteWorkload w = two_layers();
  EXPECT_EQ(command_departs({"sweep", "--seqlens", "2048,4096", "--layers", "2", "--out", "sweep.jsonl"}, w), "");
  EXPECT_EQ(command_departs({"sweep", "--seqlens", "2048", "--layers", "32", "--out", "sweep.jsonl"}, w), "layers 32 vs 2");
  EXPECT_EQ(command_departs({"sweep", "--seqlens", "2048", "--out", "sweep.jsonl"}, w), "layers (all) vs 2");
  EXPECT_EQ(command_departs({"decompose", "--seqlen", "2048", "--layers", "2", "--batch", "2"}, w), "batch 2 vs 1");
  EXPECT_EQ(command_departs({"mamf", "--shapes-of", "mixtral-8x7b", "--seqlen", "2048", "--layers", "2"}, w),
            "model mixtral-8x7b vs llama-3.1-8b");
  EXPECT_EQ(command_departs({"sweep", "--seqlens", "2048", "--layers", "2", "--checkpointing", "--mlp-tile=1k"}, w),
            "checkpointing true vs false; MLP tile 1024 vs 0");
  EXPECT_EQ(command_departs({"sweep", "--seqlens", "2048", "--layers", "2", "--precision", "bf16"}, w),
            "precision bf16 vs master");
  EXPECT_EQ(command_departs({"attention", "--seqlens", "2048", "--batch", "4"}, w), "batch 4 vs 1");
  EXPECT_EQ(command_departs({}, w), "no command at all");
  // Parts that run no training step name no workload.
  for (const std::vector<std::string>& c : {std::vector<std::string>{"env", "--json"}, {"mamf", "--out", "mamf.jsonl"},
                                            {"bandwidth", "--sizes", "1G,4G"}, {"decompose", "trace.json.gz"}}) {
    EXPECT_EQ(command_departs(c, w), "") << c.front();
  }
  SuiteWorkload levers = w;
  levers.checkpointing = true, levers.mlp_tile = 1024, levers.master_weights = false;
  EXPECT_EQ(command_departs({"sweep", "--layers", "2", "--selective-checkpointing", "--mlp-tile", "1024", "--precision",
                             "bf16"}, levers), "");
  // A flag the workload does not name takes no value: the option after it is read as one.
  EXPECT_EQ(command_departs({"attention", "--seqlens", "2048", "--fwd-only", "--batch", "1"}, w), "");
  // A suite asked for all layers (--layers 0) holds the depth that resolved to; its commands may
  // say 0.
  SuiteWorkload all = w;
  all.layers = 32, all.train_args = {"--layers", "0"};
  EXPECT_EQ(command_departs({"sweep", "--seqlens", "2048", "--layers", "0"}, all), "");
  EXPECT_EQ(command_departs({"sweep", "--seqlens", "2048", "--layers", "32"}, all), "");
  EXPECT_EQ(command_departs({"sweep", "--seqlens", "2048", "--layers", "0"}, w), "layers 0 vs 2");
}

TEST(SuiteResume, AFinishedFolderRunsNothing) {
  const fs::path dir = copy_of_suite("resume_finished");
  const SuiteManifest m = read_suite_manifest(dir);
  for (const ResumeStep& s : plan_resume(dir, m, the_suites_model())) EXPECT_FALSE(s.run);
}

TEST(SuiteResume, ADonePartTheFolderNoLongerBacksRunsAgain) {
  const fs::path dir = copy_of_suite("resume_damaged");
  SuiteManifest m = read_suite_manifest(dir);
  fs::remove(dir / "mamf.jsonl");
  fs::remove(dir / "attention.jsonl");
  fs::create_directory(dir / "attention.jsonl");
  part(m, "bandwidth").exit_code = 3;
  std::ofstream(dir / "decompose-long.jsonl", std::ios::trunc) << "\n";
  part(m, "mamf-step").status = PartStatus::pending;
  // The sweep's records without their 4096-token steps.
  std::istringstream lines(slurp(dir / "sweep.jsonl"));
  std::ofstream cut(dir / "sweep.jsonl", std::ios::trunc);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("\"seqlen\":4096") == std::string::npos && line.find("\"seqlen\": 4096") == std::string::npos) {
      cut << line << "\n";
    }
  }
  cut.close();
  const std::vector<ResumeStep> steps = plan_resume(dir, m, the_suites_model());
  ASSERT_EQ(steps.size(), m.parts.size());
  const ResumeStep& mamf = steps[index_of(m, "mamf")];
  EXPECT_TRUE(mamf.run && mamf.again && !mamf.sweep_resume);
  EXPECT_EQ(mamf.why, "done, but its records mamf.jsonl are missing");
  EXPECT_EQ(steps[index_of(m, "attention")].why, "done, but its records attention.jsonl are not a file");
  EXPECT_EQ(steps[index_of(m, "bandwidth")].why, "done, but it exited with code 3");
  EXPECT_FALSE(steps[index_of(m, "bandwidth")].sweep_resume);
  const ResumeStep& pending = steps[index_of(m, "mamf-step")];
  EXPECT_TRUE(pending.run && !pending.again);
  const ResumeStep& sweep = steps[index_of(m, "sweep")];
  EXPECT_TRUE(sweep.run && sweep.again && sweep.sweep_resume);
  EXPECT_EQ(sweep.why, "done, but its records sweep.jsonl hold neither a step nor an out-of-memory record at 4096 tokens");
  EXPECT_EQ(steps[index_of(m, "decompose-long")].why, "done, but its records decompose-long.jsonl are empty");
  for (const char* kept : {"env", "decompose-short"}) EXPECT_FALSE(steps[index_of(m, kept)].run) << kept;
}

// A sweep done with an exit code that is not 0 keeps what it measured, as a failed one does.
TEST(SuiteResume, ASweepDoneWithAnErrorIsContinued) {
  const fs::path dir = copy_of_suite("resume_sweep_error");
  SuiteManifest m = read_suite_manifest(dir);
  part(m, "sweep").exit_code = 1;
  const ResumeStep s = plan_resume(dir, m, the_suites_model())[index_of(m, "sweep")];
  EXPECT_TRUE(s.run && s.again && s.sweep_resume);
  EXPECT_EQ(s.why, "done, but it exited with code 1");
}

// A decomposition left out for want of a length is aimed again: after the sweep runs again, or
// where the sweep's records now hold the lengths it needs.
TEST(SuiteResume, ADecompositionLeftOutForWantOfALengthIsAimedAgain) {
  const fs::path dir = copy_of_suite("resume_skipped_decomposition");
  SuiteManifest m = read_suite_manifest(dir);
  part(m, "decompose-long").status = PartStatus::skipped;
  part(m, "decompose-long").why = "the sweep measured one length only";
  std::vector<ResumeStep> steps = plan_resume(dir, m, the_suites_model());
  EXPECT_TRUE(steps[index_of(m, "decompose-long")].run);
  EXPECT_EQ(steps[index_of(m, "decompose-long")].why, "left out for want of a length, which the sweep's records now hold");
  part(m, "sweep").status = PartStatus::failed;
  steps = plan_resume(dir, m, the_suites_model());
  EXPECT_EQ(steps[index_of(m, "decompose-long")].why, "left out for want of a length; aimed again after the sweep");
  // Still one length measured, and the sweep not run again: it stays left out.
  std::istringstream lines(slurp(dir / "sweep.jsonl"));
  std::ofstream cut(dir / "sweep.jsonl", std::ios::trunc);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("\"seqlen\":4096") == std::string::npos) cut << line << "\n";
  }
  cut.close();
  part(m, "sweep").status = PartStatus::skipped;
  steps = plan_resume(dir, m, the_suites_model());
  EXPECT_FALSE(steps[index_of(m, "decompose-long")].run);
}

// A sweep's records of another workload are not continued (sweep --resume would refuse them, and
// the suite would fail the same way at every resume): they are moved aside and it runs again.
TEST(SuiteResume, ASweepOfAnotherWorkloadIsNotContinued) {
  const fs::path dir = copy_of_suite("resume_other_sweep");
  SuiteManifest m = read_suite_manifest(dir);
  std::string text = slurp(dir / "sweep.jsonl");
  for (size_t at; (at = text.find("\"layers\":2")) != std::string::npos;) text.replace(at, 10, "\"layers\":4");
  std::ofstream(dir / "sweep.jsonl", std::ios::trunc) << text;
  std::vector<ResumeStep> steps = plan_resume(dir, m, the_suites_model());
  const ResumeStep& done = steps[index_of(m, "sweep")];
  EXPECT_TRUE(done.run && done.again && !done.sweep_resume);
  EXPECT_NE(done.why.find("are of another workload (layers 4 vs 2"), std::string::npos) << done.why;
  part(m, "sweep").status = PartStatus::interrupted;
  steps = plan_resume(dir, m, the_suites_model());
  const ResumeStep& cut = steps[index_of(m, "sweep")];
  EXPECT_TRUE(cut.run && !cut.sweep_resume);
  EXPECT_NE(cut.why.find("are of another workload"), std::string::npos) << cut.why;
}

// A sweep cut short keeps its records and continues them; any other part starts a file of its own.
TEST(SuiteResume, ASweepCutShortContinuesItsRecords) {
  const fs::path dir = copy_of_suite("resume_interrupted");
  SuiteManifest m = read_suite_manifest(dir);
  part(m, "sweep").status = PartStatus::interrupted;
  part(m, "mamf").status = PartStatus::failed;
  std::vector<ResumeStep> steps = plan_resume(dir, m, the_suites_model());
  EXPECT_TRUE(steps[index_of(m, "sweep")].sweep_resume);
  EXPECT_FALSE(steps[index_of(m, "mamf")].sweep_resume);
  fs::remove(dir / "sweep.jsonl");  // nothing measured yet: a sweep of its own
  steps = plan_resume(dir, m, the_suites_model());
  EXPECT_TRUE(steps[index_of(m, "sweep")].run);
  EXPECT_FALSE(steps[index_of(m, "sweep")].sweep_resume);
}

// A part runs what its kind of part runs, into its own records in the folder: an edited command
// that runs another subcommand, writes elsewhere, or takes options no suite gives it is refused.
TEST(SuiteResume, APartRunsOnlyWhatItsKindOfPartRuns) {
  const fs::path dir = copy_of_suite("resume_kinds");
  const ModelShape model = the_suites_model();
  const auto refused = [&](const std::string& name, const std::vector<std::string>& command, const std::string& said,
                           const std::string& records = "") {
    SuiteManifest m = read_suite_manifest(dir);
    part(m, name).command = command;
    if (!records.empty()) part(m, name).records = records;
    try {
      plan_resume(dir, m, model);
      ADD_FAILURE() << name << " ran an edited command";
    } catch (const WorkError& e) {
      EXPECT_NE(std::string(e.what()).find(said), std::string::npos) << e.what();
    }
  };
  refused("mamf", {"report", "x.jsonl", "-o", "/tmp/elsewhere"}, "it runs `report`, where a part named mamf runs `mamf`");
  refused("sweep", {"sweep", "--seqlens", "2048", "--layers", "2", "--out", "/tmp/outside.jsonl"},
          "its --out /tmp/outside.jsonl is not its records sweep.jsonl");
  refused("sweep", {"sweep", "--seqlens", "2048", "--layers", "2", "--zero", "3", "--out", "sweep.jsonl"},
          "it gives --zero, an option a part named sweep never runs with");
  refused("attention", {"attention", "--seqlens", "2048", "--heads", "64", "--kv-heads", "8", "--head-dim", "128",
                        "--batch", "1", "--out", "attention.jsonl"}, "its --heads 64 is not the model's 32");
  refused("mamf", {"mamf", "--out", "env.json"}, "its records env.json are not its own mamf.jsonl", "env.json");
  refused("decompose-long", {"decompose", "--seqlen", "4096", "--layers", "2"}, "it names its records with --out 0 times");
  // The fixture's own commands are each of their kind.
  EXPECT_NO_THROW(plan_resume(dir, read_suite_manifest(dir), model));
}

TEST(SuiteResume, APartRunningAnotherWorkloadRefusesTheFolder) {
  const fs::path dir = copy_of_suite("resume_edited");
  SuiteManifest m = read_suite_manifest(dir);
  part(m, "sweep").command = {"sweep", "--seqlens", "2048,4096", "--layers", "32", "--out", "sweep.jsonl"};
  try {
    plan_resume(dir, m, the_suites_model());
    ADD_FAILURE() << "an edited command was resumed";
  } catch (const WorkError& e) {
    EXPECT_NE(std::string(e.what()).find("part sweep's command runs another workload than the manifest's (layers 32 vs 2"),
              std::string::npos) << e.what();
  }
}

TEST(SuiteResume, RecordsOfAnEarlierAttemptAreMovedAsideNotDeleted) {
  const fs::path dir = copy_of_suite("resume_aside");
  const SuiteManifest m = read_suite_manifest(dir);
  const ManifestPart& mamf = m.parts[index_of(m, "mamf")];
  const std::string first = slurp(dir / "mamf.jsonl");
  EXPECT_EQ(set_aside_records(dir, mamf), (dir / "mamf.earlier-1.jsonl").string());
  EXPECT_FALSE(fs::exists(dir / "mamf.jsonl"));
  EXPECT_EQ(slurp(dir / "mamf.earlier-1.jsonl"), first);
  EXPECT_EQ(set_aside_records(dir, mamf), "");  // nothing there now
  std::ofstream(dir / "mamf.jsonl") << "second\n";
  EXPECT_EQ(set_aside_records(dir, mamf), (dir / "mamf.earlier-2.jsonl").string());
  EXPECT_EQ(slurp(dir / "mamf.earlier-1.jsonl"), first);
  // A link where the records go is moved as a link: what it names is left alone.
  const fs::path target = dir / "elsewhere.txt";
  std::ofstream(target) << "not ours\n";
  fs::create_symlink(target, dir / "mamf.jsonl");
  EXPECT_EQ(set_aside_records(dir, mamf), (dir / "mamf.earlier-3.jsonl").string());
  EXPECT_TRUE(fs::is_symlink(dir / "mamf.earlier-3.jsonl"));
  EXPECT_EQ(slurp(target), "not ours\n");
}

}  // namespace
}  // namespace ub::cli
