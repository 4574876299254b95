// End-to-end tests of the `upgradebench` binary: every output format locked by a golden file,
// and every bad input answered by a one-line error and the right exit code (2 usage, 1 work).
// Regenerate the golden files after an intended change with UB_UPDATE_GOLDEN=1.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "cli_run.hpp"
#include "measured_again.hpp"
#include "temp_files.hpp"

namespace {

using namespace ub_test;

TEST(Golden, Specs) {
  expect_golden("specs.txt", "specs");
  expect_golden("specs.json", "specs --json");
  expect_golden("specs.csv", "specs --csv");
  expect_golden("specs.md", "specs --md");
  expect_golden("specs_h200.txt", "specs 'NVIDIA H200'");
  expect_golden("specs_compare.txt", "specs --compare h200 b200");
  expect_golden("specs_compare.json", "specs --compare h200 b200 --json");
}

TEST(Golden, SpecsCompareJsonHasTheDatasheetRatios) {
  const Result r = run("specs --compare h200 b200 --json");
  for (const char* want : {"\"bf16\": 2.2750", "\"fp8\": 2.2738", "\"memory\": 1.2765",
                           "\"bandwidth\": 1.666", "\"power\": 1.428", "\"mamf_bf16\": 2.196",
                           "\"mamf_fp8\": 2.361", "\"nvfp4\""}) {
    EXPECT_NE(r.out.find(want), std::string::npos) << want;
  }
}

TEST(Golden, Flops) {
  expect_golden("flops.txt", "flops --seqlen 8192,262144");
  expect_golden("flops.json", "flops --seqlen 8k,256k --json");
  expect_golden("flops.csv", "flops --model llama-3.1-70b --seqlen 4096,8192 --csv");
  expect_golden("flops.md", "flops --model qwen2.5-7b --seqlen 32k --batch 2 --md");
  expect_golden("flops_packed_hfu.txt", "flops --seqlen 256k --doc-len 8k --hfu --layers 4");
  expect_golden("flops_docs.txt", "flops --docs 4k,12k,3000 --layers 4");
  expect_golden("flops_moe.txt", "flops --model qwen3-30b-a3b --seqlen 4k,32k");
  expect_golden("flops_windows.txt", "flops --model gemma-3-27b --seqlen 1k,32k");
  expect_golden("flops_windows.json", "flops --model mistral-7b-v0.1 --seqlen 4k,8k --layers 2 --json");
}

TEST(Golden, Decide) {
  expect_golden("decide.txt", "decide");
  expect_golden("decide.json", "decide --json");
  expect_golden("decide.md", "decide --md");
  expect_golden("decide.csv", "decide --csv");
  expect_golden("decide_fp4_priced.json",
                "decide --need-dtype nvfp4 --price-from 3 --price-to 6 --json");
}

TEST(BadInput, UnknownGpu) {
  expect_error("specs H2000", 2, "unknown GPU 'H2000'; closest known ids: h200-sxm");
  // A partial name is matched by its words before its spelling: no bare "RTX PRO 6000" row (its
  // workstation and server editions differ), and the server edition is offered first.
  expect_error("specs 'RTX PRO 6000'", 2, "unknown GPU 'RTX PRO 6000'; closest known ids: rtx-pro-6000-server");
  expect_error("decide --to B2000", 2, "unknown GPU 'B2000'");
  expect_error("specs --compare h200 nope", 2, "unknown GPU 'nope'");
}

TEST(BadInput, Sizes) {
  expect_error("flops --seqlen abc", 2, "--seqlen: 'abc' is not a positive whole number");
  expect_error("flops --seqlen=-5", 2, "--seqlen: '-5' is not a positive whole number");
  expect_error("flops --seqlen 0", 2, "--seqlen: '0' must be positive");
  expect_error("flops --batch 0", 2, "--batch");
  expect_error("flops --doc-len x", 2, "--doc-len");
  expect_error("flops --seqlen 8k --docs 4k,12k", 2, "--docs: the 2 documents sum to 16384 tokens, the sequence has 8192");
  expect_error("flops --layers 99", 2, "--layers 99 is more than the 32 layers");
}

TEST(BadInput, Prices) {
  expect_error("decide --price-from=-3 --price-to 2", 2, "--price-old: must be positive");
  expect_error("decide --price-from 3", 2, "give both --price-old and --price-new (USD per GPU-hour of each GPU; --price-from and --price-to, their older names), or neither");
  expect_error("decide --price-from 3 --price-to free", 2, "--price-new: 'free' is not a number");
  expect_error("decide --need-dtype fp5", 2, "--need-dtype: unknown dtype 'fp5'");
}

TEST(BadInput, Models) {
  expect_error("flops --model llama-9b", 2, "unknown model 'llama-9b'");
  expect_error("flops --model /nonexistent/config.json", 2, "does not exist");
  const std::string dir = ::testing::TempDir() + "/cli_models";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/config.json") << R"({"hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 4, "vocab_size": 10})";
  expect_error("flops --model " + dir + "/config.json", 1,
               "missing required key \"intermediate_size\"");
  std::ofstream(dir + "/bad.json") << "{ not json";
  expect_error("flops --model " + dir + "/bad.json", 1, "not valid JSON");
}

TEST(BadInput, DataDirectory) {
  expect_error("--data-dir /nonexistent specs", 2, "--data-dir /nonexistent: no accelerators.json");
  const std::string dir = ::testing::TempDir() + "/cli_data";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/accelerators.json") << R"({"sources": {}, "accelerators": [{"id": 1}]})";
  expect_error("--data-dir " + dir + " specs", 1, "malformed catalog");
}

#ifdef UB_HAVE_CUDA
// The attention command refuses what cannot run before it looks for a GPU (so these hold in CI).
TEST(BadInput, AttentionShapes) {
  expect_error("attention --kv-heads 5", 2, "attention: 5 kv heads do not divide 32 query heads");
  expect_error("attention --head-dim 320", 2, "head dim 320 is not supported by cuDNN's fused attention");
  expect_error("attention --dtype fp8", 2, "attention: dtype fp8 is not supported (bf16 or fp16)");
  expect_error("attention --seqlens 8k --docs 4k,3000", 2,
               "attention --docs: the 2 documents sum to 7096 tokens, the sequence has 8192");
  expect_error("attention --docs 4k,0,4k", 2, "--docs: '0' must be positive");
  expect_error("attention --docs 4k,4k --doc-len 1k", 2, "give --doc-len or --docs, not both");
  expect_error("attention --docs 4k,x", 2, "--docs");
  expect_error("attention --seqlens 0", 2, "--seqlens");
  expect_error("attention --seqlens 32M", 2, "sequence length 33554432 is out of range");
  expect_error("attention --batch 0", 2, "--batch 0 is out of range");
  expect_error("attention --window 4096 --non-causal", 2, "a sliding window is causal: drop --non-causal or --window");
  expect_error("attention --window -1", 2, "--window -1 is out of range");
}

// So does `train`.
TEST(BadInput, TrainOptions) {
  expect_error("train --seqlen 1", 2, "train: --seqlen 1 is out of range (2..16M)");
  expect_error("train --seqlen 8q", 2, "--seqlen");
  expect_error("train --model llama-9b", 2, "unknown model 'llama-9b'");
  expect_error("train --layers 99", 2, "--layers 99 is more than the 32 layers");
  expect_error("train --layers=-1", 2, "--layers must not be negative");
  expect_error("train --precision fp8", 2, "--precision must be master or bf16, got \"fp8\"");
  expect_error("train --lr=-0.1", 2, "train: --lr -0.1 is out of range [0, 1)");
  expect_error("train --weight-decay=-1", 2, "--weight-decay must not be negative");
  expect_error("train --steps 0", 2, "train: --steps 0 is out of range");
  expect_error("train --batch 0", 2, "train: --batch 0 is out of range");
  // The data-parallel options: what does not go together is named before any GPU is touched.
  expect_error("train --zero 4", 2, "train: --zero 4 is not a ZeRO stage (0, 1, 2 or 3)");
  expect_error("train --zero 3 --offload-optimizer --precision bf16", 2, "it does not go with --precision bf16");
  expect_error("train --offload-optimizer", 2, "give --zero 1, 2 or 3");
  expect_error("train --mlp-tile=-4", 2, "--mlp-tile");
  expect_error("train --bucket 1q", 2, "--bucket");
  expect_error("train --rendezvous-timeout 0", 2, "--rendezvous-timeout: '0' is not a number of seconds above 0");
  expect_error("sweep --seqlens 8k --zero 7", 2, "train: --zero 7 is not a ZeRO stage");
  expect_error("sweep --seqlens 8k --offload-optimizer --zero 1 --precision bf16", 2, "does not go with --precision bf16");
  const std::string dir = ::testing::TempDir() + "/cli_train_models";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/odd.json") << R"({"hidden_size": 96, "intermediate_size": 256, "num_hidden_layers": 2,
      "num_attention_heads": 8, "num_key_value_heads": 4, "vocab_size": 1000})";
  expect_error("train --model " + dir + "/odd.json", 2, "cannot be trained by the engine: head_dim 12 (multiples of 8");
  std::ofstream(dir + "/yarn.json") << R"({"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 1,
      "num_attention_heads": 4, "vocab_size": 300, "rope_scaling": {"rope_type": "yarn", "factor": 4.0}})";
  expect_error("train --model " + dir + "/yarn.json --seqlen 64", 2, "rope_scaling type \"yarn\" is not supported");
}
#endif

// A sweep resumed on a file that holds every length runs nothing and shows what the file holds.
TEST(Sweep, ResumeSkipsWhatTheFileHolds) {
  const std::string out = ::testing::TempDir() + "/sweep_resume.jsonl";
  std::filesystem::copy_file(std::string(UB_FIXTURES_DIR) + "/train_records_h200_ours.jsonl", out,
                             std::filesystem::copy_options::overwrite_existing);
  // Resuming with another workload (fp32 master weights; the file holds a pure bf16 run) is refused.
  expect_error("sweep --model llama-3.1-8b --layers 4 --seqlens 4096,8192 --resume --device 7 --out " + out, 2,
               "master_weights is false there, true here");
  const Result r = run("sweep --model llama-3.1-8b --layers 4 --seqlens 4096,8192 --precision bf16 --steps 6 --resume --device 7 "
                       "--out " + out);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("measured"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("526.3"), std::string::npos) << r.out;  // 8k's median TFLOPS in the file
  EXPECT_NE(r.err.find("seqlen 8192: measured already in"), std::string::npos) << r.err;
}

// A line of the file --resume cannot read (cut short, or a step record without a whole length) is
// named in a warning, never passed over unsaid: the point it held is measured again if the other
// lines do not complete it.
TEST(Sweep, ResumeNamesTheLinesItCannotRead) {
  const std::string out = ::testing::TempDir() + "/sweep_resume_damaged.jsonl";
  std::vector<std::string> lines;
  {
    std::ifstream in(std::string(UB_FIXTURES_DIR) + "/train_records_h200_ours.jsonl");
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
  size_t text_length = 0, cut = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find("\"type\":\"train_step\"") == std::string::npos) continue;
    if (!text_length && lines[i].find("\"seqlen\":4096") != std::string::npos) {
      lines[i].replace(lines[i].find("\"seqlen\":4096"), std::string("\"seqlen\":4096").size(), "\"seqlen\":\"4096\"");
      text_length = i + 1;
    } else if (!cut && lines[i].find("\"seqlen\":8192") != std::string::npos) {
      lines[i].resize(40);
      cut = i + 1;
    }
  }
  ASSERT_TRUE(text_length && cut);
  {
    std::ofstream o(out, std::ios::trunc);
    for (const std::string& l : lines) o << l << '\n';
  }
  const Result r = run("sweep --model llama-3.1-8b --layers 4 --seqlens 4096,8192 --precision bf16 --steps 6 --resume "
                       "--device 7 --out " + out);
  EXPECT_NE(r.err.find(fmt::format("warning: {}:{}: a train_step record without a whole seqlen, skipped", out, text_length)),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find(fmt::format("warning: {}:{}: a damaged line skipped", out, cut)), std::string::npos) << r.err;
}

