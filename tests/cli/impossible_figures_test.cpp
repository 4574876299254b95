// A figure no GPU of its model measures (a matmul past the dense peak, a copy out of cache past
// the HBM bandwidth), refused by every command that reads it, not only by `compare`: a records
// file of one H200 measured again five or twenty times faster (measured_again.hpp), so that each figure
// still agrees with its own time and only the catalogue's limits tell it is impossible.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <utility>
#include <vector>

#include "cli_run.hpp"
#include "measured_again.hpp"
#include "temp_files.hpp"

namespace {

using namespace ub_test;

const std::string kFx = UB_FIXTURES_DIR;
const std::string kSuite = kFx + "/suite_h200_2l";

// `part` of the fixture suite (mamf.jsonl, ...) `times` times faster.
std::string faster(const std::string& part, double times = 20) {
  return write_file(fmt::format("{}x_{}", times, part), measured_again(slurp(kSuite + "/" + part), 1.0 / times));
}

// The fixture's bench_decompose.py printout with each text replaced (once); a text not there
// fails the test.
std::string printout_edited(const std::vector<std::pair<std::string, std::string>>& edits) {
  std::string text = slurp(kFx + "/decompose_h200.txt");
  for (const auto& [from, to] : edits) {
    const size_t at = text.find(from);
    if (at == std::string::npos) {
      ADD_FAILURE() << "not in the printout: " << from;
      continue;
    }
    text.replace(at, from.size(), to);
  }
  return text;
}

struct Case {
  const char* part;
  const char* message;
};

const Case kCases[] = {
    {"mamf.jsonl", "TFLOPS is past the h200-sxm's dense bf16 peak (989 TFLOPS): not a measurement"},
    {"mamf-step.jsonl", "TFLOPS is past the h200-sxm's dense bf16 peak (989 TFLOPS): not a measurement"},
    {"attention.jsonl", "TFLOPS is past the h200-sxm's dense bf16 peak (989 TFLOPS): not a measurement"},
    {"bandwidth.jsonl", "GB/s is past the h200-sxm's memory bandwidth (4800 GB/s): not a measurement"},
};

TEST(ImpossibleFigure, PredictRefusesAMeasuredRatePastTheGpusLimits) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.part);
    const std::string fast = faster(c.part);
    expect_error(fmt::format("predict --to b200 {}/decompose_h200.txt --measured {}", kFx, fast), 1, c.message);
  }
}

TEST(ImpossibleFigure, HistoryAddStoresNoFigurePastTheGpusPeak) {
  for (const Case& c : kCases) {
    if (std::string(c.part) == "bandwidth.jsonl") continue;  // the history keeps no bandwidth figures
    SCOPED_TRACE(c.part);
    const std::string fast = faster(c.part);
    expect_error(fmt::format("history add --db {} {}", fresh_db("20x"), fast), 1, c.message);
  }
  // The same records as measured are stored.
  const Result r = run(fmt::format("history add --db {} {}/mamf.jsonl", fresh_db("1x"), kSuite));
  EXPECT_EQ(r.code, 0) << r.err;
}

// A step's decomposition (our records, as a suite writes them) twenty times faster: each bucket
// still its FLOPs over its time and its MFU over the peak, the GEMMs past what the GPU does.
TEST(ImpossibleFigure, ADecompositionPastTheGpusPeakIsRefusedByEveryReader) {
  const std::string fast = faster("decompose-short.jsonl");
  const std::string says = "TFLOPS is past the h200-sxm's dense bf16 peak (989 TFLOPS): not a measurement";
  expect_error(fmt::format("predict {} --to b200", fast), 1, says);
  expect_error(fmt::format("history add --db {} {}", fresh_db("20x_decomposition"), fast), 1, "past the h200-sxm's dense bf16 peak");
  expect_error(fmt::format("compare {}/decompose-short.jsonl {}", kSuite, fast), 1, says);
}

