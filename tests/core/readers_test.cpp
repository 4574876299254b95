// The training-log readers on real-shaped files: benchmark.py's sweep log and our records.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "analysis/log_comparisons.hpp"
#include "base/error.hpp"
#include "base/json_text.hpp"
#include "base/key_values.hpp"
#include "facts/catalog.hpp"
#include "records/provenance.hpp"
#include "records/readers/attention_log.hpp"
#include "records/readers/decomposition_log.hpp"
#include "records/readers/log_kind.hpp"
#include "records/readers/mamf_log.hpp"
#include "records/readers/read_run.hpp"
#include "records/readers/sweep_log.hpp"

namespace ub {
namespace {

const std::string kFixtures = UB_FIXTURES_DIR;

std::string error_of(const std::string& file) {
  try {
    read_run_log(kFixtures + "/" + file);
  } catch (const WorkError& e) {
    return e.what();
  }
  return "";
}

TEST(KeyValues, ValuesMayContainSpaces) {
  const auto kv = parse_key_values(" gpu=NVIDIA H200 attn_backend=flash_attention_3 zero=3 batch_size=1", "t");
  EXPECT_EQ(kv.at("gpu"), "NVIDIA H200");
  EXPECT_EQ(kv.at("attn_backend"), "flash_attention_3");
  EXPECT_EQ(kv.at("zero"), "3");
  EXPECT_EQ(kv.at("batch_size"), "1");
  const auto env = parse_key_values("python=3.12.12 torch=2.13.0 flash-attn-3=3.0.0", "t");
  EXPECT_EQ(env.at("flash-attn-3"), "3.0.0");
}

TEST(SweepLog, ReadsTheH200Log) {
  const RunLog r = read_run_log(kFixtures + "/sweep_h200.log");
  EXPECT_EQ(r.format, "benchmark.py");
  EXPECT_EQ(r.gpu, "NVIDIA H200");
  EXPECT_EQ(r.software.at("torch"), "2.13.0");
  EXPECT_EQ(r.config.at("attn_backend"), "flash_attention_3");
  EXPECT_EQ(r.config.at("world_size"), "8");
  EXPECT_EQ(r.model, "llama-3.1-8b");
  EXPECT_EQ(r.batch, 1);
  ASSERT_EQ(r.points.size(), 4u);
  EXPECT_EQ(r.points[0].seqlen, 8192);
  EXPECT_EQ(r.points[0].steps.count(), 8u);
  EXPECT_EQ(r.points[0].steps.steady_count(), 6u);  // the first two are warm-up
  EXPECT_DOUBLE_EQ(r.points[0].steps.steady()[0].exec_time_ms, 2988.0);  // a JSON string read as a number
  EXPECT_EQ(r.points[3].seqlen, 262144);
  EXPECT_EQ(r.points[3].status, PointStatus::oom);
  EXPECT_NE(r.points[3].oom_message.find("out of memory"), std::string::npos);
  const PointStats st = point_stats(r, r.points[0]);
  EXPECT_EQ(st.steady_steps, 6u);
  EXPECT_DOUBLE_EQ(st.time_ms.median, 2997.0);  // steady: 2988 2988 2994 3000 3006 3012
  EXPECT_DOUBLE_EQ(*st.peak_mem_gib, 16.3);
  bool counted_other_lines = false;
  for (const auto& w : r.warnings) counted_other_lines |= w.find("other log lines ignored") != std::string::npos;
  EXPECT_TRUE(counted_other_lines);
}

TEST(SweepLog, PlainNumbersAndATruncatedLastLine) {
  const RunLog r = read_run_log(kFixtures + "/sweep_b200.log");
  EXPECT_EQ(r.gpu, "NVIDIA B200");
  ASSERT_EQ(r.points.size(), 4u);
  EXPECT_EQ(r.points[3].status, PointStatus::ok);
  EXPECT_EQ(r.points[3].steps.count(), 8u);  // the cut ninth step is not counted
  bool truncated = false;
  for (const auto& w : r.warnings) truncated |= w.find("truncated last line") != std::string::npos;
  EXPECT_TRUE(truncated);
}

TEST(SweepLog, ErrorsNameFileLineAndProblem) {
  EXPECT_NE(error_of("sweep_bad_json.log").find("sweep_bad_json.log:8: a step object that is not valid JSON"),
            std::string::npos) << error_of("sweep_bad_json.log");
  EXPECT_NE(error_of("sweep_two_gpus.log").find("mismatched GPUs in one file"), std::string::npos);
  EXPECT_NE(error_of("sweep_no_steady.log").find("seq_len=8192 has no steady steps"), std::string::npos);
  EXPECT_THROW(read_run_log(kFixtures + "/does-not-exist.log"), UsageError);
}

TEST(SweepLog, StringThatIsNotANumberIsAnError) {
  const std::string path = ::testing::TempDir() + "/bad_number.log";
  std::ofstream(path) << "===== seq_len=8 =====\n# gpu=NVIDIA H200\n"
                         "{\"step\": 0, \"warmup\": false, \"exec_time_ms\": \"fast\"}\n";
  try {
    read_run_log(path);
    FAIL();
  } catch (const WorkError& e) {
    EXPECT_NE(std::string(e.what()).find(":3: \"exec_time_ms\" is not a number"), std::string::npos) << e.what();
  }
}

TEST(SweepLog, ModelSizes) {
  EXPECT_EQ(guide_model_preset("8b"), "llama-3.1-8b");
  EXPECT_EQ(guide_model_preset("70B"), "llama-3.1-70b");
  EXPECT_FALSE(guide_model_preset("13b").has_value());
}

TEST(Records, ReadsContextStepsAndOom) {
  const RunLog r = read_run_log(kFixtures + "/records_h200.jsonl");
  EXPECT_EQ(r.format, "upgradebench");
  EXPECT_EQ(r.gpu, "NVIDIA H200");
  EXPECT_EQ(r.model, "llama-3.1-8b");
  EXPECT_EQ(r.layers, 4);
  EXPECT_EQ(r.software.at("cudnn"), "9.14.0");
  EXPECT_FALSE(r.software.contains("nccl"));  // absent libraries are not versions
  ASSERT_EQ(r.points.size(), 4u);
  EXPECT_EQ(r.points[0].steps.steady_count(), 4u);
  EXPECT_EQ(r.points[3].status, PointStatus::oom);
  EXPECT_EQ(r.points[3].oom_message, "activations of layer 3 (12.0 GiB)");
}

TEST(Records, NotATrainingLogIsAnError) {
  const std::string path = ::testing::TempDir() + "/not_a_log.txt";
  std::ofstream(path) << "hello\n";
  EXPECT_THROW(read_run_log(path), UsageError);  // a file of another kind: exit 2, as compare says of one
  std::ofstream(path) << "{\"type\": \"mamf\"}\n";
  EXPECT_THROW(read_run_log(path), UsageError);
}

LineSource fixture(const std::string& name) { return LineSource::file(kFixtures + "/" + name); }

TEST(MeasurementLogs, KindsAreRecognisedByContent) {
  EXPECT_EQ(detect_log_kind(fixture("sweep_h200.log")), LogKind::training);
  EXPECT_EQ(detect_log_kind(fixture("records_h200.jsonl")), LogKind::training);
  EXPECT_EQ(detect_log_kind(fixture("attention_h200.log")), LogKind::attention);
  EXPECT_EQ(detect_log_kind(fixture("decompose_h200.txt")), LogKind::decomposition);
  // `decompose` of our engine records its timed steps too; the decomposition is what it is about.
  EXPECT_EQ(detect_log_kind(fixture("engine_llama_2l_4096.jsonl")), LogKind::decomposition);
  EXPECT_EQ(detect_log_kind(fixture("mamf_finder_h200.txt")), LogKind::mamf);
  EXPECT_EQ(detect_log_kind(fixture("mamf_records_h200_a.jsonl")), LogKind::mamf);
  EXPECT_EQ(detect_log_kind(fixture("README.md")), LogKind::unknown);
}

TEST(MeasurementLogs, Attention) {
  const AttentionLog a = read_attention_log(fixture("attention_h200.log"));
  EXPECT_EQ(a.gpu, "NVIDIA H200");
  EXPECT_EQ(a.header.at("backend"), "fa3");
  ASSERT_EQ(a.points.size(), 3u);
  EXPECT_EQ(a.points[1].seqlen, 8192);
  EXPECT_DOUBLE_EQ(a.points[1].fwd_tflops, 596.3);
  EXPECT_DOUBLE_EQ(*a.points[1].fwd_bwd_tflops, 515.1);
  EXPECT_THROW(read_attention_log(LineSource::text("{\"seqlen\": 8, \"fwd_ms\": \"x\"}\n", "t")), WorkError);
}

TEST(MeasurementLogs, Decomposition) {
  const DecompositionLog d = read_decomposition_log(fixture("decompose_b200.txt"));
  EXPECT_EQ(d.gpu, "NVIDIA B200");
  EXPECT_EQ(d.summary.at("step"), "538.5");
  ASSERT_EQ(d.buckets.size(), 3u);
  EXPECT_EQ(d.buckets[1].name, "everything else");
  EXPECT_DOUBLE_EQ(d.buckets[1].ms, 481.1);
  EXPECT_DOUBLE_EQ(*d.buckets[2].mfu_percent, 34.8);
  EXPECT_THROW(read_decomposition_log(LineSource::text("# gpu=A\nnothing here\n", "t")), WorkError);
}

TEST(MeasurementLogs, HostileLinesAreRefusedOrSkippedNeverACrash) {
  // Tens of kB of digits where a format is matched (std::regex recursed on them): a shape of an
  // impossible size is refused naming its line; as a number of TFLOPS it is not finite.
  const std::string digits(80000, '7');
  const std::string shape = "     4 |  799.5(mean)  800.2(median)  805.0(max) @ 2048x2048x13312\n";
  const auto mamf_error = [&](const std::string& line) {
    try {
      read_mamf_log(LineSource::text(shape + line, "m"));
    } catch (const WorkError& e) {
      return std::string(e.what());
    }
    return std::string("read");
  };
  EXPECT_EQ(mamf_error("     3 | " + digits + "(mean) 1(median) 1(max) @ 1x1x1\n"),
            "m:2: mean of 80000 characters must be a finite non-negative number");
  EXPECT_EQ(mamf_error("     3 | 1(mean) 1(median) 1(max) @ " + digits + "x1x1\n"), "m:2: a size of 80000 digits is too large");
  EXPECT_EQ(read_mamf_log(LineSource::text(shape + digits + "\n" + std::string(200000, '|') + "\n", "m")).outcome.shapes.size(),
            1u);  // lines that are no format at all are other lines
  EXPECT_THROW(read_decomposition_log(LineSource::text("# gpu=A\nattention " + digits + " TFLOP 1 ms 1 TFLOPS\n", "d")),
               WorkError);
  // A line past the bound is refused, naming it, from memory and from a file.
  try {
    LineSource::text("a\n" + std::string(kMaxLineBytes + 1, 'x'), "big");
    FAIL() << "an over-long line was accepted";
  } catch (const WorkError& e) {
    EXPECT_NE(std::string(e.what()).find("big:2: a line longer than 1 MiB"), std::string::npos) << e.what();
  }
  try {
    (void)LineSource::file("/dev/zero").first_nonblank();  // never ends, has no newline: the pass stops at the bound
    FAIL() << "/dev/zero was read";
  } catch (const UsageError& e) {  // its first line: a file of another kind
    EXPECT_NE(std::string(e.what()).find("/dev/zero:1: a line longer than 1 MiB"), std::string::npos) << e.what();
  }
  // A config.json nested a million deep is refused before the parser sees it.
  EXPECT_FALSE(json_depth_within(std::string(1000000, '[')));
  EXPECT_TRUE(json_depth_within(R"({"a": [[1, "[[[[["], {"b": {}}]})", 4));
  EXPECT_FALSE(json_depth_within(R"({"a": [[1], {"b": {}}]})", 3));
}

TEST(MeasurementLogs, BucketLinesAreMatchedFromTheirEnd) {
  const DecompositionLog d = read_decomposition_log(LineSource::text(
      "# gpu=A\n"
      "layer 3 attention 1.0 TFLOP   2.5 ms 400.0 TFLOPS MFU 40.4%\n"
      "2 TFLOP 1.0 TFLOP 1.0 ms 1000 TFLOPS\n"              // the name is what comes before the last six words
      "rest\t0.5 TFLOP 3 ms 166.7 TFLOPS  \n"
      "no name 1 TFLOP 1 ms\n"                              // too few words
      "mfu 1 TFLOP 1 ms 1 TFLOPS MFU 4\n"                   // MFU without its %
      "1 TFLOP 1 ms 1 TFLOPS\n"                             // no name
      + std::string(100000, ' ') + "wide 1 TFLOP 1 ms 1000 TFLOPS\n",
      "d"));
  ASSERT_EQ(d.buckets.size(), 4u);
  EXPECT_EQ(d.buckets[0].name, "layer 3 attention");
  EXPECT_DOUBLE_EQ(*d.buckets[0].tflop, 1.0);
  EXPECT_DOUBLE_EQ(d.buckets[0].ms, 2.5);
  EXPECT_DOUBLE_EQ(*d.buckets[0].mfu_percent, 40.4);
  EXPECT_EQ(d.buckets[1].name, "2 TFLOP");
  EXPECT_DOUBLE_EQ(*d.buckets[1].tflops, 1000);
  EXPECT_EQ(d.buckets[2].name, "rest");
  EXPECT_FALSE(d.buckets[2].mfu_percent);
  EXPECT_EQ(d.buckets[3].name, "wide");
  EXPECT_EQ(d.warnings, std::vector<std::string>{"3 other lines ignored"});
}

TEST(MeasurementLogs, MamfFinderLinesNearTheFormatAreOtherLines) {
  const MamfLog m = read_mamf_log(LineSource::text(
      "- _CudaDeviceProperties(name='', name='NVIDIA H200', uuid=GPU-zz, uuid=95b16759-3c59-5d0f-3356-d1b94b44b94b)\n"
      "** Critical software versions:\n"
      "- torch=2.9.1\n"
      "- cuda = 13.0\n"                                     // not name=version
      "   1 | 700(mean) 701(median) 702(max) @ 1x2x3 | sec\n"
      "   2 | 700(mean)701(median) 702(max) @ 1x2x3\n"       // no space between the figures
      "   3 | 700(mean) 701(median) 702(max) @ 1x2\n"        // two sizes
      "median: 701 TFLOPS @ 1x2x3\n"
      "max:701 TFLOPS @ 1x2x3\n"                            // no space after the colon
      "geometric mean: 650.5 TFLOPS\n"
      "Across 3 shapes in range: m=[1, 2, 1] | n=[2] in this run:\n",
      "m"));
  EXPECT_EQ(m.gpu, "NVIDIA H200");
  EXPECT_EQ(m.gpu_uuid, "GPU-95b16759-3c59-5d0f-3356-d1b94b44b94b");
  EXPECT_EQ(m.stack, (std::vector<std::pair<std::string, std::string>>{{"torch", "2.9.1"}}));
  ASSERT_EQ(m.outcome.shapes.size(), 1u);
  EXPECT_EQ(m.outcome.shapes[0].shape(), "1x2x3");
  EXPECT_DOUBLE_EQ(m.outcome.shapes[0].max_tflops, 702);
  ASSERT_TRUE(m.footer_median);
  EXPECT_DOUBLE_EQ(m.footer_median->median_tflops, 701);
  EXPECT_FALSE(m.footer_max);
  EXPECT_DOUBLE_EQ(*m.geometric_mean, 650.5);
  EXPECT_EQ(m.ranges, "m=[1, 2, 1] | n=[2]");
}

// A provenance line in any case and spacing says the file is not measurements; one without words
// says so too; a context record's provenance that is no text is refused, not taken as measured.
TEST(MeasurementLogs, ProvenanceInAnySpellingIsRead) {
  for (const char* line : {"# provenance: made up", "#provenance: made up", "# Provenance : made up", "  #PROVENANCE:made up"}) {
    EXPECT_EQ(provenance_line_note(line).value_or("(none)"), "made up") << line;
  }
  EXPECT_EQ(provenance_line_note("# provenance:").value_or("(none)"), "says it is not measurements, in no more words");
  EXPECT_FALSE(provenance_line_note("# provenances: x"));
  EXPECT_FALSE(provenance_line_note("# gpu=NVIDIA H200 provenance: x"));
  EXPECT_EQ(provenance_field_note(nlohmann::json("  "), "f:1").value_or("(none)"), "says it is not measurements, in no more words");
  EXPECT_FALSE(provenance_field_note(nlohmann::json(), "f:1"));
  EXPECT_THROW(provenance_field_note(nlohmann::json(true), "f:1"), WorkError);
  EXPECT_THROW(provenance_field_note(nlohmann::json::array({"x"}), "f:1"), WorkError);
}

// A best shape the footer names whose line was left out as damaged: the ceiling is not known,
// refused; a damaged line that was not the best leaves the best the footer's.
TEST(MeasurementLogs, AFooterWhoseBestLineWasDamagedIsRefused) {
  const std::string lines = "   1 | 700(mean) 701(median) 702(max) @ 1x2x3\n"
                            "   2 | 900(mean) 1e9(median) 902(max) @ 2x2x3\n"  // past any GPU: left out
                            "   3 | 650(mean) 651(median) 652(max) @ 3x2x3\n";
  const MamfLog kept = read_mamf_log(LineSource::text(lines + "median: 701 TFLOPS @ 1x2x3\n", "m"));
  ASSERT_TRUE(kept.footer_median);
  EXPECT_EQ(kept.outcome.shapes.size(), 2u);
  try {
    (void)read_mamf_log(LineSource::text(lines + "median: 901 TFLOPS @ 2x2x3\n", "m"));
    ADD_FAILURE() << "a footer whose best line was left out was read";
  } catch (const WorkError& e) {
    EXPECT_NE(std::string(e.what()).find("1 shape line left out as damaged: the best may be among them"), std::string::npos)
        << e.what();
  }
}

// A footer figure that is no figure (nan, negative, an exponent) is left out and said, naming the
// line: the comparison's figures come from the shape lines either way.
TEST(MeasurementLogs, ADamagedMamfFinderFooterLineIsSaid) {
  for (const std::string footer : {"mean: nan TFLOPS @ 1x2x3", "mean: -701 TFLOPS @ 1x2x3", "geometric mean: 1e308 TFLOPS"}) {
    const MamfLog m = read_mamf_log(LineSource::text("   1 | 700(mean) 701(median) 702(max) @ 1x2x3\n" + footer + "\n", "m"));
    ASSERT_EQ(m.outcome.shapes.size(), 1u);
    bool said = false;
    for (const std::string& w : m.warnings) said = said || w.find("m:2: a footer line left out, damaged (" + footer) == 0;
    EXPECT_TRUE(said) << footer << ": " << testing::PrintToString(m.warnings);
  }
}

TEST(MeasurementLogs, MamfFinderOutputAndOurRecords) {
  const MamfLog f = read_mamf_log(fixture("mamf_finder_h200.txt"));
  EXPECT_EQ(f.format, "mamf-finder");
  EXPECT_EQ(f.gpu, "NVIDIA H200");
  EXPECT_EQ(f.outcome.shapes.size(), 4u);
  EXPECT_DOUBLE_EQ(f.footer_median->median_tflops, 772.8);
  EXPECT_EQ(f.outcome.best(MamfOutcome::By::max)->shape(), "2048x4096x13312");
  const MamfLog r = read_mamf_log(fixture("mamf_records_h200_a.jsonl"));
  EXPECT_EQ(r.format, "upgradebench");
  EXPECT_EQ(r.dtype, "bf16");
  EXPECT_EQ(r.outcome.shapes.size(), 6u);
  EXPECT_NEAR(r.outcome.best(MamfOutcome::By::median)->median_tflops, 824.9, 0.05);
}

// Values no measurement can have are refused with the file, the line and the field; a second
// context record for another workload is an error, not "the last one wins".
TEST(MeasurementLogs, ImpossibleValuesAndTwoWorkloadsInOneFile) {
  std::string text;
  for (const std::string& l : fixture("records_h200.jsonl").read_all()) text += l + "\n";
  const auto with = [&](const std::string& extra) {
    // The first steady step of the fixture gets the field last (a repeated key: the last one counts).
    std::string t = text;
    const size_t at = t.find('}', t.find("\"warmup\": false"));
    EXPECT_NE(at, std::string::npos);
    return t.insert(at, ", " + extra);
  };
  for (const auto& [extra, field] : std::vector<std::pair<std::string, std::string>>{
           {R"("tflops": -5)", "\"tflops\""}, {R"("peak_mem_gib": -1)", "\"peak_mem_gib\""},
           {R"("batch": 0)", "\"batch\""}, {R"("attention_share": 1.5)", "\"attention_share\""}}) {
    try {
      read_run_log(LineSource::text(with(extra), "bad.jsonl"));
      ADD_FAILURE() << extra << " was read";
    } catch (const WorkError& e) {
      EXPECT_NE(std::string(e.what()).find("bad.jsonl:"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  }
  std::string second = fixture("records_h200.jsonl").read_all().front();
  second.replace(second.find("llama-3.1-8b"), 12, "llama-3.1-70b");
  try {
    read_run_log(LineSource::text(text + second + "\n", "two.jsonl"));
    ADD_FAILURE() << "two workloads were read as one";
  } catch (const WorkError& e) {
    EXPECT_NE(std::string(e.what()).find("a second context record for another workload"), std::string::npos) << e.what();
  }
  // The same workload's context again (a sweep's next point) is fine.
  EXPECT_NO_THROW(read_run_log(LineSource::text(text + fixture("records_h200.jsonl").read_all().front() + "\n", "again.jsonl")));
}

// A real mamf-finder.py output (its documented quick run on an H200): the header as torch writes
// it (`** Dtype: torch.bfloat16`, the device's properties, the software versions), 79 shapes, the
// footer, the ranges and the two means.
TEST(MeasurementLogs, MamfFinderRealHeader) {
  const MamfLog f = read_mamf_log(fixture("mamf_finder_real_h200.txt"));
  EXPECT_EQ(f.gpu, "NVIDIA H200");
  EXPECT_EQ(f.dtype, "bf16");
  EXPECT_EQ(f.gpu_uuid, "GPU-95b16759-3c59-5d0f-3356-d1b94b44b94b");
  EXPECT_EQ(f.stack, (std::vector<std::pair<std::string, std::string>>{{"torch", "2.11.0+cu130"}, {"cuda", "13.0"}}));
  EXPECT_EQ(f.ranges, "m=[0, 20480, 256] | n=[4096] | k=[4096]");
  EXPECT_EQ(f.outcome.shapes.size(), 79u);
  EXPECT_DOUBLE_EQ(*f.arithmetic_mean, 689.6);
  EXPECT_DOUBLE_EQ(*f.geometric_mean, 687.3);
  // What the file says agrees with its shapes (means of the per-shape mean TFLOPS).
  EXPECT_NEAR(*f.outcome.arithmetic_mean(MamfOutcome::By::mean), 689.6, 0.05);
  EXPECT_NEAR(*f.outcome.geometric_mean(MamfOutcome::By::mean), 687.3, 0.05);
  EXPECT_EQ(f.best(MamfOutcome::By::median)->shape(), "2816x4096x4096");
}

// Two MAMF runs of different dtypes (real bf16 and fp8 files) are not compared without --force;
// the same device is said.
TEST(MeasurementLogs, MamfComparisonRefusesMixedDtypesAndNamesTheSameGpu) {
  const Catalog cat = Catalog::load(std::string(UB_DATA_DIR) + "/accelerators.json");
  const MamfLog bf16 = read_mamf_log(fixture("mamf_finder_real_h200.txt"));
  const MamfComparison same = compare_mamf(bf16, bf16, cat);
  EXPECT_TRUE(same.same_gpu);
  ASSERT_EQ(same.rows.size(), 5u);  // mean, median, max, then the arithmetic and geometric means
  EXPECT_EQ(same.rows[3].best, "arithmetic mean");
  EXPECT_DOUBLE_EQ(*same.rows[4].ratio, 1.0);
  // The same quick run in fp8 (float8_e4m3fn), recorded on another H200 the next day.
  const MamfLog fp8 = read_mamf_log(fixture("mamf_finder_real_h200_fp8.txt"));
  EXPECT_EQ(fp8.dtype, "fp8");
  EXPECT_EQ(fp8.gpu, "NVIDIA H200");
  EXPECT_EQ(fp8.gpu_uuid, "GPU-d4fa298c-17ff-ce5d-cb0d-e2712dae1122");
  EXPECT_EQ(fp8.outcome.shapes.size(), 79u);
  EXPECT_DOUBLE_EQ(fp8.best(MamfOutcome::By::median)->median_tflops, 1382.9);
  EXPECT_THROW(compare_mamf(bf16, fp8, cat), UsageError);
  const MamfComparison forced = compare_mamf(bf16, fp8, cat, true);
  EXPECT_FALSE(forced.same_gpu);
  ASSERT_FALSE(forced.notes.empty());
  EXPECT_NE(forced.notes.front().find("DIFFERENT DTYPES"), std::string::npos);
}

// A point measured twice in one file (a re-run appended, a retried length): every format keeps
// the later measurement and says so.
bool warned_again(const std::vector<std::string>& warnings, const std::string& what) {
  for (const std::string& w : warnings) {
    if (w.find(what + " measured again") != std::string::npos && w.find("the later one is kept") != std::string::npos) return true;
  }
  return false;
}

TEST(RepeatedPoints, TheLaterMeasurementIsKeptInEveryFormat) {
  const RunLog sweep = read_run_log(kFixtures + "/sweep_duplicate.log");
  ASSERT_EQ(sweep.points.size(), 1u);
  EXPECT_DOUBLE_EQ(sweep.points[0].steps.steady().front().exec_time_ms, 3070.0);
  EXPECT_TRUE(warned_again(sweep.warnings, "seq_len=8192"));

  // Our records: the same length in a second run of the file (a retried point).
  std::vector<std::string> records = LineSource::file(kFixtures + "/records_h200.jsonl").read_all();
  const std::vector<std::string> again = records;
  records.insert(records.end(), again.begin(), again.end());
  for (size_t i = again.size(); i < records.size(); ++i) {
    nlohmann::json j = nlohmann::json::parse(records[i]);
    if (j.contains("exec_time_ms")) j["exec_time_ms"] = j["exec_time_ms"].get<double>() + 1000;  // the later run's
    records[i] = j.dump();
  }
  const RunLog ours = read_run_log(LineSource::lines(records, false, "records_h200.jsonl"));
  const RunLog once = read_run_log(LineSource::file(kFixtures + "/records_h200.jsonl"));
  ASSERT_EQ(ours.points.size(), once.points.size());
  for (size_t i = 0; i < ours.points.size(); ++i) {
    EXPECT_EQ(ours.points[i].steps.count(), once.points[i].steps.count()) << "not merged: " << ours.points[i].seqlen;
    for (const StepSample& s : ours.points[i].steps.steady()) EXPECT_GE(s.exec_time_ms, 1000) << "the later run's steps";
  }
  EXPECT_TRUE(warned_again(ours.warnings, "seqlen " + std::to_string(once.points[0].seqlen)));

  const AttentionLog attention = read_attention_log(LineSource::text(
      // 1024 tokens, 32 heads of 128, not causal: 17.18 GFLOP, at 2 TFLOPS 8.59 ms, at 3 TFLOPS 5.727 ms.
      "# gpu=A causal=False nheads=32 head_dim=128\n{\"seqlen\": 1024, \"fwd_ms\": 8.59, \"fwd_tflops\": 2}\n"
      "{\"seqlen\": 1024, \"fwd_ms\": 5.727, \"fwd_tflops\": 3}\n", "t"));
  ASSERT_EQ(attention.points.size(), 1u);
  EXPECT_DOUBLE_EQ(attention.points[0].fwd_tflops, 3);
  EXPECT_TRUE(warned_again(attention.warnings, "seqlen 1024"));
}

}  // namespace
}  // namespace ub