// Records of the data-parallel step (a job of one rank at ZeRO-3, measured) read as one GPU's:
// the stage is the workload, so compare pairs them with the engine alone only when forced, and
// says first that it was.
TEST(Compare, DataParallelRecordsReadAsOneGpus) {
  const std::string files = "train_records_h200_plain_8k.jsonl train_records_h200_zero3.jsonl";
  expect_error("compare " + std::string(UB_FIXTURES_DIR) + "/" + files.substr(0, files.find(' ')) + " " +
                   UB_FIXTURES_DIR + "/train_records_h200_zero3.jsonl",
               2, "(different zero_stage: 0 vs 3); --force compares them anyway");
  const Result r = run("compare --force " + files, UB_FIXTURES_DIR);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("  8192       585.9       567.3    0.97x"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("forced: different zero_stage: 0 vs 3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("zero_stage differs: 0 (old) vs 3 (new)"), std::string::npos) << r.out;
}

// --find-max with measured lengths in the file probes first where their memory fit puts the
// longest length on the run's GPU (memfit's 136733 tokens on the H200, rounded down to the
// granularity), not at twice the longest measured one.
TEST(Sweep, FindMaxProbesWhereTheMemoryFitPointsFirst) {
  const std::string out = ::testing::TempDir() + "/sweep_aimed.jsonl";
  std::filesystem::copy_file(std::string(UB_FIXTURES_DIR) + "/train_records_h200_ours.jsonl", out,
                             std::filesystem::copy_options::overwrite_existing);
  const Result r = run("sweep --model llama-3.1-8b --layers 4 --seqlens 4096,8192 --precision bf16 --steps 6 --resume --find-max "
                       "--device 7 --out " + out);
  EXPECT_NE(r.err.find("the memory fit of the measured lengths predicts 136733 tokens"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("seqlen 136192: train"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("seqlen 65536: train"), std::string::npos) << "no doubling from 32k: " << r.err;
  EXPECT_EQ(r.code, 1);  // the probe fails here (no such GPU): bisection stops and says so
}

// Resumed with more steps than a length of an earlier sweep in the file holds (a find-max probe's
// one), that length is shown as measured, not as a failure of this sweep.
TEST(Sweep, ALengthNotGivenIsShownAsTheFileHoldsIt) {
  const std::string out = ::testing::TempDir() + "/sweep_not_given.jsonl";
  std::filesystem::copy_file(std::string(UB_FIXTURES_DIR) + "/../../data/examples/sweep_h200_llama-3.1-8b-4layers.jsonl", out,
                             std::filesystem::copy_options::overwrite_existing);
  const Result r = run("sweep --layers 4 --seqlens 4k,8k,16k --resume --checkpointing --steps 2 --warmup 1 "
                       "--precision bf16 --loss-chunk 4096 --json --out " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  // Each length as the file holds it (the example's longest ran out of memory), never a failure.
  const nlohmann::json points = nlohmann::json::parse(r.out)["points"];  // held: a temporary's member would dangle in the loop
  ASSERT_FALSE(points.empty());
  for (const auto& p : points) {
    const int64_t seqlen = p["seqlen"].get<int64_t>();
    if (seqlen <= 16384) EXPECT_EQ(p["outcome"], "measured") << p.dump();
    else EXPECT_TRUE(p["outcome"] == "measured" || p["outcome"] == "out of memory") << p.dump();
  }
}

// A probe runs --find-max-steps steps after one warm-up step, or after none with --warmup 0.
TEST(Sweep, AProbeWarmsUpOnceOrNotAtAll) {
  const std::string out = ::testing::TempDir() + "/sweep_probe_steps.jsonl";
  for (const auto& [warmup, said] : {std::pair{"", "probe: 1 warm-up + 1 timed step(s)"},
                                     std::pair{"--warmup 0 ", "probe: 0 warm-up + 1 timed step(s)"}}) {
    std::filesystem::copy_file(std::string(UB_FIXTURES_DIR) + "/train_records_h200_ours.jsonl", out,
                               std::filesystem::copy_options::overwrite_existing);
    const Result r = run("sweep --model llama-3.1-8b --layers 4 --seqlens 4096,8192 --precision bf16 --resume --find-max "
                         "--find-max-steps 1 --device 7 " + std::string(warmup) + "--out " + out);
    EXPECT_NE(r.err.find("seqlen 136192: train (" + std::string(said) + ")"), std::string::npos) << r.err;
    EXPECT_EQ(r.code, 1);
  }
}

// A point that fails for another reason than memory (here: no such GPU) is recorded as failed,
// the sweep goes on to the next, and exits 1 saying so.
// A child that fails before its first record (here: a GPU that is not there) would fail at every
// length: the sweep stops at the first, in one line, instead of starting a child per length.
TEST(Sweep, AFailureBeforeAnyRecordStopsTheSweep) {
  const std::string out = ::testing::TempDir() + "/sweep_failed.jsonl";
  std::filesystem::remove(out);
  for (const char* find_max : {"", " --find-max"}) {
    const Result r = run(fmt::format("sweep --model llama-tiny --seqlens 64,128{} --device 7 --out {}", find_max, out));
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("seqlen 64: train"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("seqlen 128: train"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("sweep: train for seqlen 64 failed before measuring anything (said above), as every length "
                         "would: the sweep stops"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(std::filesystem::exists(out));
    EXPECT_EQ(r.out, "");  // no table of a sweep that did not run
  }
  expect_error("sweep --resume", 2, "--resume needs --out");
  expect_error("sweep --seqlens 8k --precision fp4", 2, "--precision must be master or bf16");
}

TEST(BadInput, UsageErrorsFromTheParser) {
  expect_error("frobnicate", 2, "");
  expect_error("specs --json --csv", 2, "excludes");
  const Result none = run("");
  EXPECT_EQ(none.code, 2);
}

TEST(Cli, HelpExitsZero) {
  const Result r = run("--help");
  EXPECT_EQ(r.code, 0);
  for (const char* cmd : {"specs", "flops", "decide"}) {
    EXPECT_NE(r.out.find(cmd), std::string::npos) << cmd;
  }
}

TEST(Cli, InstalledLayoutFindsItsData) {
  // A copy of the binary beside share/upgradebench/data finds the catalog with no flag.
  const std::filesystem::path root = ::testing::TempDir() + "/ub_install";
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root / "bin");
  std::filesystem::create_directories(root / "share" / "upgradebench");
  std::filesystem::copy(UB_BINARY, root / "bin" / "upgradebench");
  std::filesystem::copy(UB_DATA_DIR, root / "share" / "upgradebench" / "data",
                        std::filesystem::copy_options::recursive);
  const std::string cmd = (root / "bin" / "upgradebench").string() + " specs h200 --json > /dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}

}  // namespace

namespace {

const std::string kFx = UB_FIXTURES_DIR;

TEST(Golden, CompareAndMemfit) {
  // Run inside the fixtures folder: the file names in the output are relative.
  const std::string logs = "sweep_h200.log sweep_b200.log";
  expect_golden("compare.txt", "compare " + logs, kFx);
  expect_golden("compare_priced.json", "compare " + logs + " --price-old 3.5 --price-new 6 --tokens 1e12 --gpus 8 --json", kFx);
  expect_golden("compare.csv", "compare " + logs + " --csv", kFx);
  expect_golden("compare.md", "compare " + logs + " --price-old 3.5 --price-new 6 --md", kFx);
  expect_golden("compare_records.txt", "compare records_h200.jsonl records_h200_rerun.jsonl", kFx);
  // Our attention records against bench_flash_attn.py's lines.
  expect_golden("compare_attention_records.txt", "compare attention_b200.log attention_records_h200.jsonl", kFx);
  // The training engine's records (train, H200) against the Hugging Face peer's, and memfit on them.
  expect_golden("compare_train_records.txt",
                "compare train_records_h200_peer.jsonl train_records_h200_ours.jsonl --force", kFx);
  expect_golden("memfit_train_records.txt", "memfit train_records_h200_ours.jsonl", kFx);
  // The log's last line is cut short: skipped, and memfit says so on stderr (records.md's promise).
  const Result cut = run("memfit sweep_b200.log", kFx);
  ASSERT_EQ(cut.code, 0) << cut.err;
  EXPECT_EQ(cut.out, slurp(std::string(UB_GOLDEN_DIR) + "/memfit.txt"));
  EXPECT_EQ(cut.err, "upgradebench: warning: sweep_b200.log:46: truncated last line ignored\n");
  // The bundled example: our measured sweep (H200, checkpointing + chunked loss, 4k to 320k).
  expect_golden("memfit_bundled_sweep.txt", "memfit sweep_h200_llama-3.1-8b-4layers.jsonl --for h200",
                std::string(UB_DATA_DIR) + "/examples");
  expect_golden("memfit_for.json", "memfit sweep_h200.log --for h200 --json", kFx);
  // The longest sequence per memory lever on two GPUs (hand-written runs of one workload).
  expect_golden("memfit_levers.txt",
                "memfit levers/none.jsonl levers/checkpointing.jsonl levers/tiles_chunked.jsonl "
                "levers/offloaded_checkpoints.jsonl --for h200,b200", kFx);
  expect_golden("memfit_levers.json", "memfit levers/tiles_chunked.jsonl levers/offloaded_checkpoints.jsonl --json", kFx);
  expect_golden("compare_attention.txt", "compare attention_h200.log attention_b200.log", kFx);
  expect_golden("compare_attention.json", "compare attention_h200.log attention_b200.log --json", kFx);
  expect_golden("compare_decomposition.txt", "compare decompose_h200.txt decompose_b200.txt", kFx);
  expect_golden("compare_mamf.txt", "compare mamf_finder_h200.txt mamf_records_h200_a.jsonl", kFx);
  expect_golden("compare_mamf.json", "compare mamf_records_h200_a.jsonl mamf_records_h200_b.jsonl --json", kFx);
  // Two real `nccl` runs (calls one by one, then replayed from a CUDA graph), and the
  // torch.distributed peer's lines against ours.
  expect_golden("compare_nccl.txt", "compare nccl_records_h200x2_plain.jsonl nccl_records_h200x2_graph.jsonl", kFx);
  expect_golden("compare_nccl.json", "compare nccl_records_h200x2_plain.jsonl nccl_records_h200x2_graph.jsonl --json", kFx);
  // A torch.profiler trace in Kineto's layout decomposed, with the model's FLOPs.
  expect_golden("decompose.txt", "decompose trace_kineto_small.json", kFx);
  expect_golden("decompose.json", "decompose trace_kineto_small.json --model llama-3.1-8b --layers 1 --seqlen 32 --json", kFx);
  expect_golden("compare_nccl_peer.csv", "compare nccl_peer_h200x2.jsonl nccl_records_h200x2_graph.jsonl --csv", kFx);
  // The guide's H200 decomposition predicted onto the B200 with both GPUs' attention runs.
  expect_golden("predict.txt", "predict --to b200 decompose_h200.txt --measured attention_h200.log attention_b200.log "
                "--price-from 3.5 --price-to 6", kFx);
  expect_golden("predict.json", "predict --to b200 decompose_h200.txt --json", kFx);
  // decide's part 2 PREDICTED from the old GPU's decomposition alone.
  expect_golden("decide_predicted.txt", "decide --from h200 --to b200 --old-run decompose_h200.txt --measured "
                "attention_h200.log attention_b200.log --price-from 3.5 --price-to 4", kFx);
}

// A mistyped command is named; output that cannot be written is a failure; a huge count of tiny
// packed documents is counted, not materialised.
TEST(BadInput, CommandsAndOutput) {
  expect_error("specz", 2, "unknown command 'specz'; the commands are specs,");
  // A data directory with a catalog but no model presets says so.
  const std::string bare = ::testing::TempDir() + "/bare_data";
  std::filesystem::create_directories(bare);
  std::filesystem::copy_file(std::string(UB_DATA_DIR) + "/accelerators.json", bare + "/accelerators.json",
                             std::filesystem::copy_options::overwrite_existing);
  expect_error("--data-dir " + bare + " flops --seqlen 8k", 2, "the data directory has no model presets");
  expect_error("specs > /dev/full", 1, "writing the output failed: No space left on device");
  const Result r = run("flops --seqlen 1G --doc-len 1 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // 2^30 documents of one token: sum of squares 2^30; 6 x that x head_dim x heads x layers.
  EXPECT_DOUBLE_EQ(j["points"][0]["attention_tflop"].get<double>(), 6.0 * 1073741824.0 * 128 * 32 * 32 / 1e12);
}

// Two runs of one file's first and second lengths: nothing measured on both, said so (exit 2),
// and the lengths a run measured are not called its software.
TEST(BadInput, ComparedRunsThatShareNoLength) {
  std::ifstream in(kFx + "/train_records_h200_ours.jsonl");
  std::vector<std::string> runs;
  for (std::string line; std::getline(in, line);) {
    if (line.find("\"argv\"") != std::string::npos) runs.emplace_back();
    if (!runs.empty()) runs.back() += line + "\n";
  }
  ASSERT_GE(runs.size(), 2u);
  const std::string a = write_file("part0.jsonl", runs[0]), b = write_file("part1.jsonl", runs[1]);
  const Result r = run("compare " + a + " " + b);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.err.find("share no length (old: 4096; new: 8192): nothing to compare"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("seqlen differs"), std::string::npos) << r.err;
  expect_error("report " + a + " " + b + " -o " + fresh_folder("no_common_length"), 2, "share no length");
}

// A record of a GPU its context does not list, and a context record that does not read: refused
// naming the line by every reader, not kept as a second GPU's figures or said at the next line.
// A damaged line that is skipped is said on stderr by report as by memfit.
TEST(BadInput, RecordsThatDoNotHangOnTheirContext) {
  const std::string sweep = slurp(std::string(UB_DATA_DIR) + "/examples/sweep_h200_llama-3.1-8b-4layers.jsonl");
  const std::string device7 = write_file("device7.jsonl", replaced(sweep, "\"device\":0,\"device_used", "\"device\":7,\"device_used"));
  for (const std::string& cmd : {"memfit " + device7, "report " + device7 + " -o " + fresh_folder("device7_report"),
                                 "history add --db " + fresh_db("device7") + " " + device7}) {
    expect_error(cmd, 1, "device7.jsonl:2: a record of GPU 7, which its context record does not list (it lists GPU 0)");
  }
  const std::string latin1 = write_file("latin1_context.jsonl", replaced(sweep, "\"argv\":[\"", "\"argv\":[\"r\xe9sultats "));
  for (const std::string& cmd : {"memfit " + latin1, "history add --db " + fresh_db("latin1") + " " + latin1}) {
    expect_error(cmd, 1, "latin1_context.jsonl:1: the context record does not read as JSON");
  }
  const size_t third = sweep.find('\n', sweep.find('\n') + 1) + 1;
  std::string with_nan = sweep;
  with_nan.insert(third, "{\"type\":\"train_step\",\"exec_time_ms\":NaN}\n");
  const std::string nan_line = write_file("nan_line.jsonl", with_nan);
  const Result r = run("report " + nan_line + " -o " + fresh_folder("nan_line_report"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("nan_line.jsonl:3: a damaged line skipped"), std::string::npos) << r.err;
}

// A longest sequence far past the lengths measured is the fitted line carried there: said in
// the text and in --json's warnings; near them, nothing is said.
TEST(BadInput, MemfitSaysALineCarriedFarPastItsPoints) {
  const std::string sweep = std::string(UB_DATA_DIR) + "/examples/sweep_h200_llama-3.1-8b-4layers.jsonl";
  const Result far = run("memfit " + sweep + " --capacity-gib 1e6");
  ASSERT_EQ(far.code, 0) << far.err;
  EXPECT_NE(far.out.find("x the longest length measured (327680): the fitted line carried that far is a guess"),
            std::string::npos) << far.out;
  const Result json_far = run("memfit " + sweep + " --capacity-gib 1e6 --json");
  ASSERT_EQ(json_far.code, 0) << json_far.err;
  EXPECT_NE(json_far.out.find("is a guess"), std::string::npos) << json_far.out;
  const Result near = run("memfit " + sweep);
  ASSERT_EQ(near.code, 0) << near.err;
  EXPECT_EQ(near.out.find("is a guess"), std::string::npos) << near.out;
}

TEST(BadInput, Predict) {
  expect_error("predict decompose_h200.txt", 2, "--to is required");
  expect_error("predict --to h2000 " + kFx + "/decompose_h200.txt", 2, "unknown GPU 'h2000'");
  expect_error("predict --to b200 " + kFx + "/attention_h200.log", 2, "give a decomposition");
  expect_error("predict --to b200 " + kFx + "/decompose_h200.txt --price-from 3", 2, "give both --price-old and --price-new");
  expect_error("predict --to b200 " + kFx + "/decompose_h200.txt --price-from 0 --price-to 3", 2, "must be positive");
  expect_error("predict --to b200 " + kFx + "/decompose_h200.txt --measured " + kFx + "/decompose_b200.txt", 2,
               "not a micro-benchmark predict reads");
  expect_error("predict --to b200 " + kFx + "/decompose_h200.txt --measured " + kFx + "/attention_h200.log --from mi300x", 2,
               "");
  expect_error("predict --to b200 " + kFx + "/sweep_no_steady.log", 1, "has no steady steps");
  // bench_decompose.py's printout is Llama-3.1-8B's: another --model is the option to change (exit 2).
  expect_error("predict " + kFx + "/decompose_h200.txt --to b200 --model llama-3.2-1b", 2,
               "--model llama-3.2-1b: " + kFx + "/decompose_h200.txt is the work of llama-3.1-8b at all its layers, the "
               "model bench_decompose.py runs, not the work --model llama-3.2-1b names: leave it out");
  for (const char* option : {"--layers", "--to-layers"}) {  // 0 is no depth, not "not given"
    expect_error("predict " + kFx + "/decompose_h200.txt --to b200 " + option + " 0", 2, std::string(option) + ": Value 0 not in range");
  }
  expect_error("predict " + kFx + "/decompose_h200.txt --to b200 --layers 4", 2,
               "--layers 4: " + kFx + "/decompose_h200.txt is the work of llama-3.1-8b at all its layers");
  // Our engine's decomposition counts what its kernels execute (FlashAttention's backward recomputes
  // the scores: 1042 TFLOP at 64k where the model's work is 972): its own work, predicted.
  const Result executed = run("predict " + kFx + "/decompose_records_h200_64k.jsonl --to b200 --json");
  ASSERT_EQ(executed.code, 0) << executed.err;
  // Its predicted TFLOPS and MFU count the model's work (the MFU convention), not the recomputed scores.
  for (const auto& p : nlohmann::json::parse(executed.out)) {
    EXPECT_NEAR(p["tflops"].get<double>() * p["step_ms"].get<double>() / 1e3, 971.83, 0.5) << p.dump().substr(0, 300);
  }
  // A printout that is no depth of the script's model either: the file is said to be wrong too.
  const std::string other_length = write_file("decompose_other_length.txt", replaced(slurp(kFx + "/decompose_h200.txt"), "seq=8192", "seq=4096"));
  expect_error("predict " + other_length + " --to b200 --layers 4", 2, "--layers 4: " + other_length + ": a step of 421.65 TFLOP is not");
  // What the records say they ran wins: 4 of Llama-3.1-8B's 32 layers are counted as 4 (an MFU above
  // 100% was the 32 layers' FLOPs over a 4-layer step), and an option that contradicts them is refused.
  const Result four = run("predict --to b200 " + kFx + "/train_records_h200_plain_8k.jsonl --model llama-3.1-8b --json");
  ASSERT_EQ(four.code, 0) << four.err;
  for (const auto& p : nlohmann::json::parse(four.out)) {
    EXPECT_LT(p["mfu"].get<double>(), 0.8) << p.dump().substr(0, 300);
  }
  expect_error("predict --to b200 " + kFx + "/train_records_h200_plain_8k.jsonl --model llama-3.1-70b", 2,
               "the log ran llama-3.1-8b, --model says llama-3.1-70b");
  expect_error("predict --to b200 " + kFx + "/train_records_h200_plain_8k.jsonl --layers 8", 2, "the log ran 4 layers, --layers says 8");
  // So do our decomposition's records: Mixtral's expert shapes for a Llama step passed the FLOPs
  // check at 2 layers (11.5 against 12.06 TFLOP) and were predicted from.
  expect_error("predict --to b200 " + kFx + "/suite_h200_2l/decompose-short.jsonl --model mixtral-8x7b", 2,
               "decompose-short.jsonl: the decomposition ran llama-3.1-8b, --model says mixtral-8x7b: give the model it ran");
  EXPECT_EQ(run("predict --to b200 " + kFx + "/suite_h200_2l/decompose-short.jsonl --model llama-3.1-8b").code, 0);
  // A log that names its model needs no --model (as compare reads it), and says where it came from.
  const Result named = run("predict --to b200 " + kFx + "/records_h200.jsonl");
  EXPECT_EQ(named.code, 0) << named.err;
  EXPECT_NE(named.out.find("the model is llama-3.1-8b, as the log says"), std::string::npos) << named.out;
  expect_error("decide --measured " + kFx + "/attention_h200.log", 2, "go with --old-run");
  expect_error("decide --from h100 --to b200 --old-run " + kFx + "/decompose_h200.txt", 2,
               "decompose_h200.txt measured the NVIDIA H200, not the h100-sxm (--from)");
}

TEST(BadInput, CompareAndMemfit) {
  const std::string h200 = kFx + "/sweep_h200.log";
  expect_error("compare " + h200 + " " + kFx + "/sweep_70b.log", 2, "not the same workload (different models");
  expect_error("compare " + h200 + " " + kFx + "/sweep_b200.log --strict", 1, "--strict: the runs differ in torch");
  const std::string strict_dir = ::testing::TempDir() + "/report_strict";
  expect_error("report " + h200 + " " + kFx + "/sweep_b200.log --strict -o " + strict_dir, 1,
               "--strict: the runs differ in torch");
  EXPECT_FALSE(std::filesystem::exists(strict_dir + "/report.html")) << "nothing written when refused";
  const std::string b200 = kFx + "/sweep_b200.log";
  expect_error("compare " + h200 + " " + b200 + " --price-old 0 --price-new 2", 2, "--price-old: must be positive");
  expect_error("compare " + h200 + " " + b200 + " --price-old 2", 2, "give both --price-old and --price-new");
  expect_error("compare " + h200 + " " + kFx + "/sweep_bad_json.log", 1, "sweep_bad_json.log:8: a step object that is not valid JSON");
  expect_error("compare " + h200 + " " + kFx + "/sweep_no_steady.log", 1, "has no steady steps");
  {  // a length measured twice: the later one is compared, and the output says so
    const Result dup = run("compare " + h200 + " " + kFx + "/sweep_duplicate.log");
    EXPECT_EQ(dup.code, 0) << dup.err;
    std::string unwrapped = dup.out;  // the warning list wraps long lines, where depends on the path's length
    for (std::size_t at; (at = unwrapped.find("\n  ")) != std::string::npos;) unwrapped.replace(at, 3, " ");
    EXPECT_NE(unwrapped.find("sweep_duplicate.log:8: seq_len=8192 measured again (first at line 2)"), std::string::npos)
        << dup.out;
  }
  expect_error("compare " + h200 + " " + kFx + "/sweep_two_gpus.log", 1, "mismatched GPUs in one file");
  expect_error("compare " + h200 + " /nonexistent.log", 2, "/nonexistent.log: no such file");
  expect_error("memfit " + kFx + "/sweep_h200.log --capacity-gib=-5", 2, "--capacity-gib: must be positive");
  expect_error("memfit " + kFx + "/sweep_h200.log --for H2000", 2, "unknown GPU 'H2000'");
  expect_error("memfit " + kFx + "/levers/none.jsonl " + kFx + "/records_h200.jsonl --for h200", 2,
               "measured different workloads");
  expect_error("memfit " + kFx + "/levers/none.jsonl " + kFx + "/levers/none.jsonl --for h200", 2,
               "give one run per set of levers");
  expect_error("memfit " + kFx + "/levers/none.jsonl " + kFx + "/levers/checkpointing.jsonl --capacity-gib 80", 2,
               "--capacity-gib reads one run");
  expect_error("report " + h200 + " " + h200 + " " + h200 + " -o /tmp/x", 2, "");
  expect_error("compare " + kFx + "/attention_h200.log " + kFx + "/decompose_b200.txt", 2,
               "compare needs two logs of one kind");
  expect_error("compare " + kFx + "/nccl_peer_h200x2.jsonl " + h200, 2,
               "nccl_peer_h200x2.jsonl is a collective benchmark log");
  expect_error("report " + kFx + "/nccl_peer_h200x2.jsonl " + h200 + " -o /tmp/x", 2, "report needs two logs of one kind");
  expect_error("decompose --profile-steps 0", 2, "--profile-steps 0 is out of range");  // before any GPU
  expect_error("decompose --steps 0", 2, "--steps: must be positive, got 0");
  expect_error("decompose " + kFx + "/trace_kineto_small.json --steps 0", 2, "--steps: must be positive, got 0");
  expect_error("decompose " + kFx + "/trace_kineto_small.json --checkpointing", 2, "--checkpointing runs our engine");
  expect_error("decompose /nonexistent.json", 2, "/nonexistent.json: no such file or folder");
  expect_error("decompose " + h200, 2, "sweep_h200.log: neither a torch.profiler trace (a JSON object) nor bench_decompose.py's printout (it has no '# wall step=' line); it reads as a training log");
  expect_error("decompose " + kFx + "/trace_kineto_small.json --step-name '^TrainStep'", 1, "give --step-name");
  expect_error("decompose " + kFx + "/trace_kineto_small.json --seqlen 8k", 2, "give --model too");
  expect_error("decompose " + kFx + "/trace_kineto_small.json --classes " + h200, 1, "not valid JSON");
}

TEST(Cli, ReportWritesEveryFile) {
  const std::string dir = ::testing::TempDir() + "/cli_report";
  std::filesystem::remove_all(dir);
  const Result r = run("report " + kFx + "/records_h200.jsonl -o " + dir);
  if (report_tools_missing(r)) GTEST_SKIP() << r.err;  // the README's test command installs them
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* f : {"report.html", "report.md", "charts/tflops.png", "charts/tflops.svg", "charts/mfu.svg",
                        "charts/attention_share.png", "charts/memory.svg"}) {
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + f)) << f;
  }
  const std::string md = slurp(dir + "/report.md");
  EXPECT_NE(md.find("Memory fit and the longest sequence per GPU"), std::string::npos);
  EXPECT_NE(md.find("| h200-sxm |"), std::string::npos);
}

// The page of one run leads with what ran, where, on what, when, the best figure and the longest
// sequence, as the two-run page leads with its decision.
TEST(Cli, AReportOfOneRunLeadsWithItsSummary) {
  const std::string dir = ::testing::TempDir() + "/cli_report_glance";
  std::filesystem::remove_all(dir);
  const Result r = run("report " + std::string(UB_DATA_DIR) + "/examples/sweep_h200_llama-3.1-8b-4layers.jsonl -o " + dir);
  if (report_tools_missing(r)) GTEST_SKIP() << r.err;
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string md = slurp(dir + "/report.md");
  const size_t glance = md.find("### At a glance"), table = md.find("### Per sequence length");
  ASSERT_NE(glance, std::string::npos) << md.substr(0, 400);
  EXPECT_LT(glance, table);
  for (const char* said : {"What ran: the training step of llama-3.1-8b, 4 layers, batch 1, bf16, by upgradebench train",
                           "Where and when: NVIDIA H200 (h200-sxm) on vm, 2026-11-30T12:44:52Z", "cublaslt 13.1.0",
                           "upgradebench 0.1.0", "Best: 467.6 TFLOPS per GPU at 16384 tokens",
                           "Longest sequence: 327680 tokens ran, 393216 ran out of memory", "tokens per joule"}) {
    EXPECT_NE(md.substr(glance, table - glance).find(said), std::string::npos) << said << "\n" << md.substr(glance, table - glance);
  }
}

// One argument for the shell, whatever it holds.
std::string shell_quoted(const std::string& s) {
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

TEST(Cli, TextFromLogsAndPathsNeverRuns) {
  // A GPU name and an output folder holding backticks, $(...), quotes and a newline reach the
  // chart titles and gnuplot's script; TMPDIR holds a planted symlink where a fixed error file
  // name would be. Nothing may run and the symlink's target must stay as it is.
  const std::filesystem::path dir = ::testing::TempDir() + "/hostile_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "tmp");
  const std::string d = dir.string();
  const std::string evil = "NVIDIA H200 `touch " + d + "/backtick` $(touch " + d + "/dollar) ' \\\" \\nsystem('touch " +
                           d + "/system')";
  std::string records = slurp(kFx + "/records_h200.jsonl");
  for (size_t at = records.find("NVIDIA H200"); at != std::string::npos; at = records.find("NVIDIA H200", at + evil.size())) {
    records.replace(at, 11, evil);
  }
  std::ofstream(dir / "hostile.jsonl") << records;
  std::ofstream(dir / "victim") << "keep";
  for (const char* name : {"upgradebench-gnuplot.err", "gnuplot.err"}) {
    std::filesystem::create_symlink(dir / "victim", dir / "tmp" / name);
  }
  const std::string out = d + "/out `touch " + d + "/out_backtick` $(touch " + d + "/out_dollar) 'q";
  const Result r = run("report " + shell_quoted(d + "/hostile.jsonl") + " -o " + shell_quoted(out),
                       "");
  (void)r;
  const Result t = run("report " + shell_quoted(d + "/hostile.jsonl") + " -o " + shell_quoted(out + "2"));
  for (const Result* x : {&r, &t}) {
    if (x->code != 0 && (x->err.find("gnuplot is not installed") != std::string::npos || x->err.find("npm ci") != std::string::npos)) {
      GTEST_SKIP() << x->err;
    }
  }
  // The same again with TMPDIR pointing at the planted symlinks.
  const std::string with_tmpdir = fmt::format("cd {} && TMPDIR={} {} report {} -o {} 2>{}", shell_quoted(d),
                                              shell_quoted(d + "/tmp"), UB_BINARY, shell_quoted(d + "/hostile.jsonl"),
                                              shell_quoted(out + "3"), shell_quoted(d + "/stderr3"));
  const int rc = std::system(with_tmpdir.c_str());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(rc, 0) << slurp(d + "/stderr3");
  for (const char* planted : {"backtick", "dollar", "system", "out_backtick", "out_dollar"}) {
    EXPECT_FALSE(std::filesystem::exists(dir / planted)) << planted << " was created: a command ran";
  }
  EXPECT_EQ(slurp(d + "/victim"), "keep");
  EXPECT_TRUE(std::filesystem::exists(out + "/charts/tflops.svg"));
  // The name is in the report as text, on one line.
  const std::string md = slurp(out + "/report.md");
  EXPECT_NE(md.find("$(touch " + d + "/dollar) ' \" \\x0asystem('touch"), std::string::npos) << md.substr(0, 400);
  if (!HasFailure()) std::filesystem::remove_all(dir);
}

// Step decompositions: one stacked bar per run (its buckets), each run's table, and for two the
// bucket-by-bucket speedups; the real engine decomposition reads as well as bench_decompose.py's.
TEST(Cli, ReportOfDecompositions) {
  for (const std::string& logs : {kFx + "/decompose_h200.txt " + kFx + "/decompose_b200.txt",
                                  kFx + "/engine_llama_2l_4096.jsonl"}) {
    const std::string dir = ::testing::TempDir() + "/cli_report_decomposition";
    std::filesystem::remove_all(dir);
    const Result r = run("report " + logs + " -o " + dir);
    if (report_tools_missing(r)) GTEST_SKIP() << r.err;  // the README's test command installs them
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(std::filesystem::exists(dir + "/charts/decomposition.svg")) << logs;
    const std::string html = slurp(dir + "/report.html");
    EXPECT_NE(html.find("\"type\":\"bar\""), std::string::npos) << logs;  // the stacked bars' spec
    const std::string md = slurp(dir + "/report.md");
    EXPECT_NE(md.find("| step |"), std::string::npos) << logs;
  }
  const std::string md = slurp(::testing::TempDir() + "/cli_report_decomposition/report.md");
  EXPECT_NE(md.find("| gemm |"), std::string::npos);  // the engine's nine buckets
}

// bench_decompose.py's printout lands in the same decomposition record as a trace's.
TEST(Cli, DecomposeReadsBenchDecomposePrintout) {
  const Result r = run("decompose " + kFx + "/decompose_h200.txt --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["source"], "bench_decompose.py");
  EXPECT_EQ(j[0]["seqlen"], 8192);
  EXPECT_DOUBLE_EQ(j[0]["step_ms"].get<double>(), 910.0);
  ASSERT_EQ(j[0]["buckets"].size(), 2u);
  EXPECT_EQ(j[0]["buckets"][0]["name"], "attention(FA)");
  EXPECT_NEAR(j[0]["buckets"][0]["share"].get<double>(), 107.4 / 910.0, 1e-12);
}

// A decomposition of a trace goes into the history with --db, like every measuring command's
// records: the file it names holds the context record and the decomposition, and the database
// the run.
TEST(Cli, DecomposeOfATraceGoesIntoTheHistory) {
  const std::string dir = ::testing::TempDir() + "/decompose_db";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string db = dir + "/history.sqlite", out = dir + "/decompose.jsonl";
  const Result r = run("decompose " + kFx + "/hf_llama_2l_4096.pt.trace.json.gz --db " + db + " --out " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("records: " + out), std::string::npos) << r.out;
  const Result list = run("history list --db " + db + " --json");
  ASSERT_EQ(list.code, 0) << list.err;
  const auto runs = nlohmann::json::parse(list.out).at("runs");
  ASSERT_EQ(runs.size(), 1u) << list.out;
  EXPECT_EQ(runs[0]["command"], "decompose");
  EXPECT_EQ(runs[0]["kind"], "decomposition");
  EXPECT_EQ(runs[0]["source"], out);
}

// The engine's 2-layer decomposition carried to the whole model: its records say the model and the
// depth they measured; --layers that contradicts them is refused, and a depth the model does not have too.
TEST(Cli, PredictCarriesADecompositionToAnotherDepth) {
  const std::string in = kFx + "/engine_llama_2l_4096.jsonl";
  const Result two = run("predict --to b200 " + in + " --model llama-3.1-8b --json");  // its old side: the step measured
  ASSERT_EQ(two.code, 0) << two.err;
  // The GPU measured, with nothing carried (or carried to the depth it ran), is the measurement
  // relabelled "predicted".
  for (const std::string& carry : {"", " --to-layers 2", " --seqlen 4096"}) {
    expect_error("predict --to h200 " + in + " --model llama-3.1-8b" + carry, 2,
                 "predict: --to h200-sxm is the GPU the inputs measured (NVIDIA H200): name the GPU you consider");
  }
  const Result deep = run("predict --to h200 " + in + " --model llama-3.1-8b --to-layers 32 --json");
  ASSERT_EQ(deep.code, 0) << deep.err;
  const nlohmann::json a = nlohmann::json::parse(two.out), b = nlohmann::json::parse(deep.out);
  ASSERT_EQ(a.size(), b.size());
  ASSERT_FALSE(b.empty());
  EXPECT_EQ(b[0]["layers"], 32);
  EXPECT_EQ(b[0]["layers_carried_from"], 2);
  EXPECT_NE(b[0]["from"].get<std::string>().find("carried from 2 to 32 layers"), std::string::npos);
  const double ratio = b[0]["old_step_ms"].get<double>() / a[0]["old_step_ms"].get<double>();
  EXPECT_GT(ratio, 6.0);   // 16 times the layers, less the lm_head, loss and embeddings that do not grow
  EXPECT_LT(ratio, 16.0);
  // On the same GPU the prediction is the carried step itself.
  EXPECT_NEAR(b[0]["step_ms"].get<double>(), b[0]["old_step_ms"].get<double>(), 1e-6 * b[0]["step_ms"].get<double>());
  const Result text = run("predict --to h200 " + in + " --model llama-3.1-8b --to-layers 32");
  EXPECT_NE(text.out.find("* the old GPU's step there is itself carried"), std::string::npos) << text.out;
  // Without --model, the model its records name.
  const Result named = run("predict --to h200 " + in + " --to-layers 32 --json");
  ASSERT_EQ(named.code, 0) << named.err;
  const Result said = run("predict --to h200 " + in + " --to-layers 32");
  EXPECT_NE(said.out.find("the model is llama-3.1-8b, as its records say"), std::string::npos) << said.out;
  EXPECT_NEAR(nlohmann::json::parse(named.out)[0]["step_ms"].get<double>(), b[0]["step_ms"].get<double>(),
              1e-6 * b[0]["step_ms"].get<double>());
  expect_error("predict --to h200 " + in + " --model llama-3.1-8b --layers 4 --to-layers 32", 2,
               "the decomposition ran 2 layers, --layers says 4");
  expect_error("predict --to h200 " + in + " --model llama-3.1-8b --to-layers 40", 2, "more than the 32 layers");
}

// predict's records as a report: every page and chart marked PREDICTED, not measured; predicted
// from example data, or beside a run that is, EXAMPLE DATA.
TEST(Cli, ReportOfPredictions) {
  const std::string dir = ::testing::TempDir() + "/cli_report_prediction";
  std::filesystem::remove_all(dir);
  const std::string records = dir + ".jsonl";
  std::filesystem::remove(records);
  const Result p = run("predict --to b200 " + kFx + "/decompose_h200.txt --measured " + kFx + "/attention_h200.log " +
                       kFx + "/attention_b200.log --price-from 3.5 --price-to 6 --out " + records);
  ASSERT_EQ(p.code, 0) << p.err;
  const Result r = run("report " + records + " -o " + dir);
  if (report_tools_missing(r)) GTEST_SKIP() << r.err;  // the README's test command installs them
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* f : {"charts/speedup.svg", "charts/step.svg", "charts/cost.svg"}) {
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + f)) << f;
  }
  const std::string md = slurp(dir + "/report.md");
  EXPECT_NE(md.find("PREDICTED, NOT MEASURED on the b200-sxm"), std::string::npos);
  // The decomposition it was predicted from is hand-written: the page and each chart say so.
  EXPECT_NE(md.find("EXAMPLE DATA: predicted from " + kFx + "/decompose_h200.txt, not measurements"), std::string::npos) << md;
  EXPECT_NE(md.find("[EXAMPLE DATA]"), std::string::npos);
  EXPECT_NE(md.find("| 8192 |"), std::string::npos);
  // Beside a measured run of the new GPU: its times on the charts, predicted over measured per
  // length. The run is of the predicted workload: the guide's sweep of eight GPUs (ZeRO-3,
  // recompute) is not what its 8k decomposition (ZeRO-2, no recompute) ran.
  const std::string beside = dir + "_beside";
  std::filesystem::remove_all(beside);
  const Result other = run("report " + records + " " + kFx + "/sweep_b200.log -o " + beside);
  EXPECT_EQ(other.code, 2);
  EXPECT_NE(other.err.find("is not a measurement of what"), std::string::npos) << other.err;
  EXPECT_NE(other.err.find("zero: 3 vs 2, gc: 1 vs 0, offload_optim: 1 vs 0, liger: 1 vs 0; the run's, then the prediction's"), std::string::npos) << other.err;
  const std::string of_sweep = dir + "_sweep.jsonl";
  std::filesystem::remove(of_sweep);
  ASSERT_EQ(run("predict --to b200 " + kFx + "/sweep_h200.log --out " + of_sweep).code, 0);
  const Result b = run("report " + of_sweep + " " + kFx + "/sweep_b200.log -o " + beside);
  ASSERT_EQ(b.code, 0) << b.err;
  // A length the new GPU was measured out of memory at: said, in its row and above the page.
  std::string oom_log;
  const std::string b200_log = slurp(kFx + "/sweep_b200.log");
  std::istringstream b200(b200_log);
  bool in_32k = false;
  for (std::string line; std::getline(b200, line);) {
    if (line.rfind("=====", 0) == 0) in_32k = line.find("seq_len=32768") != std::string::npos;
    if (in_32k && line.rfind("{", 0) == 0) continue;
    oom_log += line + "\n";
    if (in_32k && line.rfind("# gpu=", 0) == 0) oom_log += "[rank3]: torch.OutOfMemoryError: CUDA out of memory.\n";
  }
  if (b200_log.back() != '\n') oom_log.pop_back();  // its last line is cut short, as a killed run leaves it
  const std::string oom_page = fresh_folder("report_prediction_oom");
  const Result oom = run("report " + of_sweep + " " + write_file("sweep_b200_oom_32k.log", oom_log) + " -o " + oom_page);
  ASSERT_EQ(oom.code, 0) << oom.err;
  EXPECT_NE(oom.out.find("The b200-sxm ran out of memory at 32768 tokens, where a step was predicted"), std::string::npos) << oom.out;
  EXPECT_NE(slurp(oom_page + "/report.md").find("| out of memory | did not run |"), std::string::npos);
  std::filesystem::remove(of_sweep);
  const std::string mdb = slurp(beside + "/report.md");
  EXPECT_NE(mdb.find("predicted / measured"), std::string::npos) << mdb;
  EXPECT_NE(mdb.find("beside the b200-sxm measured in"), std::string::npos) << mdb;
  EXPECT_NE(mdb.find("EXAMPLE DATA: " + kFx + "/sweep_b200.log: hand-written"), std::string::npos) << mdb;
  EXPECT_NE(slurp(beside + "/charts/step.svg").find("new GPU (EXAMPLE DATA)"), std::string::npos);
  const Result wrong = run("report " + records + " " + kFx + "/attention_b200.log -o " + beside);
  EXPECT_EQ(wrong.code, 2);
  EXPECT_NE(wrong.err.find("not a training log of the new GPU"), std::string::npos) << wrong.err;
  std::filesystem::remove(records);
}

TEST(Cli, ReportOfCollectives) {
  for (const std::string& logs : {kFx + "/nccl_records_h200x2_graph.jsonl",
                                  kFx + "/nccl_peer_h200x2.jsonl " + kFx + "/nccl_records_h200x2_graph.jsonl"}) {
    const std::string dir = ::testing::TempDir() + "/cli_report_nccl";
    std::filesystem::remove_all(dir);
    const Result r = run("report " + logs + " -o " + dir);
    if (report_tools_missing(r)) GTEST_SKIP() << r.err;  // the README's test command installs them
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(std::filesystem::exists(dir + "/charts/busbw.svg")) << logs;
    const std::string md = slurp(dir + "/report.md");
    EXPECT_NE(md.find("reduce_scatter"), std::string::npos) << logs;
    EXPECT_NE(md.find("4G"), std::string::npos) << logs;
  }
}

}  // namespace

// `history` end to end on an SQLite file: add, list, show, metrics, trend and fleet in every
// format, compare and report of stored runs, and its errors.
std::string torch_logs() {
  std::string all;
  for (const char* v : {"2.10.0_cu129", "2.10.0_cu130", "2.11.0_cu130", "2.12.0_cu130", "2.13.0_cu129", "2.13.0_cu130"}) {
    all += fmt::format(" torch_versions/h200_torch{}.log", v);
  }
  return all;
}

// A sweep log in benchmark.py's format of about `mb` MB: two lengths, steps to fill it.
std::string large_sweep_log(const std::string& name, size_t mb) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream out(path);
  for (int block = 0; block < 2; ++block) {
    out << fmt::format("===== seq_len={} =====\n# gpu=NVIDIA H200 model_size=8b batch_size=1\n", 8192 << block);
    for (size_t step = 0; static_cast<size_t>(out.tellp()) < (mb << 20) * (block + 1) / 2; ++step) {
      // Llama-3.1-8B's FLOPs at 8k and 16k tokens at about 141 TFLOPS; each step's TFLOPS its own.
      const double tflop = block ? 948.84417503232 : 421.645529382912;
      const double ms = (block ? 6724.0 : 2988.0) + static_cast<double>(step % 97) / 97;
      out << fmt::format(R"({{"step": {}, "warmup": {}, "exec_time_ms": "{:.2f}", "tflops": "{:.2f}", "peak_mem_gib": "{}"}})",
                         step, step < 2, ms, tflop / ms * 1e3, block ? 19.1 : 16.3)
          << "\n";
    }
  }
  return path;
}

// Peak resident memory of the largest child waited for so far (the binary through its shell).
long children_peak_kib() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  return u.ru_maxrss;
}

// The analysis commands read a log a line at a time and keep a bounded sample of each length's
// steps: twenty times the file takes no more memory (the whole file held took five times its size).
TEST(Bounds, ReadingALogTakesMemoryIndependentOfItsSize) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "under AddressSanitizer a process's memory holds its quarantine of freed blocks: the bound is "
                  "checked in the plain build";
#endif
  const std::string small = large_sweep_log("sweep_2mb.log", 2), large = large_sweep_log("sweep_40mb.log", 40);
  // compare's NEW: the same log under another name, every step half a millisecond longer (one
  // file given twice, or a copy of it, is the same measurement: refused). Written by sed: a test
  // process holding the file would count in its children's peak (they fork from it).
  const auto again = [](const std::string& f) {
    EXPECT_EQ(capture(fmt::format("sed 's/\\(\"exec_time_ms\": \"[0-9]*\\.\\)/\\15/' {} > {}.again", f, f)).code, 0);
    return f + ".again";
  };
  for (const std::string cmd : {"memfit {} --capacity-gib 130", "compare {} {} --force --json"}) {
    const auto args = [&](const std::string& f) { return fmt::format(fmt::runtime(cmd), f, again(f)); };
    ASSERT_EQ(run(args(small)).code, 0) << cmd;
    const long small_kib = children_peak_kib();
    const Result r = run(args(large));
    ASSERT_EQ(r.code, 0) << cmd << "\n" << r.err;
    // compare's figures are of the steps: its warnings say they are a sample (memfit's peak is of every step).
    if (cmd.rfind("compare", 0) == 0) EXPECT_NE(r.out.find("its statistics are of a uniform sample"), std::string::npos) << r.out;
    EXPECT_LT(children_peak_kib() - small_kib, 16 * 1024) << cmd << ": " << small_kib << " KiB for 2 MB, "
                                                           << children_peak_kib() << " KiB for 40 MB";
  }
  std::remove(small.c_str());
  std::remove(large.c_str());
}

// One name per concept across commands; the older spellings give the same output.
TEST(Flags, OneNamePerConceptAndTheOlderSpellingsStillWork) {
  const std::string logs = "sweep_h200.log sweep_b200.log --force";
  const auto same = [](const std::string& a, const std::string& b, const std::string& cwd = "") {
    const Result x = run(a, cwd), y = run(b, cwd);
    ASSERT_EQ(x.code, 0) << a << "\n" << x.err;
    ASSERT_EQ(y.code, 0) << b << "\n" << y.err;
    EXPECT_EQ(x.out, y.out) << a << " vs " << b;
  };
  same("compare " + logs + " --tokens 1e12 --train-gpus 8 --json", "compare " + logs + " --tokens 1e12 --gpus 8 --json", kFx);
  same("predict --to b200 sweep_h200.log --price-old 3.5 --price-new 6 --json",
       "predict --to b200 sweep_h200.log --price-from 3.5 --price-to 6 --json", kFx);
  same("flops --model llama-3.1-8b --seqlens 8k,16k --json", "flops --model llama-3.1-8b --seqlen 8k,16k --json");
  // A price is read the same way everywhere: text, then a one-line error naming the option.
  expect_error("predict --to b200 " + kFx + "/sweep_h200.log --price-old x --price-new 6", 2, "--price-old");
  for (const char* c : {"compare", "report", "predict", "decide", "suite", "history trend"}) {
    const Result help = run(std::string(c) + " --help");
    EXPECT_EQ(help.out.find("Excludes:"), std::string::npos) << c;
    EXPECT_NE(help.out.find("Usage: upgradebench "), std::string::npos) << c << ": " << help.out.substr(0, 200);
    EXPECT_EQ(help.out.find("(1x)"), std::string::npos) << c;
  }
  expect_error("compare " + kFx + "/sweep_h200.log --json --csv " + kFx + "/sweep_b200.log", 2, "excludes");
  // --out is where records go; a page's folder is -o / --page (report's and decide's older --out still works).
  const std::string a = ::testing::TempDir() + "/page_a", b = ::testing::TempDir() + "/page_b";
  std::filesystem::remove_all(a), std::filesystem::remove_all(b);
  const Result pa = run("report " + kFx + "/records_h200.jsonl --page " + a), pb = run("report " + kFx + "/records_h200.jsonl --out " + b);
  if (report_tools_missing(pa)) GTEST_SKIP() << pa.err;
  EXPECT_EQ(pa.code, 0) << pa.err;
  EXPECT_EQ(pb.code, 0) << pb.err;
  EXPECT_EQ(slurp(a + "/report.md"), slurp(b + "/report.md"));
  expect_error("report " + kFx + "/records_h200.jsonl", 2, "--page is required");
}

TEST(History, AddListShowAndTrendOfTheGuidesTorchVersions) {
  const std::string db = fresh_db("history_cli");
  const Result add = run("history add --db " + db + torch_logs() + " --json", kFx);
  ASSERT_EQ(add.code, 0) << add.err;
  const auto added = nlohmann::json::parse(add.out);
  ASSERT_EQ(added["files"].size(), 6u);
  EXPECT_EQ(added["files"][0]["runs"][0]["status"], "added");
  const Result again = run("history add --db " + db + torch_logs(), kFx);
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_NE(again.out.find("0 runs added, 0 grown, 6 already stored"), std::string::npos) << again.out;
  expect_golden("history_trend_torch.txt", "history trend train.tflops --at 8k --by torch --stack cuda=13.0 --db " + db);
  expect_golden("history_trend_torch.md", "history trend train.tflops --at 8k --by torch --stack cuda=13.0 --md --db " + db);
  expect_golden("history_trend_torch.csv", "history trend train.tflops --at 8k --by torch --stack cuda=13.0 --csv --db " + db);
  expect_error("history trend train.tflops --at 8k --since 2026-11-25 --until 2026-11-01 --db " + db, 2,
               "--since 2026-11-25 is after --until 2026-11-01: no date is both");
  expect_error("history list --stack torch=2.12.0 --stack torch=2.13.0 --db " + db, 2,
               "--stack: torch must be 2.12.0 and 2.13.0 at once");
  expect_error("history list --kind bogus --db " + db, 2, "--kind bogus: not a kind of run");
  expect_error("history trend train.tflops --at 8k --by troch --db " + db, 2,
               "--by troch: none of the 6 runs of train.tflops stores a version of it");
  const Result json = run("history trend train.tflops --at 8192 --by torch --stack cuda=13.0 --json --db " + db);
  ASSERT_EQ(json.code, 0) << json.err;
  const auto all = nlohmann::json::parse(json.out);
  ASSERT_EQ(all["series"].size(), 1u) << "one GPU, one workload";
  const auto& t = all["series"][0];
  EXPECT_EQ(t["workload"], "llama-3.1-8b, all layers, 8 GPUs, ZeRO-3, checkpointing, offloaded optimizer, bf16, batch 1");
  EXPECT_EQ(t["runs"][0]["data"], "EXAMPLE DATA") << "the logs say they are hand-written";
  ASSERT_EQ(t["steps"].size(), 3u);
  EXPECT_EQ(t["steps"][1]["from"], "2.11.0");
  EXPECT_NEAR(t["steps"][1]["change"]["change"].get<double>(), 0.163, 0.001);
  EXPECT_TRUE(t["steps"][1]["change"]["significant"].get<bool>());
  const Result list = run("history list --json --command benchmark.py --stack torch=2.13.0 --db " + db);
  ASSERT_EQ(list.code, 0) << list.err;
  const auto listed = nlohmann::json::parse(list.out)["runs"];
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0]["gpus"], 8) << "benchmark.py's world_size=8, not the one GPU its header names";
  EXPECT_EQ(listed[0]["data"], "EXAMPLE DATA");
  const Result show = run("history show 4 --db " + db);
  ASSERT_EQ(show.code, 0) << show.err;
  EXPECT_NE(show.out.find("torch         2.12.0"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("train.tflops"), std::string::npos) << show.out;
  const Result metrics = run("history metrics --json --db " + db);
  ASSERT_EQ(metrics.code, 0) << metrics.err;
  EXPECT_EQ(nlohmann::json::parse(metrics.out)["metrics"][0]["metric"], "train.step_ms");
}

TEST(History, FleetOfRealMamfRecords) {
  const std::string db = fresh_db("history_fleet");
  ASSERT_EQ(run("history add --db " + db + " mamf_records_h200_a.jsonl mamf_records_h200_b.jsonl", kFx).code, 0);
  expect_golden("history_fleet_mamf.txt", "history fleet mamf.tflops.bf16 --db " + db);
  const Result json = run("history fleet mamf.tflops.bf16 --json --gpu h200 --db " + db);
  ASSERT_EQ(json.code, 0) << json.err;
  const auto f = nlohmann::json::parse(json.out);
  // Three H200s, one in the first file and two in the second, whose runs measured other shapes: a
  // ceiling over other shapes is another fleet, never a slower GPU.
  ASSERT_EQ(f["fleets"].size(), 2u);
  EXPECT_EQ(f["fleets"][0]["gpus"].size() + f["fleets"][1]["gpus"].size(), 3u);
}

// The guide's torch logs name neither a GPU's UUID nor its host: each run's GPU is its own, never
// one card run nine times, and a fleet over four torch versions says its software differs.
TEST(History, AFleetOfLogsWithoutGpuIdentityOrOneStackSaysSo) {
  const std::string db = fresh_db("history_fleet_torch");
  ASSERT_EQ(run("history add --db " + db + " torch_versions/*.log sweep_h200.log", kFx).code, 0);
  const Result r = run("history fleet train.tflops --at 8k --json --db " + db);
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json fleet = nlohmann::json::parse(r.out)["fleets"][0];
  EXPECT_EQ(fleet["gpus"].size(), 7u) << fleet.dump().substr(0, 300);
  EXPECT_EQ(fleet["gpus_known_only_by_run"], 7);
  ASSERT_FALSE(fleet["stack_spread"].empty());
  EXPECT_NE(fleet["stack_spread"].dump().find("torch 2.10.0, 2.11.0, 2.12.0, 2.13.0"), std::string::npos) << fleet["stack_spread"];
  const Result held = run("history fleet train.tflops --at 8k --stack torch=2.13.0 --stack cuda=13.0 --db " + db);
  ASSERT_EQ(held.code, 0) << held.err;
  EXPECT_EQ(held.out.find("more than one stack"), std::string::npos) << held.out;
  EXPECT_NE(held.out.find("known only by their run"), std::string::npos) << held.out;
}

// The series `history trend ARGS --json` gives of the database `db`.
nlohmann::json trend_series(const std::string& db, const std::string& args) {
  const Result r = run("history trend " + args + " --json --db " + db);
  EXPECT_EQ(r.code, 0) << r.err;
  return r.code == 0 ? nlohmann::json::parse(r.out)["series"] : nlohmann::json::array();
}

// Two runs of one model, depth and length whose gradients were fp32 in one and bf16 in the other
// are two recipes: two series, never a change over time, nor one fleet where a GPU is slow.
TEST(History, RunsOfAnotherPrecisionRecipeAreAnotherSeries) {
  const std::string db = fresh_db("history_recipes");
  ASSERT_EQ(run("history add --db " + db + " train_records_h200_ours.jsonl train_records_h200_plain_8k.jsonl", kFx).code, 0);
  const nlohmann::json series = trend_series(db, "train.tflops --at 8192");
  ASSERT_EQ(series.size(), 2u) << series.dump().substr(0, 300);
  for (const auto& one : series) EXPECT_TRUE(one["steps"].empty()) << one.dump().substr(0, 300);
  EXPECT_NE(series[0]["workload"].get<std::string>().find("gradients"), std::string::npos) << series[0]["workload"];
  const Result fleet = run("history fleet train.tflops --at 8192 --db " + db);
  EXPECT_EQ(fleet.out.find("SLOW"), std::string::npos) << fleet.out;
  // Both runs hold the figure: `metrics` counts runs, not the most at one point.
  ASSERT_EQ(run("history add --db " + db + " engine_llama_2l_4096.jsonl decompose_records_h200_64k.jsonl", kFx).code, 0);
  std::map<std::string, int64_t> runs;
  const nlohmann::json metrics = nlohmann::json::parse(run("history metrics --json --db " + db).out);
  for (const auto& m : metrics["metrics"]) runs[m["metric"].get<std::string>()] = m["runs"].get<int64_t>();
  EXPECT_EQ(runs["decompose.ms.gemm"], 2);
  EXPECT_EQ(runs["train.tflops"], 7);  // the four runs of the first file, one of the second, and the two decompositions
}

// Runs stored while their file was being written are one measurement with the finished file:
// compared or reported side by side, refused as a file and its copy are.
TEST(History, StoredRunsAgainstTheirGrownFileAreOneMeasurement) {
  const std::string db = fresh_db("history_grown_file");
  std::istringstream whole(slurp(kFx + "/train_records_h200_ours.jsonl"));
  std::string first_two;  // its first 20 lines: the first two runs
  std::string line;
  for (int n = 0; n < 20 && std::getline(whole, line); ++n) first_two += line + "\n";
  const std::string part = write_file("ours_first_runs.jsonl", first_two);
  ASSERT_EQ(run("history add --db " + db + " " + part).code, 0);
  expect_error("compare run:1-2 " + kFx + "/train_records_h200_ours.jsonl --db " + db, 2,
               "compare: run:1-2 and " + kFx + "/train_records_h200_ours.jsonl are the same measurement");
  expect_error("report run:1-2 " + kFx + "/train_records_h200_ours.jsonl --db " + db + " -o " + fresh_folder("grown_page"), 2,
               "report: run:1-2 and " + kFx + "/train_records_h200_ours.jsonl are the same measurement");
}

// A file added while a line was being written: that line is ignored, and not stored, so the
// finished file adds as the run grown.
TEST(History, ARunCutMidLineGrowsWithTheFinishedFile) {
  const std::string db = fresh_db("history_cut_line");
  const std::string whole = slurp(kFx + "/records_h200.jsonl");
  const std::string cut = write_file("records_cut_mid_line.jsonl", whole.substr(0, whole.find('\n', 1200) + 20));
  const Result first = run("history add --db " + db + " " + cut);
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_NE(first.err.find("truncated last line ignored"), std::string::npos) << first.err;
  const Result grown = run("history add --json --db " + db + " " + kFx + "/records_h200.jsonl");
  ASSERT_EQ(grown.code, 0) << grown.err;
  EXPECT_NE(grown.out.find("\"grown\""), std::string::npos) << grown.out;
}

// The second file is one run on two GPUs: one point of a trend, not a change from one GPU to the other.
TEST(History, TheGpusOfOneRunAreOnePointOfATrend) {
  const std::string db = fresh_db("history_trend_gpus");
  ASSERT_EQ(run("history add --db " + db + " mamf_records_h200_b.jsonl", kFx).code, 0);
  const nlohmann::json series = trend_series(db, "mamf.tflops.bf16");
  ASSERT_EQ(series.size(), 1u) << series.dump().substr(0, 300);
  EXPECT_EQ(series[0]["groups"].size(), 1u) << series.dump().substr(0, 300);
  EXPECT_TRUE(series[0]["steps"].empty()) << series.dump().substr(0, 300);
  // Its runs table tells its two GPUs apart.
  const nlohmann::json& runs = series[0]["runs"];
  ASSERT_EQ(runs.size(), 2u) << runs.dump();
  EXPECT_EQ(runs[0]["gpu_index"], 0) << runs.dump();
  EXPECT_EQ(runs[1]["gpu_index"], 1) << runs.dump();
  const Result text = run("history trend mamf.tflops.bf16 --db " + db);
  EXPECT_NE(text.out.find("(GPU 1)"), std::string::npos) << text.out;
}

// The guide's 8-GPU H200 and B200 jobs and our 4-layer H200 step at 8k: three series, never one
// trend, and each run of the guide's logs counts its 8 GPUs.
TEST(History, UnlikeRunsAreNeverOneSeries) {
  const std::string db = fresh_db("history_unlike");
  ASSERT_EQ(run("history add --db " + db + " sweep_h200.log sweep_b200.log ../../data/examples/sweep_h200_llama-3.1-8b-4layers.jsonl", kFx).code, 0);
  const Result text = run("history trend train.tflops --at 8k --db " + db);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("3 series of unlike runs"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("one run in this series"), std::string::npos) << text.out;
  const Result json = run("history trend train.tflops --at 8k --json --db " + db);
  const auto series = nlohmann::json::parse(json.out)["series"];
  ASSERT_EQ(series.size(), 3u);
  std::set<std::string> gpus;
  for (const auto& s : series) {
    EXPECT_EQ(s["runs"].size(), 1u);
    gpus.insert(s["gpu"].get<std::string>() + " / " + s["workload"].get<std::string>());
  }
  EXPECT_EQ(gpus.size(), 3u);
  const Result list = run("history list --db " + db);
  EXPECT_NE(list.out.find("8 GPUs, ZeRO-3"), std::string::npos) << list.out;
}

TEST(History, CompareAndReportReadStoredRuns) {
  const std::string db = fresh_db("history_compare");
  ASSERT_EQ(run("history add --db " + db + torch_logs(), kFx).code, 0);
  const Result from_db = run("compare run:3 run:4 --db " + db);
  const Result from_files = run("compare torch_versions/h200_torch2.11.0_cu130.log torch_versions/h200_torch2.12.0_cu130.log", kFx);
  ASSERT_EQ(from_db.code, 0) << from_db.err;
  ASSERT_EQ(from_files.code, 0) << from_files.err;
  EXPECT_NE(from_db.out.find("1.16"), std::string::npos) << from_db.out;
  const Result ids = run("compare run:3 run:99 --db " + db);
  EXPECT_EQ(ids.code, 2);
  EXPECT_NE(ids.err.find("no run 99"), std::string::npos) << ids.err;
  const std::string dir = ::testing::TempDir() + "/history_report";
  std::filesystem::remove_all(dir);
  const Result r = run("report run:4 -o " + dir + " --db " + db);
  if (report_tools_missing(r)) GTEST_SKIP() << r.err;
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir + "/report.html"));
}