// bench_decompose.py's printout of the guide's 8k step relabelled seq=2048: the step's FLOPs are
// not the model's at that length, and no reader takes it as a 2k step.
TEST(ImpossibleFigure, APrintoutWhoseLengthIsNotItsWorkIsRefusedByEveryReader) {
  std::string text = slurp(kFx + "/guide/decompose_h200.txt");
  const size_t at = text.find(" seq=8192 ");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 10, " seq=2048 ");
  const std::string relabelled = write_file("decompose_h200_seq2048.txt", text);
  const std::string says = "TFLOP is not llama-3.1-8b's work at 2048 tokens";
  expect_error("decompose " + relabelled, 1, says);
  expect_error(fmt::format("history add --db {} {}", fresh_db("seq2048"), relabelled), 1, says);
  expect_error(fmt::format("predict {} --to b200", relabelled), 1, says);
}

// The same printout with a tenth of attention's FLOPs moved into "everything else" (TOTAL as it
// was, the shares recomputed): attention would look ten times as fast.
TEST(ImpossibleFigure, APrintoutWhoseWorkIsSplitOtherwiseIsRefused) {
  std::vector<std::pair<std::string, std::string>> edits = {
      {"52.78 TFLOP  107.4 ms  491.4 TFLOPS  MFU 49.7%", "5.28 TFLOP  107.4 ms  49.2 TFLOPS  MFU 5.0%"},
      {"368.87 TFLOP  802.6 ms  459.6 TFLOPS  MFU 46.5%", "416.37 TFLOP  802.6 ms  518.8 TFLOPS  MFU 52.5%"},
      {"attention FLOP share=12.5%", "attention FLOP share=1.3%"}};
  const std::string moved = write_file("decompose_h200_attention_moved.txt", printout_edited(edits));
  const std::string says = "bucket \"attention(FA)\" holds 5.28 TFLOP, and llama-3.1-8b's attention at 8192 tokens is 52.78 TFLOP";
  expect_error("decompose " + moved, 1, says);
  expect_error(fmt::format("history add --db {} {}", fresh_db("attention_moved"), moved), 1, says);
  // Without its seq= the printout is held to the length its whole step's work is.
  edits.emplace_back(" seq=8192", "");
  const std::string unsaid = write_file("decompose_h200_attention_moved_no_seq.txt", printout_edited(edits));
  for (const char* command : {"decompose {}", "predict {} --to b200"}) {
    expect_error(fmt::format(fmt::runtime(command), unsaid), 1, "bucket \"attention(FA)\" holds 5.28 TFLOP, and llama-3.1-8b's attention at");
  }
}

// A whole step faster than the GPU's matmul ceiling (the guide's H200 step in 48% of its time:
// 880 TFLOPS, under the 989 peak but past the published MAMF of 794.5) is no measurement.
TEST(ImpossibleFigure, AStepPastTheGpusMatmulCeilingIsRefused) {
  std::vector<std::pair<std::string, std::string>> edits = {
      {"step=910.0 ms", "step=478.9 ms"},
      {"107.4 ms  491.4 TFLOPS  MFU 49.7%", "56.5 ms  933.7 TFLOPS  MFU 94.4%"},
      {"802.6 ms  459.6 TFLOPS  MFU 46.5%", "422.4 ms  873.2 TFLOPS  MFU 88.3%"}};
  std::vector<std::pair<std::string, std::string>> with_total = edits;
  with_total.emplace_back("910.0 ms  463.4 TFLOPS  MFU 46.9%", "478.9 ms  880.4 TFLOPS  MFU 89.0%");
  const std::string fast = write_file("decompose_h200_fast.txt", printout_edited(with_total));
  const std::string says = "TFLOPS is past the h200-sxm's matmul ceiling (MAMF 794.5 TFLOPS, published)";
  expect_error("decompose " + fast, 1, says);
  expect_error(fmt::format("predict {} --to b200", fast), 1, says);
  // Without its TOTAL line: the whole step is its buckets' work over their time.
  edits.emplace_back("TOTAL              421.65 TFLOP  910.0 ms  463.4 TFLOPS  MFU 46.9%\n", "");
  const std::string cut = write_file("decompose_h200_fast_no_total.txt", printout_edited(edits));
  expect_error("decompose " + cut, 1, "the whole step at 880.5 TFLOPS is past the h200-sxm's matmul ceiling");
}