TEST(History, AGzippedRecordFileIsReadLikeAPlainOne) {
  const std::string gz = ::testing::TempDir() + "/mamf_a.jsonl.gz";
  ASSERT_EQ(std::system(fmt::format("gzip -c {}/mamf_records_h200_a.jsonl > {}", kFx, gz).c_str()), 0);
  const std::string db = fresh_db("history_gz");
  const Result r = run("history add --json --db " + db + " " + gz + " " + kFx + "/mamf_records_h200_a.jsonl");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["files"][0]["runs"][0]["status"], "added");
  EXPECT_EQ(j["files"][1]["runs"][0]["status"], "already stored") << "the same run, compressed or not";
}

// Records of an older build name their model but not its widths: still a workload of their own,
// so a 32-layer run without checkpointing is never one series with a 4-layer one.
TEST(History, OlderRecordsAreTheirOwnWorkload) {
  std::string deeper = slurp(kFx + "/records_h200.jsonl");
  for (const auto& [from, to] : {std::pair<std::string, std::string>{R"("layers": 4)", R"("layers": 32)"},
                                 {R"("checkpointing": true)", R"("checkpointing": false)"},
                                 {R"("2026-11-30T08:00:00Z")", R"("2026-12-01T08:00:00Z")"},
                                }) {
    const size_t at = deeper.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    deeper.replace(at, from.size(), to);
  }
  const std::string path = ::testing::TempDir() + "/records_h200_32l.jsonl";
  std::ofstream(path) << measured_again(deeper, 8.0);  // a run of its own, eight times the layers
  const std::string db = fresh_db("history_older_records");
  ASSERT_EQ(run("history add --db " + db + " " + kFx + "/records_h200.jsonl " + path).code, 0);
  const auto runs = nlohmann::json::parse(run("history list --json --db " + db).out)["runs"];
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_NE(runs[0]["workload"], "");
  EXPECT_NE(runs[0]["workload"], runs[1]["workload"]);
}

// A peer's log copied with blank lines around it (an `echo >>`) is the same measurement: stored
// once, not twice in every trend.
TEST(History, APeerLogWithBlankLinesAroundItIsAlreadyStored) {
  const std::string copy = ::testing::TempDir() + "/sweep_h200_blank_edges.log";
  ASSERT_EQ(std::system(fmt::format("(echo; cat {}/sweep_h200.log; echo; echo '  ') > {}", kFx, copy).c_str()), 0);
  const std::string db = fresh_db("history_blank_edges");
  const Result r = run("history add --json --db " + db + " " + kFx + "/sweep_h200.log " + copy);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["files"][0]["runs"][0]["status"], "added");
  EXPECT_EQ(j["files"][1]["runs"][0]["status"], "already stored") << r.out;
}

// Nothing clobbered, nothing silently wrong: a symlink planted where a report's file goes is refused
// and what it points to untouched; an empty page folder is refused; records never go into an
// input; a subnormal price does not make an infinite break-even; a GPU filter's underscore is an
// underscore; an impossible date is refused.
TEST(BadInput, NothingClobberedNothingSilentlyWrong) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "planted_report";
  const fs::path victim = fs::path(::testing::TempDir()) / "planted_victim";
  fs::remove_all(dir), fs::remove(victim);
  fs::create_directories(dir / "charts");
  fs::create_symlink(victim, dir / "report.html");
  const Result planted = run("report " + kFx + "/records_h200.jsonl -o " + dir.string());
  if (!report_tools_missing(planted)) {
    EXPECT_EQ(planted.code, 2) << planted.err;
    EXPECT_NE(planted.err.find("a symlink where a file of the report goes"), std::string::npos) << planted.err;
    EXPECT_FALSE(fs::exists(victim)) << "written through the link";
    EXPECT_FALSE(fs::exists(dir / "report.md")) << "a run that fails leaves nothing written";
    EXPECT_TRUE(fs::is_empty(dir / "charts"));
    const fs::path linked = fs::path(::testing::TempDir()) / "planted_charts";
    fs::remove_all(linked), fs::remove_all(dir);
    fs::create_directories(linked), fs::create_directories(dir);
    fs::create_directory_symlink(linked, dir / "charts");
    expect_error("report " + kFx + "/records_h200.jsonl -o " + dir.string(), 2,
                 "a symlink where the report's charts folder goes: refused, as nothing of a report is written through a "
                 "link (remove it, or write into another folder)");
    EXPECT_TRUE(fs::is_empty(linked));
  }
  expect_error("report " + kFx + "/records_h200.jsonl -o ''", 2, "--page: an empty value for -o,--page,--out (give one, or leave the option out)");
  const fs::path input = fs::path(::testing::TempDir()) / "predict_input.log";
  fs::copy_file(kFx + "/sweep_h200.log", input, fs::copy_options::overwrite_existing);
  const auto size = fs::file_size(input);
  expect_error("predict --to b200 " + input.string() + " --out " + input.string(), 2, "that is an input");
  EXPECT_EQ(fs::file_size(input), size);
  expect_error("decompose " + kFx + "/decompose_h200.txt --out " + kFx + "/decompose_h200.txt", 2, "that is an input");
  // Every file a command reads, not only its positional inputs: a --model config, a --classes file.
  const fs::path config = fs::path(::testing::TempDir()) / "model_as_out.json";
  fs::copy_file(std::string(UB_DATA_DIR) + "/models/llama-3.1-8b.json", config, fs::copy_options::overwrite_existing);
  const auto config_size = fs::file_size(config);
  expect_error("predict " + kFx + "/decompose_h200.txt --to b200 --model " + config.string() + " --out " + config.string(),
               2, "that is an input");
  EXPECT_EQ(fs::file_size(config), config_size);
  const fs::path classes = fs::path(::testing::TempDir()) / "classes_as_out.json";
  std::ofstream(classes) << R"({"rules": []})";
  expect_error("decompose " + kFx + "/trace_kineto_small.json --classes " + classes.string() + " --out " + classes.string(), 2,
               "that is an input");
  // A page that would overwrite an input named like one of its files is refused, the input kept.
  const fs::path page_dir = fs::path(::testing::TempDir()) / "report_over_input";
  fs::remove_all(page_dir);
  fs::create_directories(page_dir);
  fs::copy_file(kFx + "/records_h200.jsonl", page_dir / "report.md");
  const std::string before = slurp((page_dir / "report.md").string());
  expect_error("report " + (page_dir / "report.md").string() + " -o " + page_dir.string(), 2, "the page would overwrite it");
  EXPECT_EQ(slurp((page_dir / "report.md").string()), before);
  expect_error("compare " + kFx + "/sweep_h200.log " + kFx + "/sweep_b200.log --force --price-old 1e-320 --price-new 1", 2,
               "too small to compute with");
  const std::string db = fresh_db("history_like");
  ASSERT_EQ(run("history add --db " + db + " " + kFx + "/sweep_h200.log").code, 0);
  const Result underscore = run("history list --json --gpu _ --db " + db);
  ASSERT_EQ(underscore.code, 0) << underscore.err;
  EXPECT_TRUE(nlohmann::json::parse(underscore.out)["runs"].empty()) << "'_' matched any one character";
  EXPECT_EQ(nlohmann::json::parse(run("history list --json --gpu h200 --since 2026-11 --db " + db).out)["runs"].size(), 1u);
  expect_error("history list --since 2026-13-45 --db " + db, 2, "--since: '2026-13-45' is not a date");
}