// A GPU name the catalog does not know bounds no figure: `history add` and `compare` say so, naming
// the file, where the figures they read were held to nothing.
TEST(ImpossibleFigure, AGpuTheCatalogDoesNotKnowIsSaidByHistoryAddAndCompare) {
  std::string text = slurp(kFx + "/guide/mamf_bf16_h200.txt");
  for (size_t at; (at = text.find("NVIDIA H200")) != std::string::npos;) text.replace(at, 11, "NVIDIA H300");
  const std::string unknown = write_file("mamf_unknown_gpu.txt", text);
  const std::string says = unknown + ": the catalog does not know the \"NVIDIA H300\": its figures are held to no peak";
  const Result added = run(fmt::format("history add --db {} {}", fresh_db("unknown_gpu"), unknown));
  EXPECT_EQ(added.code, 0) << added.err;
  EXPECT_NE(added.err.find(says), std::string::npos) << added.err;
  const Result compared = run(fmt::format("compare {}/guide/mamf_bf16_h200.txt {}", kFx, unknown));
  EXPECT_EQ(compared.code, 0) << compared.err;
  EXPECT_NE(compared.err.find(says), std::string::npos) << compared.err;
  const Result known = run(fmt::format("history add --db {} {}/guide/mamf_bf16_h200.txt", fresh_db("known_gpu"), kFx));
  EXPECT_EQ(known.err.find("the catalog does not know"), std::string::npos) << known.err;
  // decompose and report too; a name with a look-alike letter (a Cyrillic capital en) shows its bytes.
  std::string printout = slurp(kFx + "/decompose_h200.txt");
  printout.replace(printout.find("NVIDIA H200"), 11, "NVIDIA \xd0\x9d" "200");
  const std::string look_alike = write_file("decompose_look_alike.txt", printout);
  const Result decomposed = run("decompose " + look_alike);
  EXPECT_EQ(decomposed.code, 0) << decomposed.err;
  EXPECT_NE(decomposed.err.find(look_alike + ": the catalog does not know the \"NVIDIA \\xd0\\x9d200\": its figures are "
                                "held to no peak"), std::string::npos) << decomposed.err;
  const Result reported = run(fmt::format("report {} -o {}", look_alike, fresh_folder("look_alike_report")));
  EXPECT_EQ(reported.code, 0) << reported.err;
  EXPECT_NE(reported.err.find("the catalog does not know the \"NVIDIA \\xd0\\x9d200\""), std::string::npos) << reported.err;
  // A name that is no UTF-8 at all (a byte of a two-byte letter alone) still makes a page.
  printout.replace(printout.find("NVIDIA \xd0\x9d" "200"), 13, "NVIDIA \xd0 200");
  const Result broken = run(fmt::format("report {} -o {}", write_file("decompose_not_utf8.txt", printout),
                                        fresh_folder("not_utf8_report")));
  EXPECT_EQ(broken.code, 0) << broken.err;
}

// Matmuls in a dtype the GPU does not execute (the catalog says unsupported) timed nothing it can
// run: an H200's bf16 records relabelled mxfp8, at their own speed.
TEST(ImpossibleFigure, MatmulsInADtypeTheGpuDoesNotExecuteAreRefused) {
  std::string text = slurp(kSuite + "/mamf.jsonl");
  for (size_t at; (at = text.find(R"("dtype":"bf16")")) != std::string::npos;) text.replace(at, 14, R"("dtype":"mxfp8")");
  const std::string mxfp8 = write_file("mamf_mxfp8.jsonl", text);
  const std::string says = "matmuls in mxfp8 on the h200-sxm, which does not execute mxfp8 (the catalog): not a measurement";
  expect_error(fmt::format("history add --db {} {}", fresh_db("mxfp8"), mxfp8), 1, says);
}