TEST(BadInput, History) {
  const std::string db = fresh_db("history_bad");
  expect_error("history list --db " + ::testing::TempDir() + "/nowhere/none.sqlite", 2, "no history database there yet");
  // Another database's address is no SQLite path: no folders named after it under the working folder.
  const std::string cwd = fresh_folder("history_scheme");
  std::filesystem::create_directories(cwd);
  for (const std::string url : {"mysql://bench@dbhost/hist", "sqlite:///tmp/abs.sqlite"}) {
    const Result r = run("history add --db " + url + " " + kFx + "/sweep_h200.log", cwd);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("--db " + url + ": an address of a database upgradebench does not speak"), std::string::npos) << r.err;
    EXPECT_TRUE(std::filesystem::is_empty(cwd)) << url;
  }
  // Without --db, the default database is named as such; a relative XDG_DATA_HOME is ignored, as
  // the XDG specification says.
  const Result by_default = capture(fmt::format("cd {} && env -u UPGRADEBENCH_DB XDG_DATA_HOME=relative/x HOME={} {} history list 2>&1",
                                                cwd, cwd, UB_BINARY));
  EXPECT_EQ(by_default.code, 2) << by_default.out;
  EXPECT_NE(by_default.out.find(fmt::format("the history database {}/.local/share/upgradebench/history.sqlite (where "
                                            "`history` keeps it without --db): no history database there yet", cwd)),
            std::string::npos) << by_default.out;
  expect_error("history add --db " + db + " " + kFx + "/no-such-file.jsonl", 2, "no-such-file.jsonl: no such file");
  expect_error("history add --db " + db + " " + kFx + "/sweep_bad_json.log", 1, "sweep_bad_json.log");
  expect_error("history add --db " + db + " " + kFx + "/README.md", 2, "not a log the history reads");
  ASSERT_EQ(run("history add --db " + db + " " + kFx + "/sweep_h200.log").code, 0);
  expect_error("history trend train.flops --db " + db, 2, "no run with the metric 'train.flops' matches; stored: ");
  expect_error("history trend train.tflops --db " + db, 2, "choose one with --at");
  expect_error("history trend train.tflops --at 5 --db " + db, 2, "--at 5: no figure of train.tflops there");
  expect_error("history trend train.tflops --at 8k --gpu b200 --db " + db, 2, "no run with the metric 'train.tflops' matches");
  expect_error("history show 42 --db " + db, 2, "no run 42");
  expect_error("history show x --db " + db, 2, "'x' is not a run id");
  expect_error("history show -1 --db " + db, 2, "ID: '-1' is not a run id: ids are the numbers from 1 on");
  expect_error("compare run:3-x run:1 --db " + db, 2, "run:3-x: '3-x' is not a run id");
  expect_error("history list --stack torch --db " + db, 2, "--stack: 'torch' is not COMPONENT=VERSION");
  expect_error("history fleet train.tflops --at 8k --tolerance 150 --db " + db, 2, "--tolerance");
  expect_error("history add --db 'postgresql:///x?host=/nonexistent&port=1' " + kFx + "/sweep_h200.log", 2, "cannot connect to PostgreSQL");
  expect_error("history frobnicate", 2, "unknown history command 'frobnicate'");
}