// A figure edited into the history past the GPU's peak (`history add` stores none) is not shown
// as one by show, trend or fleet.
TEST(ImpossibleFigure, AStoredFigurePastTheGpusPeakIsNotShown) {
  const std::string db = fresh_db("edited_past_peak");
  ASSERT_EQ(run(fmt::format("history add --db {} {}/mamf.jsonl", db, kSuite)).code, 0);
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(h, "UPDATE run_metrics SET median = 5000, low = 4990, high = 5010", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(h);
  const std::string says = "5000.0 TFLOPS, past the h200-sxm's dense bf16 peak (989 TFLOPS): no figure `history add` stores";
  expect_error(fmt::format("history show 1 --db {}", db), 1, says);
  expect_error(fmt::format("history trend mamf.tflops.bf16 --db {}", db), 1, says);
  expect_error(fmt::format("history fleet mamf.tflops.bf16 --db {}", db), 1, says);
  // A figure renamed to a dtype the GPU does not execute, alike.
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(h, "UPDATE run_metrics SET median = 500, low = 490, high = 510, metric = 'mamf.tflops.nvfp4'",
                         nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(h);
  expect_error(fmt::format("history trend mamf.tflops.nvfp4 --db {}", db), 1, "the h200-sxm does not execute nvfp4 (the catalog)");
  // The GPU renamed to one the catalog does not know (its figures then bounded by nothing): the
  // run's rows are not as stored, which every reader says.
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(h, "UPDATE run_metrics SET metric = 'mamf.tflops.bf16', median = 700, low = 690, high = 710; "
                            "UPDATE run_gpus SET name = 'NVIDIA H300'", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(h);
  for (const char* command : {"show 1", "list", "trend mamf.tflops.bf16", "fleet mamf.tflops.bf16"}) {
    expect_error(fmt::format("history {} --db {}", command, db), 1, "run 1's rows are not as `history add` stored them");
  }
  // A run measured on a GPU the catalog does not know is shown, and said to be held to no peak.
  std::string log = slurp(kFx + "/guide/mamf_bf16_h200.txt");
  for (size_t at; (at = log.find("NVIDIA H200")) != std::string::npos;) log.replace(at, 11, "NVIDIA H300");
  const std::string unknown = fresh_db("unknown_gpu_shown");
  ASSERT_EQ(run(fmt::format("history add --db {} {}", unknown, write_file("mamf_h300.txt", log))).code, 0);
  for (const char* command : {"show 1", "trend mamf.tflops.bf16", "fleet mamf.tflops.bf16"}) {
    const Result r = run(fmt::format("history {} --db {}", command, unknown));
    EXPECT_EQ(r.code, 0) << command << ": " << r.err;
    EXPECT_NE(r.err.find("run 1: the catalog does not know the \"NVIDIA H300\""), std::string::npos) << command << ": " << r.err;
  }
}

// mamf-finder.py's torch dtype names reach the same checks: float8_e5m2 is held to the fp8 peak,
// fp4 to whether the GPU executes it, and a dtype no catalog knows is refused, not held to nothing.
TEST(ImpossibleFigure, MamfFinderDtypesAreHeldToTheirPeaks) {
  const std::string log = slurp(kFx + "/guide/mamf_bf16_h200.txt");
  const auto as = [&](const std::string& dtype, const std::string& scale_from, const std::string& scale_to) {
    std::string text = replaced(log, "torch.bfloat16", "torch." + dtype);
    for (size_t at = text.find(scale_from); at != std::string::npos; at = text.find(scale_from, at + scale_to.size())) {
      text.replace(at, scale_from.size(), scale_to);
    }
    return write_file("mamf_finder_" + dtype + ".txt", text);
  };
  const std::string db = fresh_db("mamf_finder_dtypes");
  expect_error("history add --db " + db + " " + as("float8_e5m2", "794.5", "2383.5"), 1,
               "TFLOPS is past the h200-sxm's dense fp8 peak (1979 TFLOPS)");
  expect_error("history add --db " + db + " " + as("float4_e2m1fn_x2", "794.5", "794.5"), 1,
               "matmuls in fp4 on the h200-sxm, which does not execute fp4");
  expect_error("history add --db " + db + " " + as("bfloat16_x", "794.5", "794.5"), 1,
               "dtype \"torch.bfloat16_x\" is none upgradebench knows");
}

// `sweep --resume` shows what the file holds as measured: held to what `report` holds it to.
TEST(ImpossibleFigure, SweepResumeShowsNoStepPastTheGpusPeakAsMeasured) {
  const std::string fast = faster("sweep.jsonl", 5);  // its MFU under the readers' bound of 1000%
  expect_error(fmt::format("sweep --resume --out {} --seqlens 2k,4k --layers 2", fast), 1, "past the h200-sxm's matmul ceiling");
  const std::string as_measured = write_file("sweep_as_measured.jsonl", slurp(kSuite + "/sweep.jsonl"));
  const Result r = run(fmt::format("sweep --resume --out {} --seqlens 2k,4k --layers 2", as_measured));
  EXPECT_EQ(r.code, 0) << r.err;
}

}  // namespace