// A mixture of experts' routing beside its figures: our steps' expert_tokens (the least of their
// least, the median of their medians, the most of their most) and the Hugging Face peer's
// expert_load record of a length, in the table, the JSON and the markdown; out of order, refused.
TEST(Compare, TokensPerExpertStandBesideTheFigures) {
  const auto with_tokens = [](const std::string& fixture, const std::string& name, bool as_peer) {
    std::istringstream in(slurp(kFx + "/" + fixture));
    std::string out, line;
    int step = 0;
    while (std::getline(in, line)) {
      nlohmann::json r = nlohmann::json::parse(line);
      if (r["type"] == "context") r["config"]["model"] = "qwen3-30b-a3b";  // 128 experts, top 8: 256 each at 4k
      if (r["type"] == "train_step" && r["seqlen"] == 4096 && !as_peer) {
        r["expert_tokens"] = {{"min", 100 + step}, {"median", 200 + step}, {"max", 2000 + 10 * step}};
        ++step;
      }
      out += r.dump() + "\n";
    }
    if (as_peer) out += R"({"type": "expert_load", "seqlen": 4096, "expert_tokens": {"min": 0, "median": 256, "max": 4000}})" "\n";
    const std::string path = ::testing::TempDir() + "/" + name;
    std::ofstream(path) << out;
    return path;
  };
  const std::string ours = with_tokens("records_h200.jsonl", "experts_ours.jsonl", false);
  const std::string peer = with_tokens("records_h200_rerun.jsonl", "experts_peer.jsonl", true);
  const Result r = run("compare " + peer + " " + ours + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json row = nlohmann::json::parse(r.out)["rows"][0];
  ASSERT_EQ(row["seqlen"], 4096);
  EXPECT_EQ(row["old_expert_tokens"], (nlohmann::json{{"min", 0}, {"median", 256}, {"max", 4000}}));
  EXPECT_EQ(row["new_expert_tokens"]["min"], 101);  // the steady steps: the warm-up step counts in no figure
  EXPECT_EQ(row["new_expert_tokens"]["max"], 2040);
  const Result table = run("compare " + peer + " " + ours);
  EXPECT_NE(table.out.find("Tokens per expert"), std::string::npos) << table.out;
  const Result plain = run("compare " + kFx + "/records_h200.jsonl " + kFx + "/records_h200_rerun.jsonl");
  EXPECT_EQ(plain.out.find("Tokens per expert"), std::string::npos) << "a dense model has no such table";
  // Tokens per expert in a run of a dense model, or that no routing of the model gives (the
  // busiest expert below the 256 tokens every expert takes on average): refused by name.
  const std::string dense = write_file("experts_dense.jsonl", replaced(slurp(ours), "qwen3-30b-a3b", "llama-3.1-8b"));
  expect_error("compare " + kFx + "/records_h200_rerun.jsonl " + dense, 1, ":2: seqlen 4096: tokens per expert, in a run of llama-3.1-8b, a model "
                                                  "without experts");
  for (const std::string& command : {"predict --to b200 ", "decide --from h200 --to b200 --old-run "}) {
    expect_error(command + dense, 1, "tokens per expert, in a run of llama-3.1-8b, a model without experts");
  }
  // A median half the experts could not reach (4 layers of 128 route 32768 tokens each: at most
  // 512 for the median), and layers none of which has experts (mlp_only_layers).
  const std::string crowded = write_file("experts_crowded.jsonl", replaced(slurp(peer), "\"median\": 256", "\"median\": 4000"));
  expect_error("compare " + crowded + " " + ours, 1, "tokens per expert with a median of 4000, where half of "
                                                     "qwen3-30b-a3b's 128 experts in 4 layers would then take more than "
                                                     "the 131072 tokens they route");
  nlohmann::json dense_layers = nlohmann::json::parse(slurp(std::string(UB_DATA_DIR) + "/models/qwen3-30b-a3b.json"));
  dense_layers["mlp_only_layers"] = {0, 1, 2, 3};
  const std::string config = write_file("qwen3_mlp_only.json", dense_layers.dump());
  const std::string mlp_only = write_file("experts_mlp_only.jsonl", replaced(slurp(ours), "\"qwen3-30b-a3b\"", "\"" + config + "\""));
  expect_error("compare " + kFx + "/records_h200_rerun.jsonl " + mlp_only + " --force", 1,
               "tokens per expert, in a run of the first 4 layers of " + config + ", none of which has experts");
  // A median of none beside a busiest of 256: the half of the 512 rows above the median would
  // route at most 65536 of the 131072 tokens.
  const std::string lopsided = write_file("experts_lopsided.jsonl", replaced(slurp(peer), "\"median\": 256, \"max\": 4000",
                                                                           "\"median\": 0, \"max\": 256"));
  expect_error("compare " + lopsided + " " + ours, 1, "tokens per expert of least 0, median 0 and most 256 give the 512 "
                                                      "experts of qwen3-30b-a3b's 4 MoE layers 0 to 65536 tokens, where "
                                                      "they route 131072 (top-8 of 4096): no routing gives them");
  const std::string idle = write_file("experts_idle.jsonl", replaced(slurp(peer), "\"median\": 256, \"max\": 4000", "\"median\": 100, \"max\": 200"));
  expect_error("compare " + idle + " " + ours, 1, "seqlen 4096: tokens per expert from 0 to 200, where qwen3-30b-a3b's "
                                                 "128 experts take 256 on average (top-8 of 4096 tokens)");
  std::string bad = slurp(ours);
  bad.replace(bad.find(R"("min":100)"), 9, R"("min":900)");
  const std::string bad_path = ::testing::TempDir() + "/experts_bad.jsonl";
  std::ofstream(bad_path) << bad;
  expect_error("compare " + peer + " " + bad_path, 1, "\"expert_tokens\" {min 900, median 200, max 2000} are not the least");
  // An expert takes a token once at most, and some expert takes every token.
  for (const auto& [from, to, said] :
       {std::tuple{std::string(R"("max":2000)"), std::string(R"("max":5000)"), std::string("max 5000: more than the step's 4096 tokens")},
        std::tuple{std::string(R"({"max":2000,"median":200,"min":100})"), std::string(R"({"max":0,"median":0,"min":0})"),
                   std::string("are all 0")}}) {
    std::string edited = slurp(ours);
    const size_t at = edited.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    edited.replace(at, from.size(), to);
    const std::string path = ::testing::TempDir() + "/experts_impossible.jsonl";
    std::ofstream(path) << edited;
    expect_error("compare " + peer + " " + path, 1, said);
  }
}

// A trend over time places runs by their dates: a run whose records carry none is left out and
// said, not sorted first as if it were the oldest.
TEST(History, ATrendOverTimeLeavesOutRunsWithoutADate) {
  const std::string db = fresh_db("history_undated");
  std::string undated = slurp(kFx + "/records_h200.jsonl");
  const std::string date = R"("date": "2026-11-30T08:00:00Z", )";
  ASSERT_NE(undated.find(date), std::string::npos);
  undated.erase(undated.find(date), date.size());
  const std::string path = ::testing::TempDir() + "/records_h200_undated.jsonl";
  std::ofstream(path) << measured_again(undated, 1.01);
  ASSERT_EQ(run("history add --db " + db + " " + kFx + "/records_h200.jsonl " + path).code, 0);
  const Result r = run("history trend train.step_ms --at 4096 --db " + db);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("1 run without a date left out"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("#2"), std::string::npos) << r.out;
}
