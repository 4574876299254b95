// Hostile and careless input to the binary, class by class, each case a real file written to a
// temporary folder: nothing silently wrong (a figure that cannot be a measurement is refused, or
// left out and said so), usage errors exit 2, messages stay one line and never carry a terminal's
// control sequences, valid input is read (a byte-order mark, a read-only database, a folder named
// with a newline), and nothing costs without bound (a trace's steps in linear time, a pipe read a
// line at a time, a PostgreSQL server that never answers).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>
#include <tuple>
#include <sstream>
#include <string>

#include "cli_run.hpp"
#include "measured_again.hpp"
#include "temp_files.hpp"

namespace {

using namespace ub_test;
namespace fs = std::filesystem;

const std::string kFx = UB_FIXTURES_DIR;

// `text` without the lines that hold `needle`.
std::string lines_without(const std::string& text, const std::string& needle) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find(needle) == std::string::npos) out += line + "\n";
  }
  return out;
}

// `text` with the first match of `re` replaced by its first group followed by `tail`.
std::string replaced_match(const std::string& text, const std::regex& re, const std::string& tail) {
  std::smatch m;
  if (!std::regex_search(text, m, re)) {
    ADD_FAILURE() << "no match";
    return text;
  }
  return m.prefix().str() + m[1].str() + tail + m.suffix().str();
}

// The line of `text` that holds `part`, 1-based.
size_t line_of(const std::string& text, const std::string& part) {
  const size_t at = text.find(part);
  return at == std::string::npos ? 0 : static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n')) + 1;
}

// ---- Silently wrong results: refused naming the place, or left out with a warning ----

TEST(SilentlyWrong, ATimeThatIsNotAFiniteNumberIsRefusedNamingTheLineAndTheField) {
  const std::string log = slurp(kFx + "/sweep_h200.log");
  const std::string step = R"("exec_time_ms": "2988.00")";
  for (const char* bad : {R"("exec_time_ms": "nan")", R"("exec_time_ms": "inf")", R"("exec_time_ms": "-3")"}) {
    const std::string path = write_file("nan_times.log", replaced(log, step, bad));
    expect_error(fmt::format("compare {} {}/sweep_b200.log --force", path, kFx), 1,
                 fmt::format("{}:{}", path, line_of(log, step)));
    expect_error(fmt::format("memfit {} --capacity-gib 130", path), 1, "exec_time_ms");
  }
  // bench_decompose.py's printout: a bucket line's figures.
  const std::string printout = slurp(kFx + "/decompose_h200.txt");
  for (const char* bad : {"nan ms", "inf ms", "0x6b ms"}) {
    const std::string path = write_file("nan_decompose.txt", replaced(printout, "107.4 ms", bad));
    expect_error("decompose " + path, 1,
                 fmt::format("{}:{}: bucket \"attention(FA)\": ms '{}' is not a number", path, line_of(printout, "107.4 ms"),
                             std::string(bad).substr(0, std::string(bad).size() - 3)));
  }
  expect_error("decompose " + write_file("negative_decompose.txt", replaced(printout, "107.4 ms", "-107.4 ms")), 1,
               "bucket \"attention(FA)\": ms -107.4 must be a finite non-negative number");
  // Figures beyond any measurement, a rate that is not the work over the time, buckets that do
  // not add up to the step, a summary beyond reason: refused naming the line or the file.
  const std::string p = "decompose_bad.txt";
  expect_error("decompose " + write_file(p, replaced(printout, "802.6 ms  459.6", "1e30 ms  459.6")), 1,
               "bucket \"everything else\": ms 1e+30 is beyond any measurement (at most 1e+10)");
  expect_error("decompose " + write_file(p, replaced(printout, "MFU 46.5%", "MFU 146.5%")), 1,
               "bucket \"everything else\": MFU 146.5 is beyond any measurement (at most 100%)");
  expect_error("decompose " + write_file(p, replaced(printout, "491.4 TFLOPS", "4914.0 TFLOPS")), 1,
               "4914 TFLOPS is not its 52.78 TFLOP over its 107.4 ms (491.4 TFLOPS)");
  expect_error("decompose " + write_file(p, replaced(replaced(printout, "910.0 ms  463.4", "9100.0 ms  46.3"),
                                                      "421.65 TFLOP", "421.33 TFLOP")),
               1, "the buckets add up to 910.0 ms, the TOTAL line says 9100 ms");
  for (const char* seq : {"81920000000000", "0x2000", "0"}) {
    expect_error("decompose " + write_file(p, replaced(printout, "seq=8192", std::string("seq=") + seq)), 1,
                 fmt::format("seq={} is not a sequence length", seq));
  }
  expect_error("decompose " + write_file(p, replaced(printout, "wall step=910.0", "wall step=9100000.0")), 1,
               "the `# wall` line's step is 9100000.0 ms, the TOTAL line 910.0 ms");
  for (const char* bad : {"peak_mem=9999999", "step=-910", "share=250%"}) {
    const std::string field = std::string(bad).substr(0, std::string(bad).find('='));
    const std::string from = field == "peak_mem" ? "peak_mem=99.0" : field == "step" ? "step=910.0" : "attention FLOP share=12.5%";
    const std::string to = field == "share" ? "attention FLOP share=250%" : bad;
    expect_error("predict " + write_file(p, replaced(printout, from, to)) + " --to b200", 1, "the `# wall` line");
  }
  // Our records: a bucket beyond any measurement, step_ms that is not its buckets' sum.
  const std::string records = slurp(kFx + "/engine_llama_2l_4096.jsonl");
  const std::string step_ms = R"("step_ms":41.441504)";
  ASSERT_NE(records.find(step_ms), std::string::npos);
  expect_error("predict " + write_file("decompose_bad.jsonl", replaced(records, step_ms, R"("step_ms":414.41504)")) +
                   " --to b200 --model llama-3.1-8b --layers 2",
               1, "the buckets add up to 41.442 ms, step_ms says 414.415");
  const std::string slow = replaced(records, R"("tflops":803.9731928111864)", R"("tflops":0.8039731928111864)");
  expect_error("predict " + write_file("decompose_rate.jsonl", slow) + " --to b200 --model llama-3.1-8b --layers 2", 1,
               "bucket \"gemm\": 0.8039731928111864 TFLOPS is not its");
}

// A peak memory of zero is no measurement: a memory fit through it finds "no limit in sight".
TEST(SilentlyWrong, APeakMemoryOfZeroIsRefused) {
  const std::string log = slurp(kFx + "/sweep_b200.log");
  const std::string path = write_file("peak_zero.log", replaced(log, R"("peak_mem_gib": 16.4})", R"("peak_mem_gib": 0.0})"));
  expect_error("memfit " + path, 1, ":5: \"peak_mem_gib\" is 0: a step that ran held memory");
}

TEST(SilentlyWrong, ACollectiveThatFailedItsExactnessCheckIsLeftOutAndSaidSo) {
  const std::string plain = slurp(kFx + "/nccl_records_h200x2_plain.jsonl");
  const std::string path = write_file("nccl_wrong.jsonl", replaced(plain, R"("wrong":0)", R"("wrong":7)"));
  const auto timed_points = [](const std::string& out) {
    const nlohmann::json j = nlohmann::json::parse(out);
    size_t n = 0;
    for (const auto& row : j["rows"]) n += !row["old"]["time_us"].is_null();
    return n;
  };
  const Result good = run(fmt::format("compare {0}/nccl_records_h200x2_plain.jsonl {0}/nccl_records_h200x2_graph.jsonl --json", kFx));
  const Result bad = run(fmt::format("compare {} {}/nccl_records_h200x2_graph.jsonl --json", path, kFx));
  ASSERT_EQ(good.code, 0) << good.err;
  ASSERT_EQ(bad.code, 0) << bad.err;
  EXPECT_EQ(timed_points(bad.out) + 1, timed_points(good.out)) << "the failed point was compared as valid";
  EXPECT_NE(bad.out.find("7 output elements failed the exactness check"), std::string::npos) << bad.out;
  // The history stores what a comparison would compare, and says what it left out.
  const Result add = run(fmt::format("history add --db {} {}", fresh_db("nccl_wrong"), path));
  ASSERT_EQ(add.code, 0) << add.err;
  EXPECT_NE(add.err.find("warning: " + path + ":"), std::string::npos) << add.err;
  EXPECT_NE(add.err.find("failed the exactness check"), std::string::npos) << add.err;
}

// The first kernel event's `field` set to each of `bads` (a JSON value): each trace refused (exit
// 1) naming the event and holding `says`.
void expect_kernel_field_refused(const std::string& trace, const std::string& field, const std::vector<std::string>& bads,
                                 const std::string& says) {
  const std::regex first_kernel(fmt::format(R"(("cat": "kernel"[^\n]*?"{}": )[0-9.]+)", field));
  ASSERT_TRUE(std::regex_search(trace, first_kernel)) << field;
  for (const std::string& bad : bads) {
    const std::string path = write_file("bad_" + field + ".json", replaced_match(trace, first_kernel, bad));
    const Result r = run("decompose " + path);
    EXPECT_EQ(r.code, 1) << bad << ": " << r.err;
    EXPECT_NE(r.err.find(path + ": traceEvents["), std::string::npos) << bad << ": " << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << bad << ": " << r.err;
  }
}

TEST(SilentlyWrong, ATraceEventWithoutAUsableDurationIsRefusedNamingTheEventAndTheField) {
  const std::string trace = slurp(kFx + "/trace_kineto_small.json");
  expect_kernel_field_refused(trace, "dur", {"-5", "\"12\"", "null", "1e300", "86400000001"}, "\"dur\"");
  expect_kernel_field_refused(trace, "dur", {"1e400"}, "]: \"dur\": a number out of range");
  // A start no clock gives would put the kernel in no step, unsaid.
  expect_kernel_field_refused(trace, "ts", {"-5"}, "\"ts\" is negative");
  expect_kernel_field_refused(trace, "ts", {"1e308"}, "past any profiler's clock");
  const std::regex first_kernel_ts(R"re(("cat": "kernel"[^\n]*?)"ts": [0-9.]+, )re");
  const std::string no_ts = write_file("no_ts.json", replaced_match(trace, first_kernel_ts, ""));
  expect_error("decompose " + no_ts, 1, "\"ts\" is missing");
  // The trace as torch.profiler wrote it still reads.
  EXPECT_EQ(run("decompose " + kFx + "/trace_kineto_small.json").code, 0);
}

// A GPU activity's timeline is its device and stream: a value that names none is refused, as is a
// kernel written as a begin/end pair (Kineto writes one complete event), never left out unsaid.
TEST(SilentlyWrong, AKernelOnNoTimelineOrNotOneCompleteEventIsRefused) {
  const std::string trace = slurp(kFx + "/trace_kineto_small.json");
  // A string of digits is a string: no profiler writes a device so.
  expect_kernel_field_refused(trace, "device", {"\"gpu0\"", "\"0\"", "-3", "1.5", "99999", "null"}, "\"args.device\" is not a GPU index");
  expect_kernel_field_refused(trace, "stream", {"\"x\""}, "\"args.stream\" is not a stream id");
  const std::regex first_kernel_ph(R"re(\{"ph": "X"(, "cat": "kernel"))re");
  ASSERT_TRUE(std::regex_search(trace, first_kernel_ph));
  const std::string begin = write_file("kernel_begin.json", std::regex_replace(trace, first_kernel_ph, R"({"ph": "B"$1)",
                                                                              std::regex_constants::format_first_only));
  expect_error("decompose " + begin, 1, "\"ph\" is \"B\", where a GPU activity is one complete event (\"X\")");
  // A key the split reads, given twice in one event: which value is meant is not known.
  const std::regex first_kernel_dur(R"(("cat": "kernel"[^\n]*?"dur": )([0-9.]+))");
  for (const auto& [twice, key] : {std::pair{"$1$2, \"dur\": 3", "dur"}, {"$1$2, \"cat\": \"kernel\"", "cat"},
                                   {"$1$2, \"pid\": 9", "pid"}}) {
    const std::string path = write_file("key_twice.json", std::regex_replace(trace, first_kernel_dur, twice,
                                                                            std::regex_constants::format_first_only));
    expect_error("decompose " + path, 1, fmt::format("the key \"{}\" is given twice in one event", key));
  }
  // JSON has no raw control character inside a string: a NUL there would cut a kernel's name.
  std::string nul_name = trace;
  nul_name.insert(nul_name.find("nvjet_tst_192x192") + 5, 1, '\0');
  const Result cut = run("decompose " + write_file("nul_in_name.json", nul_name));
  EXPECT_EQ(cut.code, 1) << cut.err;
  EXPECT_NE(cut.err.find("]: \"name\": a raw control character (\\x00) inside a string"), std::string::npos) << cut.err;
  // A comma before the end of an event or of the events: said as such, naming the event.
  std::string comma_in_event = trace;
  comma_in_event.insert(comma_in_event.find("\"dur\": 300,") + 11, " }, {\"x\": 1,");
  expect_error("decompose " + write_file("comma_in_event.json", comma_in_event), 1, "(JSON has no comma before '}')");
  std::string comma_after_events = trace;
  comma_after_events.insert(comma_after_events.rfind("}\n  ],") + 1, ",");
  expect_error("decompose " + write_file("comma_after_events.json", comma_after_events), 1,
               "an element was expected after ',' (JSON has no comma before ']')");
  // A member of the document given twice at its top level (two traces' events in one file).
  std::string events_twice = trace;
  events_twice.insert(events_twice.find("\"traceEvents\": ["), "\"traceEvents\": [], ");
  expect_error("decompose " + write_file("events_twice.json", events_twice), 1,
               "the key \"traceEvents\" is given twice at the top level");
  // Nor in a value the split passes over unread (a process name, an argument).
  std::string nul_in_args = trace;
  nul_in_args.insert(nul_in_args.find("\"args\": {\"name\": \"python3\"") + 19, 1, '\0');
  expect_error("decompose " + write_file("nul_in_args.json", nul_in_args), 1, "a raw control character (\\x00) in a value");
  // A NUL byte and more after the document is more after it, not its end.
  expect_error("decompose " + write_file("nul_after.json", trace + std::string(1, '\0') + "junk"), 1,
               "more after the end of the JSON document");
}

// A step record whose type is ours but for its case or blanks is said as skipped, by every reader.
TEST(SilentlyWrong, ARecordTypeOfTheWrongCaseIsSaidAsSkipped) {
  std::string records = slurp(kFx + "/records_h200.jsonl");
  const std::string step = "\"type\": \"train_step\"";
  ASSERT_NE(records.find(step), std::string::npos);
  records.replace(records.find(step), step.size(), "\"type\": \"TRAIN_STEP\"");
  const std::string path = write_file("type_upper.jsonl", records);
  for (const std::string& cmd : {"memfit " + path, fmt::format("history add --db {} {}", fresh_db("type_upper"), path)}) {
    const Result r = run(cmd);
    EXPECT_EQ(r.code, 0) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find("warning: " + path + ":"), std::string::npos) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find("a record of type \"TRAIN_STEP\" is not one upgradebench writes (\"train_step\" is): skipped"),
              std::string::npos) << cmd << ": " << r.err;
  }
}

// A context record of another format (a newer upgradebench's, another tool's) is not read as
// ours; a run's GPUs are each listed once, each with a name.
TEST(SilentlyWrong, RecordsOfAnotherSchemaOrGpusListedTwiceAreRefused) {
  const std::string records = slurp(kFx + "/train_records_h200_plain_8k.jsonl");
  const std::string ours = "\"schema\":\"upgradebench/1\"";
  ASSERT_NE(records.find(ours), std::string::npos);
  for (const std::string other : {"\"schema\":\"upgradebench/999\"", "\"schema\":\"nvidia-smi/1\"", "\"schema\":null"}) {
    std::string edited = records;
    edited.replace(edited.find(ours), ours.size(), other);
    const std::string path = write_file("other_schema.jsonl", edited);
    expect_error("memfit " + path, 1, path + ":1: schema ");
    expect_error(fmt::format("history add --db {} {}", fresh_db("other_schema"), path), 1, "is not one this upgradebench reads (upgradebench/1)");
  }
  // A context without a schema is no record of ours either.
  {
    std::string edited = records;
    edited.erase(edited.find(ours), ours.size() + 1);  // and its comma
    const std::string path = write_file("no_schema.jsonl", edited);
    expect_error("memfit " + path, 1, path + ":1: schema null is not one this upgradebench reads");
  }
  // A GPU index past any machine's (the history keeps 32 bits) is refused, not wrapped.
  {
    std::string edited = records;
    ASSERT_NE(edited.find("\"index\":0"), std::string::npos);
    edited.replace(edited.find("\"index\":0"), 9, "\"index\":99999999999");
    const std::string path = write_file("gpu_index_huge.jsonl", edited);
    expect_error(fmt::format("history add --db {} {}", fresh_db("gpu_index_huge"), path), 1,
                 "a GPU's \"index\" 99999999999 is past any machine's GPUs");
  }
  const std::regex gpus(R"re("gpus":\[(\{[^\]]*\})\])re");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(records, m, gpus));
  std::string unindexed = m[1].str();
  unindexed = std::regex_replace(unindexed, std::regex(R"("index":0,)"), "");
  const std::string twice = write_file("gpus_twice.jsonl", std::regex_replace(records, gpus, "\"gpus\":[" + unindexed + "," + unindexed + "]",
                                                                            std::regex_constants::format_first_only));
  expect_error(fmt::format("history add --db {} {}", fresh_db("gpus_twice"), twice), 1, ":1: two GPUs with index 0 in \"gpus\"");
  expect_error("memfit " + twice, 1, ":1: two GPUs with index 0");
  // Two indexes, one UUID: one GPU listed twice.
  const std::string gpu = m[1].str();
  const std::string renumbered = std::regex_replace(gpu, std::regex(R"("index":0)"), "\"index\":1");
  const std::string one_uuid = write_file("gpus_one_uuid.jsonl", std::regex_replace(records, gpus, "\"gpus\":[" + gpu + "," + renumbered + "]",
                                                                                   std::regex_constants::format_first_only));
  expect_error("memfit " + one_uuid, 1, ":1: GPUs 0 and 1 in \"gpus\" have one UUID");
  const std::string nameless = write_file("gpu_nameless.jsonl", std::regex_replace(records, gpus, "\"gpus\":[{}]",
                                                                                  std::regex_constants::format_first_only));
  expect_error(fmt::format("history add --db {} {}", fresh_db("gpu_nameless"), nameless), 1, ":1: GPU 0 in \"gpus\" has no name");
}

// What JSON has no number for is a damaged trace, not a number read as far as it goes: a leading
// zero, a bare point, -inf.
TEST(SilentlyWrong, ATraceNumberJsonDoesNotWriteIsRefused) {
  const std::string trace = slurp(kFx + "/trace_kineto_small.json");
  expect_kernel_field_refused(trace, "dur", {"0300", "300.", "-inf", "-nan", "1e"}, "]: \"dur\": a malformed number");
  expect_kernel_field_refused(trace, "ts", {"05465398100010.0"}, "]: \"ts\": a malformed number");
}

// A step annotation of no length and an element of traceEvents that is no event are left out and
// said with the steps, never dropped unsaid.
TEST(SilentlyWrong, AnEmptyStepOrAnElementThatIsNoEventIsSaid) {
  const std::string trace = slurp(kFx + "/trace_kineto_small.json");
  const std::regex first_step(R"re(("name": "ProfilerStep#1"[^\n]*?"dur": )[0-9.]+)re");
  ASSERT_TRUE(std::regex_search(trace, first_step));
  const std::string empty_step = write_file("empty_step.json", std::regex_replace(trace, first_step, "$010"));
  const Result r = run("decompose " + empty_step);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Steps: 3 annotations matching \"^ProfilerStep#\" (host side); 1 of no length left out (ProfilerStep#1)"),
            std::string::npos) << r.out;
  std::string with_numbers = trace;
  with_numbers.insert(with_numbers.find("\"traceEvents\": [") + 16, " 5, \"x\",");
  const Result n = run("decompose " + write_file("not_events.json", with_numbers));
  ASSERT_EQ(n.code, 0) << n.err;
  EXPECT_NE(n.out.find("; 2 element(s) of traceEvents that are not events (not objects) left out"), std::string::npos) << n.out;
}

// A folder holds one trace per rank: the same trace twice (named twice, or copied beside itself)
// is one measurement, refused rather than counted as two GPUs.
TEST(SilentlyWrong, OneTraceGivenTwiceIsNotTwoMeasurements) {
  const fs::path folder = temp_path("two_ranks_one_trace");
  fs::remove_all(folder);
  fs::create_directories(folder);
  fs::copy_file(kFx + "/trace_kineto_small.json", folder / "rank0.json");
  fs::copy_file(kFx + "/trace_kineto_small.json", folder / "rank1.json");
  expect_error("decompose " + folder.string(), 2, "rank1.json: the same bytes as " + (folder / "rank0.json").string());
  expect_error(fmt::format("decompose {0} {0}", kFx + "/trace_kineto_small.json"), 2, "one trace named twice");
  // The same trace written again (indented otherwise, its rank edited) or compressed: the same
  // GPU activities at the same instants, one measurement whatever its bytes.
  nlohmann::json trace = nlohmann::json::parse(slurp(kFx + "/trace_kineto_small.json"));
  trace["distributedInfo"]["world_size"] = 2;
  std::ofstream(folder / "rank0.json", std::ios::trunc) << trace.dump();
  trace["distributedInfo"]["rank"] = 1;
  std::ofstream(folder / "rank1.json", std::ios::trunc) << trace.dump(1);
  expect_error("decompose " + folder.string(), 2, "rank1.json (GPU 0): the same 28 GPU activities at the same instants as " +
                                                      (folder / "rank0.json").string() + " (GPU 0): one measurement");
  fs::remove(folder / "rank1.json");
  ASSERT_EQ(std::system(("gzip -c " + (folder / "rank0.json").string() + " > " + (folder / "rank1.json.gz").string()).c_str()), 0);
  expect_error("decompose " + folder.string(), 2, "rank1.json.gz (GPU 0): the same 28 GPU activities");
  fs::remove(folder / "rank1.json.gz");
  // A second rank's trace (its own clock: every event 1 ms later) reads.
  for (auto& e : trace["traceEvents"]) {
    if (e.contains("ts") && e["ts"].is_number()) e["ts"] = e["ts"].get<double>() + 1000;
  }
  std::ofstream(folder / "rank1.json", std::ios::trunc) << trace.dump();
  const Result r = run("decompose " + folder.string());
  EXPECT_EQ(r.code, 0) << r.err;
}

// The traces of a folder are one job's, each rank once (Kineto's distributedInfo): a rank said by
// two traces, or two world sizes, is two jobs mixed in one folder, refused naming both files; a
// rank without its trace is said; each record carries its rank.
TEST(SilentlyWrong, TracesOfAFolderAreOneJobsRanksEachOnce) {
  const fs::path folder = fresh_folder("ranks_of_one_job");
  fs::create_directories(folder);
  nlohmann::json trace = nlohmann::json::parse(slurp(kFx + "/trace_kineto_small.json"));
  const auto write_rank = [&](const std::string& name, int rank, int world, double shift_us) {
    nlohmann::json t = trace;
    t["distributedInfo"]["rank"] = rank;
    t["distributedInfo"]["world_size"] = world;
    for (auto& e : t["traceEvents"]) {  // each rank's own instants
      if (e.contains("ts") && e["ts"].is_number()) e["ts"] = e["ts"].get<double>() + shift_us;
    }
    std::ofstream(folder / name, std::ios::trunc) << t.dump();
  };
  write_rank("r0.json", 0, 2, 0);
  write_rank("r1.json", 0, 2, 1000);
  expect_error("decompose " + folder.string(), 2,
               (folder / "r1.json").string() + ": its distributedInfo says rank 0 of 2, as " + (folder / "r0.json").string() +
                   " does: two jobs' traces");
  // Traces named one by one are each their own: rank 0 of two jobs, given as files, both read.
  const std::string both = temp_path("ranks_named_one_by_one.jsonl");
  fs::remove(both);
  const Result files = run(fmt::format("decompose {} {} --out {}", (folder / "r0.json").string(),
                                       (folder / "r1.json").string(), both));
  EXPECT_EQ(files.code, 0) << files.err;
  // Stored as one run: the first of the two rank-0 decompositions, the second said to be left out.
  const Result stored = run("history add --db " + temp_path("ranks_named.sqlite") + " " + both);
  EXPECT_EQ(stored.code, 0) << stored.err;
  EXPECT_NE(stored.err.find("a second decomposition of GPU 0 (by rank) (" + (folder / "r1.json").string() + ") left out"),
            std::string::npos) << stored.err;
  write_rank("r1.json", 1, 4, 1000);
  expect_error("decompose " + folder.string(), 2,
               (folder / "r1.json").string() + ": its distributedInfo says a job of 4 ranks, " +
                   (folder / "r0.json").string() + " a job of 2");
  write_rank("r1.json", 5, 4, 1000);
  expect_error("decompose " + folder.string(), 1, "distributedInfo: \"rank\" is 5, not one of the job's 4 ranks (0 to 3)");
  {  // a rank without its job's size
    nlohmann::json t = trace;
    t["distributedInfo"].erase("world_size");
    std::ofstream(folder / "r1.json", std::ios::trunc) << t.dump();
    expect_error("decompose " + folder.string(), 1, "\"rank\" is given without world_size: which job's rank is not known");
  }
  // Ranks 0 and 1 of 4: read, the two missing ranks said, each record naming its rank.
  write_rank("r0.json", 0, 4, 0);
  write_rank("r1.json", 1, 4, 1000);
  const fs::path out = temp_path("ranks_of_one_job.jsonl");
  fs::remove(out);
  const Result r = run("decompose " + folder.string() + " --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("2 of the job's 4 ranks have no trace in " + folder.string() + " (rank 2, 3): the decompositions "
                       "are of the ranks given"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("r1.json (GPU 0, NVIDIA H200, rank 1 of 4)"), std::string::npos) << r.out;
  std::vector<std::pair<int, int>> ranks;
  std::ifstream in(out);
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json rec = nlohmann::json::parse(line);
    if (rec["type"] == "decomposition") ranks.emplace_back(rec["rank"].get<int>(), rec["world_size"].get<int>());
  }
  EXPECT_EQ(ranks, (std::vector<std::pair<int, int>>{{0, 4}, {1, 4}}));
  // A record whose rank is not one of its job's is refused by a reader.
  const std::string edited = write_file("ranks_of_one_job_edited.jsonl", replaced(slurp(out), "\"rank\":0,\"seqlen\"", "\"rank\":7,\"seqlen\""));
  expect_error("report " + edited + " -o " + fresh_folder("ranks_edited_report"), 1, "\"rank\" is 7, not one of the job's 4 ranks");
  // Every decomposition of a file is held to it, not the first alone.
  const std::string second = write_file("ranks_of_one_job_second.jsonl", replaced(slurp(out), "\"rank\":1,\"seqlen\"", "\"rank\":9,\"seqlen\""));
  expect_error("history add --db " + temp_path("ranks_second.sqlite") + " " + second, 1, "\"rank\" is 9, not one of the job's 4 ranks");
  {  // a trace that says no rank beside ranked ones: said
    nlohmann::json t = trace;
    t.erase("distributedInfo");
    for (auto& e : t["traceEvents"]) {
      if (e.contains("ts") && e["ts"].is_number()) e["ts"] = e["ts"].get<double>() + 5000;
    }
    std::ofstream(folder / "other.json") << t.dump();
    const Result mixed = run("decompose " + folder.string());
    EXPECT_EQ(mixed.code, 0) << mixed.err;
    EXPECT_NE(mixed.err.find((folder / "other.json").string() + " in " + folder.string() + " says no rank, where 2 others "
                             "do: the folder may mix two jobs' traces"), std::string::npos) << mixed.err;
    fs::remove(folder / "other.json");
  }
  // All four ranks: nothing missing is said.
  write_rank("r2.json", 2, 4, 2000);
  write_rank("r3.json", 3, 4, 3000);
  const Result all = run("decompose " + folder.string());
  ASSERT_EQ(all.code, 0) << all.err;
  EXPECT_EQ(all.err.find("have no trace here"), std::string::npos) << all.err;
}

// Jobs of different sizes: a time per call is of its own job, busbw is the links'. Comparing a
// 2-rank log with a 4-rank one, each row's speedup is busbw's ratio (the time ratio scaled by the
// collective's bus factors), and its interval and verdict with it; said in a warning and in JSON.
TEST(SilentlyWrong, CollectivesOfJobsOfDifferentSizesCompareTheirBusBandwidth) {
  const std::string two = kFx + "/nccl_records_h200x2_graph.jsonl";
  std::string four_ranks;
  {
    std::ifstream in(two);
    for (std::string line; std::getline(in, line);) {
      nlohmann::json r = nlohmann::json::parse(line);
      if (r.value("type", "") == "context") r["world"]["size"] = 4;
      if (r.value("type", "") == "nccl") {
        r["world_size"] = 4;  // the same times: busbw is the factor's ratio higher
        const double factor = r["collective"] == "all_reduce" ? 1.5 / 1.0 : 0.75 / 0.5;
        r["busbw_gbps"] = r["busbw_gbps"].get<double>() * factor;
      }
      four_ranks += r.dump() + "\n";
    }
  }
  // Measured again 1.25x slower per call: busbw 1.5 / 1.25 = 1.2x the 2-rank job's.
  const std::string four = write_file("nccl_four_ranks.jsonl", measured_again(four_ranks, 1.25));
  const Result r = run(fmt::format("compare {} {} --json", two, four));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& c = j.is_array() ? j[0] : j;
  EXPECT_EQ(c["speedup_of"], "busbw");
  ASSERT_FALSE(c["rows"].empty());
  for (const auto& row : c["rows"]) {
    if (row["speedup"].is_null()) continue;
    // All-reduce's bus factor 2(n-1)/n, the others' (n-1)/n: 1.5x from 2 to 4 ranks.
    EXPECT_NEAR(row["speedup"].get<double>(), 1.5 / 1.25, 1e-6) << row.dump();
    if (row.contains("verdict")) EXPECT_NE(row["verdict"], "SLOWER") << "slower calls of a larger job, faster links";
  }
  const Result text = run(fmt::format("compare {} {}", two, four));
  EXPECT_NE(text.out.find("2 ranks (old) against 4 (new): the times are of different jobs, so each speedup is busbw's"),
            std::string::npos) << text.out << text.err;
  // Two jobs of one size compare times, as before.
  const Result same = run(fmt::format("compare {}/nccl_records_h200x2_plain.jsonl {} --json", kFx, two));
  ASSERT_EQ(same.code, 0) << same.err;
  const auto js = nlohmann::json::parse(same.out);
  EXPECT_EQ((js.is_array() ? js[0] : js)["speedup_of"], "time");
}

// A NUL byte ends a C string and nlohmann's input alike: a line cut there would lose its rest
// unsaid (two steps joined by one read as one, a bucket's name cut from its time). A log or a JSON
// file holding one is refused naming where; a records file skips the line as damaged, warning.
TEST(SilentlyWrong, ANulByteInALineIsNeverReadPast) {
  const std::string records = slurp(UB_DATA_DIR "/examples/sweep_h200_llama-3.1-8b-4layers.jsonl");
  std::vector<std::string> lines;
  for (size_t at = 0, next; at < records.size(); at = next + 1) {
    next = records.find('\n', at);
    if (next == std::string::npos) next = records.size();
    lines.push_back(records.substr(at, next - at));
  }
  ASSERT_GT(lines.size(), 8u);
  std::string joined;
  for (size_t i = 0; i < lines.size(); ++i) {
    joined += lines[i];
    joined += i == 5 ? std::string(1, '\0') : std::string("\n");
  }
  const std::string path = write_file("nul_joined.jsonl", joined);
  const Result r = run("memfit " + path + " --capacity-gib 130");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("upgradebench: warning: " + path + ":6: a damaged line skipped"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("a NUL byte at offset"), std::string::npos) << r.err;

  const std::string log = slurp(kFx + "/sweep_h200.log");
  const size_t step = log.find("{\"step\": 3");
  ASSERT_NE(step, std::string::npos);
  std::string cut = log;
  cut[log.find('\n', step)] = '\0';
  expect_error("memfit " + write_file("nul_joined.log", cut) + " --capacity-gib 130", 1, ": a NUL byte at column");

  std::string printout = slurp(kFx + "/decompose_h200.txt");
  printout.insert(printout.find("attention(FA)") + 13, 1, '\0');
  const std::string bucket = write_file("nul_bucket.txt", printout);
  expect_error("compare " + bucket + " " + kFx + "/decompose_b200.txt", 1, "nul_bucket.txt:4: a NUL byte at column 14");

  const std::string config = write_file("nul_config.json", slurp(std::string(UB_DATA_DIR) + "/models/llama-3.1-8b.json") + std::string(1, '\0') + "junk");
  expect_error("flops --model " + config, 1, "a NUL byte at offset");

  // The zeros a crash leaves at the end of a file being appended to cost that line, in every
  // reader of records: attention's and the collectives' too.
  const std::string zeros(64, '\0');
  const std::string attention = write_file("zero_tail_attention.jsonl", slurp(kFx + "/attention_records_h200.jsonl") + zeros);
  const Result a = run("compare " + attention + " " + kFx + "/attention_b200.log");
  EXPECT_EQ(a.code, 0) << a.err;
  EXPECT_NE(a.err.find("warning: " + attention + ":8:"), std::string::npos) << a.err;
  const std::string nccl = write_file("zero_tail_nccl.jsonl", slurp(kFx + "/nccl_records_h200x2_graph.jsonl") + zeros);
  const Result n = run("compare " + kFx + "/nccl_records_h200x2_plain.jsonl " + nccl);
  EXPECT_EQ(n.code, 0) << n.err;
  EXPECT_NE((n.out + n.err).find(nccl + ":10:"), std::string::npos) << n.out << n.err;
  // A suite's part with such a line: decide says so among its warnings.
  const fs::path suite = temp_path("suite_nul_line");
  fs::remove_all(suite);
  fs::copy(kFx + "/suite_h200_2l", suite, fs::copy_options::recursive);
  std::string sweep = slurp((suite / "sweep.jsonl").string());
  size_t fourth = 0;
  for (int i = 0; i < 3; ++i) fourth = sweep.find('\n', fourth) + 1;
  sweep.insert(fourth + 20, 1, '\0');
  std::ofstream((suite / "sweep.jsonl").string(), std::ios::trunc | std::ios::binary) << sweep;
  const Result decided = run("decide " + suite.string() + " --to b200-sxm");
  EXPECT_EQ(decided.code, 0) << decided.err;
  EXPECT_NE(decided.out.find((suite / "sweep.jsonl").string() + ":4: a damaged line skipped"), std::string::npos) << decided.out;
  // A header of bench_flash_attn.py's lines is text: a NUL in it is refused naming it.
  std::string header = slurp(kFx + "/attention_h200.log");
  header.insert(header.find("nheads=32"), 1, '\0');
  expect_error("compare " + write_file("nul_header.log", header) + " " + kFx + "/attention_b200.log", 1, ": a NUL byte at column");
}

// A prediction record is drawn only as predict --out wrote it: a figure edited or damaged (a
// negative speedup, an interval that does not hold its point, buckets that do not add up to the
// step, an MFU above 1, a negative price) is refused naming the line and the field.
TEST(SilentlyWrong, APredictionRecordNoPredictionWritesIsRefused) {
  const std::string good = temp_path("prediction_good.jsonl");
  fs::remove(good);
  ASSERT_EQ(run("predict " + kFx + "/decompose_h200.txt --to b200-sxm --price-old 3.5 --price-new 6 --out " + good).code, 0);
  std::string line;
  {
    std::ifstream in(good);
    for (std::string l; std::getline(in, l);) {
      if (l.find("\"type\":\"prediction\"") != std::string::npos) line = l;
    }
  }
  ASSERT_FALSE(line.empty());
  const nlohmann::json record = nlohmann::json::parse(line);
  ASSERT_TRUE(record["speedup"].is_number()) << line;
  ASSERT_EQ(run("report " + good + " -o " + fresh_folder("prediction_good_report")).code, 0);
  const auto edited = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json r = record;
    edit(r);
    std::string text = slurp(good);
    text.replace(text.find(line), line.size(), r.dump());
    return write_file("prediction_edited.jsonl", text);
  };
  const double sp = record["speedup"].get<double>();
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> cases = {
      {[](nlohmann::json& r) { r["speedup"] = -1.7; }, "\"speedup\" is -1.7, where a positive number is meant"},
      {[](nlohmann::json& r) { r["step_ms"] = 0; }, "\"step_ms\" is 0"},
      {[&](nlohmann::json& r) { r["speedup_interval"] = {sp * 2, sp * 3}; }, "which does not hold its point"},
      {[&](nlohmann::json& r) { r["speedup_interval"] = {sp * 1.1, sp * 0.9}; }, "not a positive interval from low to high"},
      {[&](nlohmann::json& r) { r["speedup_interval"] = {1, 2, 3}; }, "\"speedup_interval\" is not [low, high]"},
      {[](nlohmann::json& r) { r["seqlen"] = 0; }, "\"seqlen\""},
      {[](nlohmann::json& r) { r["buckets"] = nlohmann::json::array(); }, "\"buckets\" are missing beside a predicted step"},
      {[](nlohmann::json& r) {
         auto& b = r["buckets"][0];
         b["ms"] = b["ms"].get<double>() * 3 + 1, b["ms_low"] = nullptr, b["ms_high"] = nullptr;
       }, "add up to"},
      {[](nlohmann::json& r) { r["mfu"] = 5; }, "\"mfu\" is 5, above the GPU's peak"},
      {[](nlohmann::json& r) { r["usd_per_mtoken_new"] = -2; }, "\"usd_per_mtoken_new\" is -2, not a price"},
      {[](nlohmann::json& r) { r["break_even"] = -1; }, "\"break_even\" is -1"},
      {[](nlohmann::json& r) { r["fits"] = "yes"; }, "\"fits\" is not true or false"},
      {[](nlohmann::json& r) { r["predicted"] = false; }, "\"predicted\" is not true, in a prediction"},
      {[](nlohmann::json& r) { r.erase("predicted"); }, "\"predicted\" is not true, in a prediction"},
      {[](nlohmann::json& r) { r["new_capacity_gib"] = -1; }, "\"new_capacity_gib\" is -1"},
      {[](nlohmann::json& r) { r["buckets"][0]["ms_low"] = r["buckets"][0]["ms"].get<double>() * 2 + 1; },
       "with an interval that does not hold it"},
      {[](nlohmann::json& r) { r["buckets"][0]["ratio"]["point"] = -2; }, "hold a ratio point of -2"},
  };
  for (const auto& [edit, says] : cases) {
    const std::string path = edited(edit);
    const Result r = run("report " + path + " -o " + fresh_folder("prediction_edited_report"));
    EXPECT_EQ(r.code, 1) << says << ": " << r.err;
    EXPECT_NE(r.err.find(path + ":"), std::string::npos) << says << ": " << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << says << ": " << r.err;
  }
}

// C1 controls and bidirectional overrides read from a file (a GPU's name, a host) are shown as
// \xNN in tables and as \uXXXX in JSON: neither reaches the terminal raw.
TEST(Messages, C1ControlsAndBidiOverridesFromFilesReachNoTerminal) {
  std::string records = slurp(UB_DATA_DIR "/examples/sweep_h200_llama-3.1-8b-4layers.jsonl");
  for (size_t at; (at = records.find("\"name\":\"NVIDIA H200\"")) != std::string::npos;) {
    records.replace(at, 20, "\"name\":\"NVIDIA H200\\u009b31m\\u202e\"");
  }
  const std::string path = write_file("c1_gpu.jsonl", records);
  for (const std::string& format : {"", " --json", " --md", " --csv"}) {
    const Result r = run("memfit " + path + " --capacity-gib 130" + format);
    ASSERT_EQ(r.code, 0) << r.err;
    for (const std::string& raw : {std::string("\xc2\x9b"), std::string("\xe2\x80\xae")}) {
      EXPECT_EQ(r.out.find(raw), std::string::npos) << format << ": " << r.out;
      EXPECT_EQ(r.err.find(raw), std::string::npos) << format << ": " << r.err;
    }
  }
  const Result table = run("memfit " + path + " --capacity-gib 130");
  EXPECT_NE(table.out.find("NVIDIA H200\\xc2\\x9b31m\\xe2\\x80\\xae"), std::string::npos) << table.out;
  // A zero-width space inside the name shows too, rather than read as the name without it.
  records = slurp(UB_DATA_DIR "/examples/sweep_h200_llama-3.1-8b-4layers.jsonl");
  for (size_t at; (at = records.find("\"name\":\"NVIDIA H200\"")) != std::string::npos;) {
    records.replace(at, 20, "\"name\":\"NVIDIA H\\u200b200\"");
  }
  const Result hidden = run("memfit " + write_file("zwsp_gpu.jsonl", records) + " --capacity-gib 130");
  EXPECT_EQ(hidden.out.find("\xe2\x80\x8b"), std::string::npos) << hidden.out;
  EXPECT_EQ(hidden.err.find("\xe2\x80\x8b"), std::string::npos) << hidden.err;
  EXPECT_NE((hidden.out + hidden.err).find("NVIDIA H\\xe2\\x80\\x8b200"), std::string::npos) << hidden.out << hidden.err;
}

// A mamf-finder.py footer whose shape lines were cut away is no measurement; a shape whose
// operands no GPU holds is a damaged line, left out with a warning and counted in no mean.
TEST(SilentlyWrong, AMamfFinderFooterAloneOrAnImpossibleShapeIsNotAMeasurement) {
  const std::string log = slurp(kFx + "/mamf_finder_h200.txt");
  std::string footer_only;
  for (size_t at = 0, next; at < log.size(); at = next + 1) {
    next = log.find('\n', at);
    if (next == std::string::npos) next = log.size();
    const std::string line = log.substr(at, next - at);
    if (line.find(" | ") == std::string::npos) footer_only += line + "\n";
  }
  const std::string guide = kFx + "/guide/mamf_bf16_b200.txt";
  // A second device line naming another GPU: two runs in one file.
  expect_error("compare " + write_file("mamf_two_devices.txt", replaced(log, "device: NVIDIA H200\n", "device: NVIDIA H200\ndevice: NVIDIA B200\n")) +
                   " " + guide, 1, "NVIDIA B200");
  expect_error("compare " + write_file("mamf_footer_only.txt", footer_only) + " " + guide, 1,
               "the footer counts 4 shapes and the file has no shape line");
  const std::string huge = write_file("mamf_huge_shape.txt", replaced(log, "@ 4096x4096x13312      |", "@ 99999999999x99999999999x99999999999      |"));
  const Result r = run("compare " + huge + " " + guide);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("a shape line left out, damaged or impossible (99999999999x99999999999x99999999999 is past any "
                       "GPU's memory)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3 shapes (old)"), std::string::npos) << r.out;
  // A shape timed at 0 TFLOPS ran no product: left out, in neither mean.
  const std::string zero = write_file("mamf_zero_shape.txt", replaced(log, "741.3(mean)  742.0(median)  761.7(max)", "0(mean)  0(median)  0(max)"));
  const Result z = run("compare " + zero + " " + guide);
  EXPECT_NE(z.out.find("0 TFLOPS is no timing of a product that ran"), std::string::npos) << z.out << z.err;
  // One shape measured twice in our records is read once, its later measurement, said so.
  const std::string records = slurp(kFx + "/mamf_records_h200_a.jsonl");
  const size_t second = records.find('\n') + 1, third = records.find('\n', second) + 1;
  const std::string twice = write_file("mamf_shape_twice.jsonl", records.substr(0, third) + records.substr(second, third - second) +
                                                                    records.substr(third));
  const Result t = run("compare " + twice + " " + kFx + "/mamf_records_h200_b.jsonl --json");
  EXPECT_EQ(t.code, 0) << t.err;
  const Result once = run("compare " + kFx + "/mamf_records_h200_a.jsonl " + kFx + "/mamf_records_h200_b.jsonl --json");
  EXPECT_EQ(nlohmann::json::parse(t.out)["old"], nlohmann::json::parse(once.out)["old"]) << "the same shapes, counted once";
  const Result said = run("compare " + twice + " " + kFx + "/mamf_records_h200_b.jsonl");
  EXPECT_NE(said.out.find(twice + ":3: 2048x2048x4096 measured again (" + twice + ":2): the later one is kept"),
            std::string::npos) << said.out;
}

// A collective's job has 1 rank or more: a record or a context of 0 ranks (or more than any job
// has) is refused, not compared as a job whose bus bandwidth is 0.
TEST(SilentlyWrong, ACollectiveOfNoRanksIsRefused) {
  const std::string peer = slurp(kFx + "/nccl_peer_h200x2.jsonl");
  ASSERT_NE(peer.find("\"world_size\": 2"), std::string::npos);
  std::string records = slurp(kFx + "/nccl_records_h200x2_graph.jsonl");
  ASSERT_NE(records.find("\"size\":2,"), std::string::npos);
  records.replace(records.find("\"size\":2,"), 9, "\"size\":1.5,");
  expect_error("compare " + kFx + "/nccl_records_h200x2_plain.jsonl " + write_file("nccl_size_fraction.jsonl", records), 1,
               "\"world.size\" is 1.5");
  for (const std::string& ranks : {"0", "-1", "99999999999"}) {
    const std::string path = write_file("nccl_no_ranks.jsonl", std::regex_replace(peer, std::regex("\"world_size\": 2"),
                                                                                  "\"world_size\": " + ranks));
    const Result r = run("compare " + path + " " + kFx + "/nccl_records_h200x2_graph.jsonl");
    EXPECT_EQ(r.code, 1) << ranks << ": " << r.err;
    EXPECT_NE(r.err.find("\"world_size\""), std::string::npos) << ranks << ": " << r.err;
  }
}

// bench_flash_attn.py's header gives the shape its lines measured: a value there that is no count
// of heads is named as such, not called missing.
TEST(Messages, AnAttentionHeaderValueThatIsNoCountIsNamed) {
  const std::string log = slurp(kFx + "/attention_h200.log");
  for (const auto& [from, to, says] : {std::tuple{"nheads=32", "nheads=0", "gives nheads=0, not a whole number"},
                                       std::tuple{"head_dim=128", "head_dim=1e20", "gives head_dim=1e20, not a whole number"}}) {
    const std::string path = write_file("attention_header_value.log", replaced(log, from, to));
    expect_error("compare " + path + " " + kFx + "/attention_b200.log", 1, says);
  }
  expect_error("compare " + write_file("attention_header_none.log", replaced(log, " nheads=32", "")) + " " + kFx +
                   "/attention_b200.log", 1, "does not give nheads=, head_dim= and causal=");
}

// A figure no machine measures (a step of 1e308 ms, a peak of 1e308 GiB) is refused naming the
// line and the field, not turned into an interval of 1e305x or a fit of nan.
TEST(SilentlyWrong, AFigureBeyondAnyMeasurementIsRefused) {
  const std::string log = slurp(kFx + "/sweep_h200.log");
  for (const auto& [field, value] : {std::pair{"exec_time_ms", "\"1e308\""}, {"peak_mem_gib", "\"1e308\""}}) {
    const std::string path = write_file(fmt::format("absurd_{}.log", field),
                                        replaced_match(log, std::regex(fmt::format("\"{}\": \"[0-9.]+\"", field)),
                                                       fmt::format("\"{}\": {}", field, value)));
    expect_error(fmt::format("memfit {} --capacity-gib 130", path), 1, fmt::format("\"{}\" is 1e+308, beyond any measurement", field));
  }
  // bench_flash_attn.py's lines and our mamf records alike.
  const std::string attention = write_file("absurd_attention.log", replaced(slurp(kFx + "/attention_h200.log"),
                                                                           "\"fwd_tflops\": 435.0", "\"fwd_tflops\": 1e308"));
  const Result a = run(fmt::format("compare {} {}/attention_b200.log", attention, kFx));
  EXPECT_NE(a.err.find("\"fwd_tflops\" is 1e+308, beyond any measurement"), std::string::npos) << a.err;
  const std::string mamf = write_file("absurd_mamf.jsonl", replaced(slurp(kFx + "/mamf_records_h200_a.jsonl"),
                                                                   "\"median\":717.7418693199693", "\"median\":1e308"));
  const Result m = run(fmt::format("compare {} {}/mamf_records_h200_b.jsonl", mamf, kFx));
  EXPECT_NE(m.code, 0) << m.out;
  EXPECT_NE(m.err.find("tflops \"median\" is 1e+308"), std::string::npos) << m.err;
}

// A step or an out-of-memory record of zero tokens is refused naming the file, the line and the
// field, exit 1 as every other bad field, not a bare "sequence length must be positive" later.
TEST(SilentlyWrong, AZeroLengthIsRefusedWhereItIsWritten) {
  const std::string records = slurp(kFx + "/records_h200.jsonl");
  const std::string zero = write_file("zero_seqlen.jsonl", replaced(records, R"("seqlen": 4096)", R"("seqlen": 0)"));
  for (const std::string command : {"report " + zero + " -o " + fresh_folder("zero_report"), "memfit " + zero,
                                    "predict --to b200 " + zero}) {
    expect_error(command, 1, fmt::format("zero_seqlen.jsonl:{}: \"seqlen\" must be a whole number from 1 to 1e15, got 0",
                                         line_of(records, R"("seqlen": 4096)")));
  }
}

// A damaged line compare skips is said on stderr, naming file and line, not dropped in silence.
TEST(Messages, CompareSaysWhichLinesItSkipped) {
  const std::string damaged = write_file("attention_nan.log", replaced(slurp(kFx + "/attention_h200.log"),
                                                                      "\"fwd_tflops\": 435.0", "\"fwd_tflops\": NaN"));
  const Result r = run(fmt::format("compare {} {}/attention_b200.log", damaged, kFx));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: " + damaged + ":3: a damaged line skipped"), std::string::npos) << r.err;
}

// An empty or blank file given to a command is no log of any kind: every command says so with
// exit 2 (a suite's part emptied is a damaged folder, exit 1, tested with the suite).
TEST(Messages, AnEmptyFileIsNoLogInEveryCommand) {
  const std::string empty = write_file("empty_input.jsonl", ""), blank = write_file("blank_input.txt", "\n  \n\n");
  const std::string other = kFx + "/suite_h200_2l/sweep.jsonl";
  for (const std::string& f : {empty, blank}) {
    for (const std::string& command : {"history add --db " + fresh_db("empty_input") + " " + f, "decide " + f + " " + other,
                                       "compare " + f + " " + other, "memfit " + f, "predict --to b200 " + f}) {
      const Result r = run(command);
      EXPECT_EQ(r.code, 2) << command << ": " << r.err;
      EXPECT_NE(r.err.find(f), std::string::npos) << command << ": " << r.err;
    }
  }
}

// A printout of the whole model beside our 2-layer decomposition at the same length: bench_decompose.py's
// "everything else" against our buckets folded into it is another dense work (184.43 vs 23.63
// TFLOP): refused, not a 10x speedup of one GPU over itself.
TEST(SilentlyWrong, APrintoutOfAnotherDepthBesideOurBucketsIsRefused) {
  const std::string printout = write_file("printout_4k.txt",
      "# gpu=NVIDIA H200 backend=flash_attention_3 zero=0 gc=0 offload=0 liger=0 seq=4096 time_steps=10 profile_steps=5\n"
      "# wall step=430.0 ms   peak_mem=40.0 GiB   attention FLOP share=6.7%   attention wall share=7.0%   comm=0.0% of "
      "kernel time (overlapped, hidden in wall)\n"
      "attention(FA)      13.19 TFLOP  30.0 ms  439.8 TFLOPS  MFU 44.5%\n"
      "everything else    184.43 TFLOP  400.0 ms  461.1 TFLOPS  MFU 46.6%\n"
      "TOTAL              197.63 TFLOP  430.0 ms  459.6 TFLOPS  MFU 46.5%\n");
  const std::string both = "compare " + printout + " " + kFx + "/engine_llama_2l_4096.jsonl";
  expect_error(both, 2, "decompose steps of different work (everything else (the dense work): 184.43 vs 23.63 TFLOP");
  const Result forced = run(both + " --force");
  EXPECT_EQ(forced.code, 0) << forced.err;
  EXPECT_NE(forced.out.find("forced: different work: everything else (the dense work)"), std::string::npos) << forced.out;
  // A printout's FLOPs are Llama-3.1-8B's at its seq=, in compare, decide and report as in predict.
  const std::string relabelled = write_file("printout_relabelled.txt", replaced(slurp(kFx + "/decompose_h200.txt"), "seq=8192", "seq=4096"));
  const std::string b200 = write_file("printout_relabelled_b200.txt", replaced(slurp(kFx + "/decompose_b200.txt"), "seq=8192", "seq=4096"));
  for (const std::string& command : {"compare " + relabelled + " " + b200, "decide " + relabelled + " " + b200,
                                     "report " + relabelled + " " + b200 + " -o " + temp_path("relabelled_report")}) {
    expect_error(command, 1, relabelled + ": a step of 421.65 TFLOP is not llama-3.1-8b's work at 4096 tokens (197.63 TFLOP)");
  }
}

// A printout of two sequences a step (bs=2) beside our records of one: the batches each says are
// compared first, as between two printouts, before the work they imply.
TEST(SilentlyWrong, APrintoutOfAnotherBatchBesideOurRecordsIsRefused) {
  const std::string printout = write_file("printout_bs2_beside_records.txt",
      "# gpu=NVIDIA H200 backend=flash_attention_3 zero=0 gc=0 offload=0 liger=0 seq=4096 bs=2 time_steps=10 profile_steps=5\n"
      "# wall step=860.0 ms   peak_mem=40.0 GiB   attention FLOP share=6.7%   attention wall share=7.0%   comm=0.0% of "
      "kernel time (overlapped, hidden in wall)\n"
      "attention(FA)      26.38 TFLOP  60.0 ms  439.7 TFLOPS  MFU 44.5%\n"
      "everything else    368.86 TFLOP  800.0 ms  461.1 TFLOPS  MFU 46.6%\n"
      "TOTAL              395.26 TFLOP  860.0 ms  459.6 TFLOPS  MFU 46.5%\n");
  const std::string ours = kFx + "/engine_llama_2l_4096.jsonl";
  expect_error("compare " + printout + " " + ours, 2, "decompose steps of different batches (2 vs 1, old vs new)");
  expect_error("compare " + ours + " " + printout, 2, "decompose steps of different batches (1 vs 2, old vs new)");
  const Result forced = run("compare " + printout + " " + ours + " --force");
  EXPECT_EQ(forced.code, 0) << forced.err;
  EXPECT_NE(forced.out.find("batches 2 vs 1"), std::string::npos) << forced.out;
}

// Runs of other batches compared with --force: a step of twice the tokens in twice the time is
// the same speed per token, as cost and energy say; the header names both batches, and the batch
// is the workload's, not a software difference.
TEST(SilentlyWrong, RunsOfOtherBatchesAreComparedPerToken) {
  std::istringstream in(slurp(std::string(UB_DATA_DIR) + "/examples/example_b200_handwritten.log"));
  std::string text;
  for (std::string line; std::getline(in, line);) {
    for (size_t at; (at = line.find("batch_size=1")) != std::string::npos;) line.replace(at, 12, "batch_size=2");
    if (line.rfind("{", 0) == 0) {
      nlohmann::json step = nlohmann::json::parse(line);
      step["exec_time_ms"] = 2 * step["exec_time_ms"].get<double>();
      line = step.dump();
    }
    text += line + "\n";
  }
  const std::string h200 = std::string(UB_DATA_DIR) + "/examples/example_h200_handwritten.log";
  const std::string batch2 = write_file("b200_batch2.log", text);
  const Result plain = run("compare " + h200 + " " + std::string(UB_DATA_DIR) + "/examples/example_b200_handwritten.log --force --json");
  const Result forced = run("compare " + h200 + " " + batch2 + " --force --json");
  ASSERT_EQ(plain.code, 0) << plain.err;
  ASSERT_EQ(forced.code, 0) << forced.err;
  const nlohmann::json a = nlohmann::json::parse(plain.out), b = nlohmann::json::parse(forced.out);
  ASSERT_EQ(a["rows"].size(), b["rows"].size());
  for (size_t i = 0; i < a["rows"].size(); ++i) {
    if (a["rows"][i]["speedup"].is_null()) continue;
    EXPECT_NEAR(b["rows"][i]["speedup"].get<double>(), a["rows"][i]["speedup"].get<double>(), 1e-3) << i;
    EXPECT_NEAR(b["rows"][i]["wall_clock_ratio"].get<double>(), a["rows"][i]["wall_clock_ratio"].get<double>(), 1e-3) << i;
  }
  EXPECT_NE(b["warnings"].dump().find("forced: different batch sizes: 1 vs 2: speedup and wall clock are per token"),
            std::string::npos) << b["warnings"];
  EXPECT_EQ(b["stack"].dump().find("batch"), std::string::npos) << b["stack"];
  const Result text_page = run("compare " + h200 + " " + batch2 + " --force");
  EXPECT_NE(text_page.out.find("batch 1 (old) vs 2 (new) per GPU"), std::string::npos) << text_page.out;
  EXPECT_LT(text_page.out.find("FORCED: two workloads compared with --force"), text_page.out.find("Per sequence length"));
  // The report leads with it too, before its decision at a glance.
  const std::string folder = temp_path("batch2_report");
  std::filesystem::remove_all(folder);
  const Result page = run("report " + h200 + " " + batch2 + " --force -o " + folder);
  if (report_tools_missing(page)) GTEST_SKIP() << page.err;
  ASSERT_EQ(page.code, 0) << page.err;
  const std::string md = slurp(folder + "/report.md");
  ASSERT_NE(md.find("FORCED: two workloads compared with --force"), std::string::npos) << md;
  EXPECT_LT(md.find("FORCED: two workloads compared with --force"), md.find("Decision at a glance")) << md;
}

// Decompositions of steps of different lengths are not compared as one; --force compares them,
// saying the difference first (docs/compare.md).
TEST(SilentlyWrong, DecompositionsOfOtherLengthsAreNotCompared) {
  const std::string both = fmt::format("compare {0}/suite_h200_2l/decompose-short.jsonl {0}/suite_h200_2l/decompose-long.jsonl", kFx);
  expect_error(both, 2, "decompose steps of different lengths (2048 tokens vs 4096 tokens, old vs new): decompose both at "
                        "one length, or --force to compare them anyway");
  const Result forced = run(both + " --force --json");
  ASSERT_EQ(forced.code, 0) << forced.err;
  const nlohmann::json j = nlohmann::json::parse(forced.out);
  ASSERT_TRUE(j.contains("warnings")) << forced.out;
  EXPECT_EQ(j["warnings"][0], "forced: a different workload: lengths 2048 tokens vs 4096 tokens") << j["warnings"];
}

// Attention logs of different problems (heads, head dim, causal) are not compared as one.
TEST(SilentlyWrong, AttentionOfAnotherShapeIsNotCompared) {
  const std::string other = write_file("attention_other_shape.log",
                                       replaced(slurp(kFx + "/attention_b200.log"), "nheads_kv=8", "nheads_kv=4"));
  expect_error(fmt::format("compare {}/attention_h200.log {}", kFx, other), 2,
               "measured different attention problems (nheads_kv 8 vs 4, old vs new)");
}

TEST(SilentlyWrong, TheBatchOfAContextRecordIsRangeChecked) {
  const std::string records = slurp(kFx + "/records_h200.jsonl");
  const std::string batch = R"("batch": 1, "dtype")";
  for (const char* bad : {"9e18", "9000000000000000000", "-2", "0", "1.5", "\"4\""}) {
    const std::string path = write_file("batch.jsonl", replaced(records, batch, fmt::format(R"("batch": {}, "dtype")", bad)));
    expect_error(fmt::format("memfit {} --capacity-gib 130", path), 1, "\"batch\" must be a whole number from 1 to 1000000");
  }
  // Two sequences a step is in range, and read: twice the work in the same time is then past the
  // GPU's matmul ceiling, which is said instead.
  const std::string ok = write_file("batch_ok.jsonl", replaced(records, batch, R"("batch": 2, "dtype")"));
  expect_error(fmt::format("memfit {} --capacity-gib 130", ok), 1, "past the h200-sxm's matmul ceiling");
}

TEST(SilentlyWrong, AMamfShapeLineThatCannotBeAMeasurementIsLeftOutWithAWarning) {
  const std::string log = slurp(kFx + "/mamf_finder_h200.txt");
  std::string bad = replaced(log, "741.3(mean)", "741.3e9(mean)");  // does not read as a shape line
  bad = replaced(bad, "@ 4096x2048x13312", "@ 0x2048x13312");       // reads, and is impossible
  const std::string path = write_file("mamf_bad.txt", bad);
  const Result r = run(fmt::format("compare {} {}/mamf_finder_h200.txt --json", path, kFx));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(fmt::format("{}:{}: a shape line left out, damaged or impossible (a side of 0x2048x13312 is "
                                   "zero); 2 such lines in all", path, line_of(log, "@ 4096x2048x13312"))),
            std::string::npos)
      << r.out;
}

// ---- Exit codes and messages ----

// An option or argument given an empty value is a usage error naming it, never "not given" (an
// empty --db would have written to the default database).
// A line break in a name read from a file (a kernel's) is written out, in text and markdown
// alike: it cannot start a line of its own ("upgradebench: error: ..."), nor a markdown emphasis.
TEST(Messages, ALineBreakFromAFileStartsNoLine) {
  const std::string trace = write_file("forged_kernel_name.json",
                                       replaced(slurp(kFx + "/trace_kineto_small.json"), "my_custom_kernel",
                                                "k\\nupgradebench: error: forged **bold**"));
  for (const char* format : {"", " --md"}) {
    const Result r = run("decompose " + trace + format);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out.find("\nupgradebench: error"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("k\\x0aupgradebench: error: forged"), std::string::npos) << r.out;
    if (std::string(format) == " --md") EXPECT_NE(r.out.find("forged \\*\\*bold\\*\\*"), std::string::npos) << r.out;
  }
}

TEST(Messages, AnEmptyValueIsAUsageErrorNamingTheOption) {
  const std::string records = kFx + "/train_records_h200_plain_8k.jsonl";
  const std::string db = fresh_db("empty_values");
  for (const auto& [args, option] : {std::pair{"history add --db '' " + records, "--db"},
                                     {"flops --layers ''", "--layers"},
                                     {"memfit " + records + " --capacity-gib ''", "--capacity-gib"},
                                     {"compare " + records + " " + records + " --tokens ''", "--tokens"},
                                     {"decide --need-seqlen '' " + kFx + "/suite_h200_2l --to h100", "--need-seqlen"},
                                     {"predict " + kFx + "/sweep_h200.log --to b200 --seqlens ''", "--seqlens"},
                                     {"history list --db " + db + " --gpu ''", "--gpu"}}) {
    expect_error(args, 2, std::string(option) + ": an empty value");
  }
  // An option of several names says them all: the one typed is among them.
  expect_error("predict " + kFx + "/sweep_h200.log --to b200 --seqlen ''", 2,
               "--seqlens: an empty value for --seqlens,--seqlen (give one, or leave the option out)");
  expect_error("history list --db ' '", 2, "--db: a blank value (give one, or leave the option out)");
  // A number option takes decimal: not hexadecimal, binary, nor padded with blanks.
  for (const std::string v : {"0x10", "0b11", "' 3'", "'3 '"}) expect_error("flops --layers " + v, 2, "is not a decimal number");
  EXPECT_EQ(run("flops --layers 3").code, 0);
  // An unsigned option (the seed) takes 0 to 2^64 - 1: a -1 would wrap, 2^64 would not fit.
  const std::string plan = "suite --out " + temp_path("seed_plan") + " --dry-run --seqlens 4k --layers 2 --seed ";
  expect_error(plan + "-1", 2, "--seed: '-1' is not a whole number of 0 or more");
  expect_error(plan + "18446744073709551616", 2, "--seed: '18446744073709551616' is past the largest it takes");
  EXPECT_EQ(run(plan + "18446744073709551615").code, 0);
  // A signed whole option past 64 bits is quoted as given, not as the clamp.
  expect_error("flops --layers 99999999999999999999", 2, "--layers: '99999999999999999999' is past the largest it takes");
  expect_error("flops --layers -99999999999999999999", 2,
               "--layers: '-99999999999999999999' is past the smallest it takes, -9223372036854775808");
}

TEST(Messages, TheJobsOptionsAreUsageErrors) {
  for (const char* bad : {"--gpus 0", "--gpus -1", "--gpus abc", "--gpus 99999", "--rendezvous-timeout -1",
                          "--rendezvous-timeout nan", "--rendezvous-timeout 0", "--rendezvous-timeout inf"}) {
    const std::string option = std::string(bad).substr(0, std::string(bad).find(' '));
    expect_error(std::string("nccl ") + bad, 2, option);
    expect_error(std::string("train ") + bad, 2, option);
  }
}

TEST(Messages, DamagedAndDuplicateLinesSkippedAreWarnedAbout) {
  const std::string records = slurp(kFx + "/records_h200.jsonl");
  const size_t second_line = records.find('\n') + 1;
  const std::string damaged = write_file("damaged.jsonl", records.substr(0, second_line) + "{\"type\": \"train_st\n" +
                                                              records.substr(second_line));
  for (const std::string& cmd : {"memfit " + damaged + " --capacity-gib 130",
                                "history add --db " + fresh_db("damaged") + " " + damaged}) {
    const Result r = run(cmd);
    ASSERT_EQ(r.code, 0) << cmd << "\n" << r.err;
    EXPECT_NE(r.err.find("upgradebench: warning: " + damaged + ":2"), std::string::npos) << cmd << "\n" << r.err;
  }
  // A MAMF records file is read twice by history add (the first GPU's figures, every GPU's
  // shapes): its damaged line is said once.
  const std::string mamf = slurp(kFx + "/mamf_records_h200_a.jsonl");
  const size_t mamf_second = mamf.find('\n') + 1;
  const std::string mamf_damaged = write_file("damaged_mamf.jsonl", mamf.substr(0, mamf_second) + "{\"type\": \"mam\n" +
                                                                     mamf.substr(mamf_second));
  const Result added = run("history add --db " + fresh_db("damaged_mamf") + " " + mamf_damaged);
  ASSERT_EQ(added.code, 0) << added.err;
  const std::string damaged_line = mamf_damaged + ":2: a damaged line skipped";
  EXPECT_NE(added.err.find(damaged_line), std::string::npos) << added.err;
  EXPECT_EQ(added.err.find(damaged_line, added.err.find(damaged_line) + 1), std::string::npos) << "said twice: " << added.err;
  // A length measured again (a sweep appended to its log twice): the later block is read, and said so.
  const std::string log = slurp(kFx + "/sweep_h200.log");
  const size_t first = log.find("===== seq_len="), second = log.find("===== seq_len=", first + 1);
  const std::string twice = write_file("twice.log", log + log.substr(first, second - first));
  for (const std::string& cmd : {"memfit " + twice + " --capacity-gib 130",
                                "history add --db " + fresh_db("duplicate") + " " + twice}) {
    const Result r = run(cmd);
    ASSERT_EQ(r.code, 0) << cmd << "\n" << r.err;
    EXPECT_NE(r.err.find(fmt::format("upgradebench: warning: {}:{}: seq_len=8192 measured again", twice,
                                     std::count(log.begin(), log.end(), '\n') + 1)),
              std::string::npos)
        << cmd << "\n" << r.err;
  }
}

// One setting's steps peak alike: a length whose steps' peaks differ widely (runs of several
// settings appended to one log, or memory growing step by step) is warned about, naming both lines.
TEST(Messages, WidelyVaryingPeaksOfOneLengthAreWarnedAbout) {
  const std::string log = slurp(kFx + "/sweep_h200.log");
  const std::string line8 = R"({"step": 3, "warmup": false, "exec_time_ms": "3000.00", "tflops": "140.55", "peak_mem_gib": "16.3"})";
  ASSERT_NE(log.find(line8), std::string::npos);
  std::string grown = log;
  grown.replace(grown.find(line8), line8.size(),
                R"({"step": 3, "warmup": false, "exec_time_ms": "3000.00", "tflops": "140.55", "peak_mem_gib": "24.9"})");
  const std::string path = write_file("peaks_vary.log", grown);
  const Result r = run("memfit " + path + " --capacity-gib 130");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("upgradebench: warning: " + path + ":8: seqlen "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("peak memory varies from 16.30 GiB (line 5) to 24.90 GiB"), std::string::npos) << r.err;
  // Steps that peak alike, as the fixture's do, give no such warning.
  const Result same = run("memfit " + kFx + "/sweep_h200.log --capacity-gib 130");
  ASSERT_EQ(same.code, 0) << same.err;
  EXPECT_EQ(same.err.find("peak memory varies"), std::string::npos) << same.err;
}

// Junk between records is named line by line up to a bound, then in one line: the warnings of a
// stream of junk do not grow without end.
TEST(Bounds, DamagedLinesAreNamedUpToABound) {
  const std::string records = slurp(kFx + "/records_h200.jsonl");
  const size_t second_line = records.find('\n') + 1;
  std::string junk;
  for (int i = 0; i < 1000; ++i) junk += "y\n";
  const std::string damaged = write_file("junk_inside.jsonl", records.substr(0, second_line) + junk +
                                                                  records.substr(second_line));
  const Result r = run("memfit " + damaged + " --capacity-gib 130");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find(damaged + ":21: a damaged line skipped ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(damaged + ":22: a damaged line skipped, and every later one without a warning"),
            std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(damaged + ":23:"), std::string::npos) << r.err;
}

TEST(Messages, ControlCharactersFromAFileAreEscapedInTheError) {
  const std::string path = write_file("escape.log", "===== seq_len=\x1b]0;owned\x07\x1b[2J =====\n");
  const Result r = run("memfit " + path + " --capacity-gib 130");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << "an escape sequence reached the terminal";
  EXPECT_EQ(r.err.find('\x07'), std::string::npos);
  EXPECT_NE(r.err.find("\\x1b]0;owned\\x07\\x1b[2J"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// On stdout too: a GPU name from a log in report's summary, a file name in a warning.
TEST(Messages, TextFromFilesOnStdoutDrivesNoTerminalAndBreaksNoLine) {
  std::string log = slurp(kFx + "/sweep_h200.log");
  for (size_t at; (at = log.find("gpu=NVIDIA H200 ")) != std::string::npos;) {
    log.replace(at, 16, "gpu=NVIDIA H200\x1b]0;owned\x07\x1b[2J ");
  }
  const std::string escaped = write_file("escape_gpu.log", log);
  const Result report = run("report " + escaped + " -o " + fresh_folder("escape_report"));
  ASSERT_EQ(report.code, 0) << report.err;
  EXPECT_NE(report.out.find("NVIDIA H200\\x1b]0;owned\\x07\\x1b[2J"), std::string::npos) << report.out;  // escaped, not dropped
  EXPECT_EQ(report.out.find('\x1b'), std::string::npos) << report.out;
  EXPECT_EQ(report.out.find('\x07'), std::string::npos) << report.out;
  // Nor in the pages: a provenance line's escape sequences are written as \xNN there too.
  const std::string provenance = write_file("escape_provenance.log", "# provenance: hand-written \x1b[31mRED\x1b]0;t\x07\n" +
                                                                          slurp(kFx + "/sweep_h200.log"));
  const std::string pages = fresh_folder("escape_provenance_report");
  ASSERT_EQ(run("report " + provenance + " -o " + pages).code, 0);
  for (const char* page : {"/report.html", "/report.md"}) {
    const std::string text = slurp(pages + page);
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << page;
    EXPECT_EQ(text.find('\x07'), std::string::npos) << page;
  }
  const std::string named = write_file("two\nlines.log", slurp(kFx + "/sweep_h200.log"));
  const std::string printout = write_file("two\nlines.txt", slurp(kFx + "/decompose_h200.txt"));
  for (const std::string& cmd : {"compare '" + named + "' " + kFx + "/sweep_b200.log",
                                 "predict '" + named + "' --to b200 --model llama-3.1-8b",
                                 "compare '" + printout + "' " + kFx + "/decompose_b200.txt", "predict '" + printout + "' --to b200"}) {
    const Result r = run(cmd);
    ASSERT_EQ(r.code, 0) << cmd << "\n" << r.err;
    EXPECT_EQ(r.out.find("\nlines."), std::string::npos) << cmd << "\n" << r.out;
    EXPECT_NE(r.out.find("two\\x0alines."), std::string::npos) << cmd << "\n" << r.out;
  }
}

TEST(Messages, AKernelNameThatIsNotUtf8GivesValidJson) {
  const std::string trace = slurp(kFx + "/trace_kineto_small.json");
  const std::regex first_kernel_name(R"(("cat": "kernel", "name": ")[^"]*)");
  ASSERT_TRUE(std::regex_search(trace, first_kernel_name));
  const std::string path = write_file("bad_utf8.json", replaced_match(trace, first_kernel_name, "bad\xff\xc0name"));
  const std::string records = temp_path("bad_utf8_records.jsonl");
  fs::remove(records);
  const Result r = run(fmt::format("decompose {} --json --out {}", path, records));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_NE(j.dump().find("bad\xef\xbf\xbd\xef\xbf\xbdname"), std::string::npos) << "the name, its bad bytes replaced";
  std::ifstream in(records);
  size_t lines = 0;
  for (std::string line; std::getline(in, line); ++lines) EXPECT_TRUE(nlohmann::json::accept(line)) << line;
  EXPECT_GE(lines, 2u) << "the context and the decomposition";
}

// ---- Valid input read ----

TEST(ValidInput, AByteOrderMarkIsNotPartOfTheFirstLine) {
  for (const std::string name : {"records_h200.jsonl", "sweep_h200.log"}) {
    const std::string path = write_file("bom_" + name, "\xEF\xBB\xBF" + slurp(kFx + "/" + name));
    const Result with = run("memfit " + path + " --capacity-gib 130 --json");
    const Result without = run("memfit " + kFx + "/" + name + " --capacity-gib 130 --json");
    ASSERT_EQ(with.code, 0) << with.err;
    EXPECT_EQ(nlohmann::json::parse(with.out)["max_seqlen"], nlohmann::json::parse(without.out)["max_seqlen"]);
  }
  // A torch.profiler trace too: the same decomposition with the mark as without.
  const std::string trace = write_file("bom_trace.json", "\xEF\xBB\xBF" + slurp(kFx + "/trace_kineto_small.json"));
  const Result with = run("decompose " + trace + " --json");
  const Result without = run("decompose " + kFx + "/trace_kineto_small.json --json");
  ASSERT_EQ(with.code, 0) << with.err;
  const auto a = nlohmann::json::parse(with.out)[0], b = nlohmann::json::parse(without.out)[0];
  EXPECT_EQ(a["buckets"], b["buckets"]);
  EXPECT_EQ(a["step_ms"], b["step_ms"]);
}

// A JSON file read whole (a model config, kernel classes, the catalog) is bounded: a device given
// as one is refused, not read until memory runs out; so is a list of sizes that would not end.
TEST(Messages, AJsonErrorIsInWordsWithoutTheLibrarysTag) {
  const std::string config = write_file("not_json_config.json", "root:x:0:0:root:/root:/bin/bash\n");
  const Result r = run("flops --model " + config);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("not valid JSON: parse error at line 1"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("json.exception"), std::string::npos) << r.err;
}

// Numbers are decimal (a price of "0x10" is not 16); a report folder named through a link with
// a trailing slash is still a link; memfit --for names at least one GPU, each once.
TEST(Messages, ValuesAreWhatTheySayOrRefused) {
  expect_error(fmt::format("compare {0}/sweep_h200.log {0}/sweep_b200.log --force --price-old 0x10 --price-new 6", kFx), 2,
               "--price-old: '0x10' is not a number");
  const fs::path target = fs::path(temp_path("link_target"));
  fs::remove_all(target);
  fs::create_directories(target);
  const fs::path link = fs::path(temp_path("link_to_folder"));
  fs::remove(link);
  fs::create_directory_symlink(target, link);
  expect_error("report " + kFx + "/records_h200.jsonl -o " + link.string() + "/", 2, "a symlink where the report's folder goes");
  EXPECT_TRUE(fs::is_empty(target));
  expect_error("memfit " + kFx + "/levers/none.jsonl --for ,", 2, "--for ',': no GPU named");
}

TEST(Bounds, AJsonFileThatDoesNotEndIsRefused) {
  expect_error("flops --model /dev/zero", 2, "/dev/zero: not a file (a pipe, a device or a folder): a model's config.json");
  expect_error("decompose " + kFx + "/trace_kineto_small.json --classes /dev/zero", 2, "/dev/zero: not a file");
  // A pipe where a JSON file is read would block its opening: refused before it is opened.
  const std::string fifo = temp_path("json_fifo");
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_error("flops --model " + fifo + " --seqlen 8k", 2, "not a file (a pipe, a device or a folder)");
  expect_error("decompose " + kFx + "/trace_kineto_small.json --classes " + fifo, 2, "not a file");
  const std::string data = temp_path("data_with_fifo");
  fs::remove_all(data);
  fs::copy(std::string(UB_DATA_DIR), data, fs::copy_options::recursive);
  fs::remove(data + "/accelerators.json");
  ASSERT_EQ(::mkfifo((data + "/accelerators.json").c_str(), 0600), 0);
  expect_error("--data-dir " + data + " specs", 2, "accelerators.json: not a file");
  expect_error("nccl -b 1 -e 4G -f 1.00000001", 2, "give a larger factor");
}

// A log given as a named pipe is read once its writer comes; a pipe no program writes to is
// refused after a wait, not waited on for ever.
TEST(Bounds, ALogThroughANamedPipeWaitsForItsWriterAWhile) {
  const std::string fifo = temp_path("log_fifo");
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] {  // a second later, as a process started after the command would
    std::this_thread::sleep_for(std::chrono::seconds(1));
    // Opened without waiting for a reader, tried for 30 s: a command that never opens the pipe
    // fails the test instead of hanging it.
    int fd = -1;
    for (int i = 0; i < 300 && fd < 0; ++i) {
      fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
      if (fd < 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (fd < 0) return;
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    const std::string text = slurp(kFx + "/records_h200.jsonl");
    for (size_t at = 0; at < text.size();) {
      const ssize_t n = ::write(fd, text.data() + at, text.size() - at);
      if (n <= 0) break;
      at += static_cast<size_t>(n);
    }
    ::close(fd);
  });
  const Result late = run("memfit " + fifo);
  writer.join();
  EXPECT_EQ(late.code, 0) << late.err;
  const auto start = std::chrono::steady_clock::now();
  expect_error("memfit " + fifo, 2, "log_fifo: a named pipe no program wrote to in 20 s");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 40);
  fs::remove(fifo);
}

// Permissions do not hold back root: as root, the reading and writing run as nobody.
TEST(ValidInput, ADatabaseTheUserMayReadButNotWriteOpensForReading) {
  const bool root = ::geteuid() == 0;
  if (root && std::system("command -v runuser > /dev/null && id nobody > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "root, and no runuser or no user nobody to read as";
  }
  const auto as_user = [&](const std::string& args) { return root ? run_as_nobody(args) : run(args); };
  const auto refused = [&](const std::string& args, const std::string& says) {
    const Result r = as_user(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line expected: " << r.err;
  };
  const std::string db = fresh_db("read_only");
  ASSERT_EQ(run("history add --db " + db + " " + kFx + "/sweep_h200.log").code, 0);
  ASSERT_EQ(::chmod(db.c_str(), 0444), 0);
  const Result list = as_user("history list --json --db " + db);
  EXPECT_EQ(list.code, 0) << list.err;
  EXPECT_EQ(nlohmann::json::parse(list.out)["runs"].size(), 1u);
  EXPECT_EQ(as_user("history trend train.tflops --at 8k --db " + db).code, 0);
  refused("history add --db " + db + " " + kFx + "/sweep_b200.log", "permission denied: this user may read");
  ASSERT_EQ(::chmod(db.c_str(), 0), 0);
  refused("history list --db " + db, "permission denied: this user may not read");
  ::chmod(db.c_str(), 0644);
}

// A database this user may read, in a folder it may not write (where SQLite would put the WAL
// index): read immutable. As root, the reading runs as nobody.
TEST(ValidInput, ADatabaseInAFolderTheUserMayNotWriteIsRead) {
  const bool root = ::geteuid() == 0;
  if (root && std::system("command -v runuser > /dev/null && id nobody > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "root, and no runuser or no user nobody to read as";
  }
  const std::string dir = temp_path("read_only_folder");
  fs::create_directories(dir);
  ::chmod(dir.c_str(), 0755);
  const std::string db = dir + "/history.sqlite";
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db + suffix);
  ASSERT_EQ(run("history add --db " + db + " " + kFx + "/sweep_h200.log").code, 0);
  for (const char* suffix : {"-wal", "-shm"}) fs::remove(db + suffix);  // as a copy of the database alone has none
  ::chmod(db.c_str(), 0444);
  ::chmod(dir.c_str(), root ? 0755 : 0555);
  // Root reads whatever the permissions say: the user nobody reads for it.
  const Result list = root ? run_as_nobody("history list --json --db " + db) : run("history list --json --db " + db);
  ::chmod(dir.c_str(), 0755);
  ::chmod(db.c_str(), 0644);
  ASSERT_EQ(list.code, 0) << list.err;
  EXPECT_EQ(nlohmann::json::parse(list.out)["runs"].size(), 1u);
}

// A team's database in a folder everyone may write (mode 1777): a reader who may not write the
// file leaves no journal of its own beside it, which its owner could not write through; a journal
// another user left is named with its owner when adding.
TEST(ValidInput, AReaderLeavesNoJournalBesideAnothersDatabase) {
  if (::geteuid() != 0 || std::system("command -v runuser > /dev/null && id nobody > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "needs root and the user nobody: two users, one reading the other's database";
  }
  const std::string dir = temp_path("shared_history");
  fs::remove_all(dir);
  fs::create_directories(dir);
  ::chmod(dir.c_str(), 01777);
  const std::string db = dir + "/team.sqlite";
  ASSERT_EQ(run("history add --db " + db + " " + kFx + "/sweep_h200.log").code, 0);
  for (const char* suffix : {"-wal", "-shm"}) fs::remove(db + suffix);  // its owner closed it
  ::chmod(db.c_str(), 0644);
  const Result list = run_as_nobody("history list --json --db " + db);
  ASSERT_EQ(list.code, 0) << list.err;
  EXPECT_EQ(nlohmann::json::parse(list.out)["runs"].size(), 1u);
  for (const char* suffix : {"-wal", "-shm"}) EXPECT_FALSE(fs::exists(db + suffix)) << suffix << " left by the reader";
  // The other way round: nobody's database, and a journal root left that nobody may not write.
  const std::string own = dir + "/own.sqlite";
  ASSERT_EQ(run_as_nobody("history add --db " + own + " " + kFx + "/sweep_h200.log").code, 0);
  std::ofstream(own + "-shm") << "";
  ::chmod((own + "-shm").c_str(), 0644);
  const Result add = run_as_nobody("history add --db " + own + " " + kFx + "/sweep_b200.log");
  EXPECT_EQ(add.code, 2) << add.err;
  EXPECT_NE(add.err.find("permission denied: its journal " + own + "-shm belongs to user root"), std::string::npos) << add.err;
  EXPECT_EQ(std::count(add.err.begin(), add.err.end(), '\n'), 1) << add.err;
  fs::remove_all(dir);
}

// history add stopped by a signal (here while it waits on a pipe nobody writes) says which file was
// not added and that the ones before it were; they are in the database.
TEST(ValidInput, AnInterruptedHistoryAddSaysWhatWasKept) {
  const std::string db = fresh_db("interrupted_add");
  const std::string fifo = temp_path("add_fifo");
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string err = temp_path("interrupted_add_err.txt");
  const Result r = capture(fmt::format("{} history add --db {} {}/records_h200.jsonl {} 2>{} & pid=$!; sleep 1; "
                                       "kill -TERM $pid; wait $pid", UB_BINARY, db, kFx, fifo, err));
  EXPECT_EQ(r.code, 128 + SIGTERM);
  const std::string said = slurp(err);
  EXPECT_EQ(said.rfind("upgradebench: interrupted: " + fifo + " not added (its transaction is rolled back); 1 file(s) "
                       "before it were", 0), 0u) << said;
  EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 1) << "one line: " << said;
  const Result list = run("history list --json --db " + db);
  ASSERT_EQ(list.code, 0) << list.err;
  EXPECT_EQ(nlohmann::json::parse(list.out)["runs"].size(), 1u) << list.out;
  fs::remove(fifo);
}

// The reading commands on a database this user may write leave nothing beside it: a -wal or -shm
// left there would be the reader's, in the way of a team member who writes the database next.
TEST(ValidInput, ReadingOnesOwnDatabaseLeavesNoJournal) {
  const std::string db = fresh_db("read_own");
  ASSERT_EQ(run("history add --db " + db + " " + kFx + "/records_h200.jsonl").code, 0);
  for (const char* suffix : {"-wal", "-shm"}) ASSERT_FALSE(fs::exists(db + suffix)) << suffix << " left by history add";
  for (const std::string command : {"history list", "history show 1", "history metrics", "history trend train.step_ms --at 4096", "history fleet train.step_ms --at 4096"}) {
    const Result r = run(command + " --db " + db);
    EXPECT_EQ(r.code, 0) << command << ": " << r.err;
    for (const char* suffix : {"-wal", "-shm"}) EXPECT_FALSE(fs::exists(db + suffix)) << suffix << " left by " << command;
  }
  // Read, never written: adding the same file again finds it stored.
  EXPECT_NE(run("history add --db " + db + " " + kFx + "/records_h200.jsonl").out.find("already stored"), std::string::npos);
}

// Two reports into one folder at once would leave one's page beside the other's charts: while one
// writes it (here: this test holds the folder's lock), the other is refused and writes nothing.
TEST(Clobbering, TwoReportsNeverWriteOneFolderAtOnce) {
  const std::string dir = fresh_folder("report_in_use");
  fs::create_directories(dir);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  const Result busy = run("report " + kFx + "/records_h200.jsonl -o " + dir);
  EXPECT_EQ(busy.code, 2) << busy.err;
  EXPECT_NE(busy.err.find("another upgradebench report is writing this folder now"), std::string::npos) << busy.err;
  EXPECT_TRUE(fs::is_empty(dir)) << "the refused report wrote into the folder";
  ::close(fd);
  const Result free = run("report " + kFx + "/records_h200.jsonl -o " + dir);
  if (report_tools_missing(free)) GTEST_SKIP() << free.err;
  EXPECT_EQ(free.code, 0) << free.err;
}

// A password never reaches a message: as libpq reads it from a query key written with a percent
// escape ("pass%77ord"), and in libpq's keyword=value form, which is no file's name either (it was
// created as an SQLite file named after the password).
TEST(Clobbering, APasswordInTheAddressIsNeverPrintedNorAFilesName) {
  int port = 0;  // a port nobody listens at: the connection is refused
  {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    socklen_t len = sizeof addr;
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port = ntohs(addr.sin_port);
    ::close(fd);
  }
  const Result encoded = run(fmt::format("history list --db 'postgresql://pw@127.0.0.1:{}/h?pass%77ord=Hunter2&sslmode=disable'", port));
  if (encoded.err.find("libpq.so.5 is not installed") != std::string::npos) GTEST_SKIP() << encoded.err;
  EXPECT_EQ(encoded.code, 2) << encoded.err;
  EXPECT_EQ(encoded.err.find("Hunter2"), std::string::npos) << encoded.err;
  EXPECT_NE(encoded.err.find("pass%77ord=***&sslmode=disable"), std::string::npos) << encoded.err;
  const std::string dir = fresh_folder("keyword_address");
  fs::create_directories(dir);
  const std::string keywords = "host=127.0.0.1 port=5432 user=pw password=Hunter2 dbname=h";
  const Result add = run("history add --db '" + keywords + "' " + kFx + "/records_h200.jsonl", dir);
  EXPECT_EQ(add.code, 2) << add.err;
  EXPECT_NE(add.err.find("a libpq keyword=value connection string"), std::string::npos) << add.err;
  EXPECT_EQ(add.err.find("Hunter2"), std::string::npos) << add.err;
  EXPECT_EQ(add.out.find("Hunter2"), std::string::npos) << add.out;
  EXPECT_TRUE(fs::is_empty(dir)) << "a file was created";
  // Whichever of libpq's keywords comes first.
  for (const std::string other : {"target_session_attrs=any host=h password=Hunter2", "sslrootcert=/x host=h dbname=h"}) {
    const Result r = run("history add --db '" + other + "' " + kFx + "/records_h200.jsonl", dir);
    EXPECT_EQ(r.code, 2) << other << ": " << r.err;
    EXPECT_TRUE(fs::is_empty(dir)) << other << ": a file was created";
  }
}

TEST(ValidInput, AReportFolderNamedWithANewlineGetsItsFiles) {
  const std::string dir = temp_path("report\nfolder");
  fs::remove_all(dir);
  ::setenv("UB_TEST_REPORT_DIR", dir.c_str(), 1);
  const Result r = run("report " + kFx + "/records_h200.jsonl -o \"$UB_TEST_REPORT_DIR\"");
  if (report_tools_missing(r)) GTEST_SKIP() << r.err;
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("\x89PNG"), std::string::npos) << "a chart went to stdout";
  EXPECT_TRUE(fs::exists(fs::path(dir) / "report.html"));
  size_t pngs = 0;
  for (const auto& e : fs::directory_iterator(fs::path(dir) / "charts")) pngs += e.path().extension() == ".png";
  EXPECT_GT(pngs, 0u);
  fs::remove_all(dir);
}

// A numbered step annotated twice (two traces joined, an edit) would count twice: refused naming
// it. Names without a number (a record_function("train_step") each iteration) repeat by design.
TEST(SilentlyWrong, AStepNumberAnnotatedTwiceIsRefused) {
  const std::string trace = slurp(kFx + "/trace_kineto_small.json");
  const std::string twice = write_file("step_twice.json", replaced(trace, R"("name": "ProfilerStep#2")", R"("name": "ProfilerStep#1")"));
  expect_error("decompose " + twice, 1, "step ProfilerStep#1 is annotated twice");
  // The number as a number: #01 is step 1.
  const std::string leading_zero =
      write_file("step_01.json", replaced(trace, R"("name": "ProfilerStep#2")", R"("name": "ProfilerStep#01")"));
  expect_error("decompose " + leading_zero, 1, R"(step ProfilerStep#1 is annotated twice ("ProfilerStep#1" at)");
  const std::string unnumbered =
      write_file("step_unnumbered.json", std::regex_replace(trace, std::regex(R"re("ProfilerStep#[0-9]+")re"), R"("train_step")"));
  const Result r = run("decompose --step-name ^train_step$ " + unnumbered);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Steps: 3 annotations matching \"^train_step$\" (host side)"), std::string::npos) << r.out;
}

// A memory fit that cannot be one workload's names the file, in every command that fits memory.
TEST(Messages, AMemoryThatFallsWithLengthNamesItsFile) {
  std::string text = slurp(kFx + "/suite_h200_2l/sweep.jsonl");
  const std::string from = "27.252408981323242", to = "12.252408981323242";
  for (size_t at; (at = text.find(from)) != std::string::npos;) text.replace(at, from.size(), to);
  const std::string path = write_file("memory_falls.jsonl", text);
  fs::remove_all(temp_path("memory_falls_report"));
  for (const std::string& cmd : {"report " + path + " -o " + fresh_folder("memory_falls_report"), "memfit " + path}) {
    expect_error(cmd, 1, path + ": peak memory falls as the tokens grow");
  }
}

// Host-side steps that hold none of the GPU's work (an hour off its clock) are no steps of it: the
// GPU side's annotations are used, and said; annotations that are not complete events are said.
TEST(SilentlyWrong, StepsThatHoldNoGpuWorkAreNotAStepOfIdle) {
  const std::string trace = slurp(kFx + "/trace_kineto_small.json");
  const std::string& far = trace;
  const std::regex host_step(R"re(("cat": "user_annotation", "name": "ProfilerStep#[0-9]+", "pid": [0-9]+, "tid": [0-9]+, "ts": )([0-9]+))re");
  std::string shifted;
  auto from = far.cbegin();
  for (std::sregex_iterator m(far.begin(), far.end(), host_step), end; m != end; ++m) {
    shifted.append(from, (*m)[0].first).append((*m)[1].str()).append(std::to_string(std::stoll((*m)[2].str()) + 3600000000LL));
    from = (*m)[0].second;
  }
  shifted.append(from, far.cend());
  ASSERT_NE(shifted, trace) << "no host-side step annotation found to move";
  const Result r = run("decompose " + write_file("host_steps_far.json", shifted));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("(GPU side: the host side's hold none of the GPU's work)"), std::string::npos) << r.out;
  const std::string instant = write_file("step_instant.json", replaced(trace, R"("ph": "X", "cat": "user_annotation")",
                                                                           R"("ph": "i", "cat": "user_annotation")"));
  const Result i = run("decompose " + instant);
  ASSERT_EQ(i.code, 0) << i.err;
  EXPECT_NE(i.out.find("1 annotation event(s) not complete"), std::string::npos) << i.out;
  // Every step an instant: no step is read, and the error says why.
  std::string all_instants = trace;
  for (size_t at; (at = all_instants.find(R"("ph": "X", "cat": "user_annotation")")) != std::string::npos;) {
    all_instants.replace(at, 9, R"("ph": "i")");
  }
  for (size_t at; (at = all_instants.find(R"("ph": "X", "cat": "gpu_user_annotation")")) != std::string::npos;) {
    all_instants.replace(at, 9, R"("ph": "i")");
  }
  expect_error("decompose " + write_file("steps_all_instants.json", all_instants), 1,
               "are begin/end pairs or instants, which are not read as steps");
}

// ---- Bounded cost ----

// A trace of `steps` ProfilerStep annotations, each with one kernel inside it.
std::string steps_trace(size_t steps) {
  const std::string path = temp_path(fmt::format("steps_{}.json", steps));
  std::ofstream out(path);
  out << R"({"deviceProperties": [{"id": 0, "name": "NVIDIA H200"}], "traceEvents": [)" << "\n";
  for (size_t i = 0; i < steps; ++i) {
    const double t = 1000.0 + static_cast<double>(i) * 100;
    out << fmt::format(R"({{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{}", "ts": {}, "dur": 90}},)", i, t)
        << "\n"
        << fmt::format(R"({{"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16", "ts": {}, "dur": 50, "args": {{"device": 0, "stream": 7}}}}{})",
                       t + 10, i + 1 == steps ? "" : ",")
        << "\n";
  }
  out << "]}\n";
  return path;
}

double seconds_to_decompose(const std::string& path) {
  const auto start = std::chrono::steady_clock::now();
  const Result r = run("decompose " + path + " --json");
  EXPECT_EQ(r.code, 0) << r.err;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Four times the steps take about four times as long, not sixteen (each step looked at every
// kernel of the trace: 50k steps took 4.7 s, 200k a minute; 80k here would take 12 s).
TEST(Bounds, DecomposeReadsATracesStepsInLinearTime) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "timings under AddressSanitizer are not the build's";
#endif
  const std::string small = steps_trace(20000), large = steps_trace(80000);
  const double t_small = std::min(seconds_to_decompose(small), seconds_to_decompose(small));
  const double t_large = std::min(seconds_to_decompose(large), seconds_to_decompose(large));
  EXPECT_LT(t_large, 8 * t_small + 0.5) << t_small << " s for 20k steps, " << t_large << " s for 80k";
  fs::remove(small), fs::remove(large);
}

TEST(Bounds, StepsBeyondWhatTheTraceHoldsAreRefused) {
  expect_error("decompose " + kFx + "/trace_kineto_small.json --step-name '^none$' --steps 1000000000", 2,
               "--steps 1000000000: more steps than the ");
  const Result parts = run("decompose " + kFx + "/trace_kineto_small.json --step-name '^none$' --steps 2");
  EXPECT_EQ(parts.code, 0) << parts.err;
  EXPECT_NE(parts.out.find("(GPU 0, NVIDIA H200): step part 1 of 2, "), std::string::npos) << parts.out;
}

// The binary with `input` piped into its standard input (a pipe, not a redirected file).
Result run_piped(const std::string& input, const std::string& args) {
  const std::string err_file = temp_path(fmt::format("piped_stderr_{}.txt", ::getpid()));
  Result r;
  FILE* p = ::popen(fmt::format("cat {} | {} {} 2>{}", input, UB_BINARY, args, err_file).c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = slurp(err_file);
  return r;
}

TEST(Bounds, APipeIsReadLikeAFile) {
  const Result piped = run_piped(kFx + "/sweep_h200.log", "memfit /dev/stdin --capacity-gib 130 --json");
  const Result file = run("memfit " + kFx + "/sweep_h200.log --capacity-gib 130 --json");
  ASSERT_EQ(piped.code, 0) << piped.err;
  ASSERT_EQ(file.code, 0) << file.err;
  auto a = nlohmann::json::parse(piped.out), b = nlohmann::json::parse(file.out);
  EXPECT_EQ(a["max_seqlen"], b["max_seqlen"]);
  EXPECT_EQ(a["slope_gib_per_token"], b["slope_gib_per_token"]);
}

// A server that accepts the connection and never answers: the command ends, and says why.
// A socket listening on a free loopback port (the kernel accepts connections; nothing answers),
// its address in `addr`; -1 when it cannot be made.
int loopback_listener(sockaddr_in& addr) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  addr = sockaddr_in{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listener, 16) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return -1;
  }
  return listener;
}

TEST(Bounds, APostgresServerThatNeverAnswersDoesNotHang) {
  sockaddr_in addr{};
  const int listener = loopback_listener(addr);
  ASSERT_GE(listener, 0);
  const auto start = std::chrono::steady_clock::now();
  const Result r = run(fmt::format("history list --db postgresql://nobody@127.0.0.1:{}/history", ntohs(addr.sin_port)));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ::close(listener);
  if (r.err.find("libpq.so.5 is not installed") != std::string::npos) GTEST_SKIP() << r.err;
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("cannot connect to PostgreSQL (connect_timeout 10 s"), std::string::npos) << r.err;
  EXPECT_LT(seconds, 30);
  // The address may set its own limit, but not none: libpq waits for ever at 0 or below, whatever
  // the spelling (its value as libpq reads it: percent-decoded, the last of several).
  for (const auto& [given, read] : {std::pair{"0", "0"}, {"-5", "-5"}, {"000", "000"}, {"+0", "+0"}, {"%30", "0"},
                                    {"1&connect_timeout=0", "0"}, {"0.5", "0.5"}}) {
    const Result n = run(fmt::format("history list --db 'postgresql://nobody@127.0.0.1:{}/history?connect_timeout={}'",
                                     ntohs(addr.sin_port), given));
    if (n.err.find("libpq.so.5 is not installed") != std::string::npos) continue;
    EXPECT_EQ(n.code, 2) << n.err;
    EXPECT_NE(n.err.find(fmt::format("connect_timeout '{}' would wait on a server that never answers for ever", read)),
              std::string::npos) << n.err;
  }
}

// libpq waits connect_timeout for each host of an address in turn: ours is shared among them (three
// silent hosts: 3 s each), and an address's own is said per host with the whole.
TEST(Bounds, SilentPostgresHostsShareTheConnectTimeout) {
  sockaddr_in a{}, b{}, c{};
  const int la = loopback_listener(a), lb = loopback_listener(b), lc = loopback_listener(c);
  ASSERT_TRUE(la >= 0 && lb >= 0 && lc >= 0);
  const std::string hosts = fmt::format("127.0.0.1:{},127.0.0.1:{},127.0.0.1:{}", ntohs(a.sin_port), ntohs(b.sin_port),
                                        ntohs(c.sin_port));
  const auto start = std::chrono::steady_clock::now();
  const Result r = run("history list --db postgresql://nobody@" + hosts + "/history");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const Result own = run("history list --db 'postgresql://nobody@" + hosts + "/history?connect_timeout=2'");
  for (const int l : {la, lb, lc}) ::close(l);
  if (r.err.find("libpq.so.5 is not installed") != std::string::npos) GTEST_SKIP() << r.err;
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("(connect_timeout 3 s for each of its 3 hosts, 9 s in all)"), std::string::npos) << r.err;
  EXPECT_LT(seconds, 15);
  EXPECT_NE(own.err.find("(the address's connect_timeout 2 s for each of its 3 hosts, 6 s in all)"), std::string::npos)
      << own.err;
}

// A server that answers the handshake, then goes silent: TCP stays alive and the server cancels
// nothing, so the client's own deadline ends the wait (10 s for the first statement), and says so.
TEST(Bounds, APostgresServerSilentAfterTheHandshakeDoesNotHang) {
  sockaddr_in addr{};
  const int listener = loopback_listener(addr);
  ASSERT_GE(listener, 0);
  std::thread server([listener] {
    const int c = ::accept(listener, nullptr, nullptr);
    if (c < 0) return;
    auto read_n = [&](char* buf, size_t n) {
      for (size_t got = 0; got < n;) {
        const ssize_t k = ::read(c, buf + got, n - got);
        if (k <= 0) return false;
        got += static_cast<size_t>(k);
      }
      return true;
    };
    for (;;) {  // SSL / GSS encryption requests are declined; the startup message is answered
      char head[8];
      if (!read_n(head, 8)) break;
      const uint32_t size = ntohl(*reinterpret_cast<uint32_t*>(head)), code = ntohl(*reinterpret_cast<uint32_t*>(head + 4));
      if (size == 8 && (code == 80877103 || code == 80877104)) {
        if (::write(c, "N", 1) != 1) break;
        continue;
      }
      std::vector<char> rest(size > 8 && size < 65536 ? size - 8 : 0);
      if (!rest.empty() && !read_n(rest.data(), rest.size())) break;
      const char ok[] = {'R', 0, 0, 0, 8, 0, 0, 0, 0, 'Z', 0, 0, 0, 5, 'I'};  // AuthenticationOk, ReadyForQuery
      if (::write(c, ok, sizeof ok) != static_cast<ssize_t>(sizeof ok)) break;
      char drain[4096];
      while (::read(c, drain, sizeof drain) > 0) {
      }  // what the client asks is read and never answered
      break;
    }
    ::close(c);
  });
  const auto start = std::chrono::steady_clock::now();
  const Result r = run(fmt::format("history list --db postgresql://nobody@127.0.0.1:{}/history", ntohs(addr.sin_port)));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ::shutdown(listener, SHUT_RDWR);
  ::close(listener);
  server.join();
  if (r.err.find("libpq.so.5 is not installed") != std::string::npos) GTEST_SKIP() << r.err;
  EXPECT_NE(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("no answer from the server within 10 s"), std::string::npos) << r.err;
  EXPECT_LT(seconds, 30);
}

// ---- Files clobbered, data lost: records go to files that keep them, never into what is read ----

TEST(Clobbering, RecordsGoToAFileThatKeepsThem) {
  const std::string fifo = temp_path("records.fifo");
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_error("predict " + kFx + "/decompose_h200.txt --to b200-sxm --out " + fifo, 2, "a pipe or a device, not a file");
  expect_error("sweep --seqlens 8k --resume --out " + fifo, 2, "a pipe or a device, not a file");
  fs::create_directories(temp_path("a_folder"));
  expect_error("sweep --seqlens 8k --out " + temp_path("a_folder"), 2, "a folder, not a file");
  fs::remove(fifo);
  // An output in a folder read as an input would be read as one of its files next time.
  const std::string traces = temp_path("traces");
  fs::remove_all(traces);
  fs::create_directories(traces);
  fs::copy_file(kFx + "/trace_kineto_small.json", traces + "/t.json", fs::copy_options::overwrite_existing);
  expect_error("decompose " + traces + " --out " + traces + "/out.jsonl", 2, "that is in the folder");
  EXPECT_FALSE(fs::exists(traces + "/out.jsonl"));
}

// Records are appended only to a file of the same command's records: a peer's log, another
// command's records, a gzip file or a database given as --out is refused before anything is written.
TEST(Clobbering, RecordsAreAppendedOnlyToRecordsOfTheirCommand) {
  const std::string decomposition = kFx + "/suite_h200_2l/decompose-long.jsonl";
  for (const auto& [name, text] : {std::pair{"out_log.log", slurp(kFx + "/sweep_70b.log")},
                                   std::pair{"out_sweep.jsonl", slurp(kFx + "/suite_h200_2l/sweep.jsonl")},
                                   std::pair{"out_gz.jsonl.gz", std::string("\x1f\x8b\x08\x00rest", 8)},
                                   std::pair{"out_db.sqlite", std::string("SQLite format 3\0", 16)}}) {
    const std::string out = write_file(name, text);
    expect_error("predict " + decomposition + " --to b200-sxm --out " + out, 2, "--out " + out + ": it holds");
    EXPECT_EQ(slurp(out), text) << name;
  }
  // Its own records, or an empty file, take more: of the same series, at lengths it does not hold.
  const std::string own = write_file("out_predict.jsonl", "");
  ASSERT_EQ(run("predict " + decomposition + " --to b200-sxm --out " + own).code, 0);
  const std::string more = kFx + "/suite_h200_2l/decompose-short.jsonl";
  const Result again = run("predict " + more + " --to b200-sxm --out " + own);
  EXPECT_EQ(again.code, 0) << again.err;
}

// A report folder's pages are rewritten only when they are an earlier report's: a report.html or
// report.md of the user's stays.
TEST(Clobbering, AReportFolderKeepsPagesItDidNotWrite) {
  for (const char* page : {"report.html", "report.md"}) {
    const std::string dir = temp_path(std::string("user_pages_") + page);
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir + "/" + page) << "precious\n";
    expect_error("report " + kFx + "/sweep_h200.log -o " + dir, 2, std::string("its ") + page + " is not a page upgradebench wrote");
    EXPECT_EQ(slurp(dir + "/" + page), "precious\n");
  }
  const std::string again = temp_path("report_again");
  fs::remove_all(again);
  const Result first = run("report " + kFx + "/sweep_h200.log -o " + again);
  if (report_tools_missing(first)) GTEST_SKIP() << first.err;
  ASSERT_EQ(first.code, 0) << first.err;
  const Result second = run("report " + kFx + "/sweep_h200.log -o " + again);
  EXPECT_EQ(second.code, 0) << "an earlier report's pages are rewritten: " << second.err;
}

TEST(Clobbering, TheHistoryDatabaseIsNeitherAnInputNorAPipe) {
  const std::string input = write_file("db_input.jsonl", slurp(kFx + "/records_h200.jsonl"));
  expect_error("history add --db " + input + " " + input, 2, "that is an input (" + input + "): the history is written into it");
  EXPECT_EQ(slurp(input), slurp(kFx + "/records_h200.jsonl"));
  // A file that is no database, to a reading command: said in words, without SQLite's statement.
  const Result list = run("history list --db " + input);
  EXPECT_EQ(list.code, 2);
  EXPECT_NE(list.err.find("--db " + input + ": not an SQLite database (file is not a database): give a history database"),
            std::string::npos) << list.err;
  EXPECT_EQ(list.err.find("SELECT"), std::string::npos) << list.err;
  // A history database cut short is a damaged one (exit 1), not a file of another kind.
  const std::string whole = fresh_db("to_cut");
  ASSERT_EQ(run("history add --db " + whole + " " + input).code, 0);
  const std::string cut = write_file("cut.db", slurp(whole).substr(0, 5000));
  expect_error("history list --db " + cut, 1, "--db " + cut + ": a damaged SQLite database (database disk image is malformed)");
  expect_error("history add --db /dev/null " + input, 2, "a pipe or a device, not a file");
  expect_error("history list --db /dev/null", 2, "not a file (a folder, a pipe or a device)");
  // Nor the records file a command writes, existing yet or not.
  const std::string same = temp_path("records_and_db.jsonl");
  fs::remove(same);
  expect_error("decompose " + kFx + "/trace_kineto_small.json --out " + same + " --db " + same, 2,
               "that is the records file (--out)");
  EXPECT_FALSE(fs::exists(same));
  // Through a symlink not yet leading anywhere, or as SQLite's file: URI.
  const std::string link = temp_path("records_link.db");
  fs::remove(link);
  fs::create_symlink(same, link);
  for (const std::string& db : {link, "file:" + same, "file:" + same + "?mode=rwc"}) {
    expect_error("decompose " + kFx + "/trace_kineto_small.json --out " + same + " --db '" + db + "'", 2,
                 "that is the records file (--out)");
  }
  EXPECT_FALSE(fs::exists(same));
  expect_error("history add --db 'file:" + input + "' " + input, 2, "that is an input");
}

// Chart files in a folder no report wrote are someone else's: not overwritten. A report folder
// of ours is rewritten, charts and all.
TEST(Clobbering, AReportFolderKeepsChartsItDidNotWrite) {
  const std::string dir = temp_path("foreign_charts");
  fs::remove_all(dir);
  fs::create_directories(dir);
  ASSERT_EQ(::mkfifo((dir + "/charts").c_str(), 0600), 0);
  expect_error("report " + kFx + "/sweep_h200.log -o " + dir, 2, dir + "/charts is there and is not a folder");
  fs::remove(dir + "/charts");
  fs::create_directories(dir + "/charts");
  write_file("foreign_charts/charts/tflops.svg", "precious");
  expect_error("report " + kFx + "/sweep_h200.log -o " + dir, 2, "its charts/ holds files no upgradebench report wrote");
  EXPECT_EQ(slurp(dir + "/charts/tflops.svg"), "precious");
  const std::string ours = temp_path("our_charts");
  fs::remove_all(ours);
  ASSERT_EQ(run("report " + kFx + "/sweep_h200.log -o " + ours).code, 0);
  EXPECT_EQ(run("report " + kFx + "/sweep_h200.log -o " + ours).code, 0) << "a report folder of ours is rewritten";
  // A comparison's charts do not stay beside the single run's report written over it.
  ASSERT_EQ(run("report " + kFx + "/sweep_h200.log " + kFx + "/sweep_b200.log -o " + ours).code, 0);
  ASSERT_TRUE(fs::exists(ours + "/charts/speedup.png"));
  ASSERT_EQ(run("report " + kFx + "/sweep_h200.log -o " + ours).code, 0);
  EXPECT_FALSE(fs::exists(ours + "/charts/speedup.png"));
  EXPECT_FALSE(fs::exists(ours + "/charts/speedup.svg"));
  // A chart edited since its report drew it (each page records its charts' digests) is neither
  // overwritten nor removed; nor is a file put where a chart of this report goes.
  const std::string drawn = slurp(ours + "/charts/tflops.svg");
  write_file("our_charts/charts/tflops.svg", drawn + "<!-- my note -->\n");
  expect_error("report " + kFx + "/sweep_h200.log -o " + ours, 2,
               "its charts/tflops.svg is not as upgradebench drew it (edited since its report recorded its digest)");
  expect_error("report " + kFx + "/sweep_h200.log " + kFx + "/sweep_b200.log -o " + ours, 2,
               "its charts/tflops.svg is not as upgradebench drew it");
  EXPECT_EQ(slurp(ours + "/charts/tflops.svg"), drawn + "<!-- my note -->\n");
  write_file("our_charts/charts/tflops.svg", drawn);
  write_file("our_charts/charts/speedup.png", "mine");
  expect_error("report " + kFx + "/sweep_h200.log " + kFx + "/sweep_b200.log -o " + ours, 2,
               "its charts/speedup.png is no chart its report recorded");
  EXPECT_EQ(slurp(ours + "/charts/speedup.png"), "mine");
  fs::remove(ours + "/charts/speedup.png");
  EXPECT_EQ(run("report " + kFx + "/sweep_h200.log -o " + ours).code, 0) << "the chart as drawn again";
  // A chart grown past anything gnuplot draws is refused by its size, not read to its end first.
  fs::resize_file(ours + "/charts/tflops.svg", 65u << 20);
  expect_error("report " + kFx + "/sweep_h200.log -o " + ours, 2, "its charts/tflops.svg holds 65 MiB, no chart upgradebench draws");
  fs::remove(ours + "/charts/tflops.svg");
  // A page grown past anything a report writes is refused by its size, not read whole first.
  fs::resize_file(ours + "/report.html", 300u << 20);
  expect_error("report " + kFx + "/sweep_h200.log -o " + ours, 2, "its report.html is not as upgradebench wrote it");
  fs::remove(ours + "/report.html");
}

// A decompose that reads nothing writes nothing: no records file holding a context record alone.
TEST(Clobbering, ADecomposeThatReadsNothingLeavesNoRecordsFile) {
  const std::string empty = write_file("empty_trace.json", "");
  const std::string out = temp_path("nothing_read.jsonl");
  fs::remove(out);
  const Result r = run("decompose " + empty + " --out " + out);
  EXPECT_NE(r.code, 0);
  EXPECT_FALSE(fs::exists(out)) << slurp(out);
}

// A symbolic link where records or the history go (planted in a shared folder, or left from
// before) is never written through: neither to what it names nor by creating what it names.
TEST(Clobbering, RecordsAndTheHistoryAreNotWrittenThroughASymlink) {
  const std::string target = temp_path("link_target.jsonl"), link = temp_path("records_link.jsonl");
  fs::remove(target), fs::remove(link);
  fs::create_symlink(target, link);
  expect_error("predict " + kFx + "/decompose_h200.txt --to b200-sxm --out " + link, 2,
               "--out " + link + ": a symbolic link: records are written to the file named, never through a link");
  EXPECT_FALSE(fs::exists(target));
  const std::string db_target = temp_path("link_target.db"), db_link = temp_path("history_link.db");
  fs::remove(db_target), fs::remove(db_link);
  fs::create_symlink(db_target, db_link);
  expect_error("history add --db " + db_link + " " + kFx + "/records_h200.jsonl", 2,
               "--db " + db_link + ": a symbolic link: the history is written to the file named, never through a link");
  EXPECT_FALSE(fs::exists(db_target));
  // Read, a link is a path like any other.
  const std::string db = fresh_db("read_through_link");
  ASSERT_EQ(run("history add --db " + db + " " + kFx + "/records_h200.jsonl").code, 0);
  fs::remove(db_link);
  fs::create_symlink(db, db_link);
  EXPECT_EQ(run("history list --db " + db_link).code, 0);
  // Nor its journal: a link where SQLite puts the write-ahead log is said as that, not as a bad
  // database, and what it names is left as it was.
  const std::string victim = write_file("journal_victim.txt", "mine");
  fs::remove(db + "-wal");
  fs::create_symlink(victim, db + "-wal");
  expect_error("history list --db " + db, 2, "--db " + db + ": its journal " + db + "-wal is a symbolic link");
  expect_error("history add --db " + db + " " + kFx + "/mamf_finder_h200.txt", 2, "-wal is a symbolic link");
  EXPECT_EQ(slurp(victim), "mine");
  fs::remove(db + "-wal");
}

// ---- Silently wrong results ----

TEST(SilentlyWrong, ExampleDataInTheHistoryIsExampleDataOfEveryKind) {
  const std::string db = fresh_db("provenance_kinds");
  for (const char* f : {"mamf_finder_h200.txt", "attention_h200.log", "decompose_h200.txt"}) {
    ASSERT_EQ(run("history add --db " + db + " " + kFx + "/" + f).code, 0) << f;
  }
  const nlohmann::json runs = nlohmann::json::parse(run("history list --json --db " + db).out)["runs"];
  ASSERT_EQ(runs.size(), 3u);
  for (const auto& r : runs) EXPECT_EQ(r["data"], "EXAMPLE DATA") << r.dump();
}

TEST(SilentlyWrong, AStepFasterThanANanosecondOrWrittenInHexIsRefused) {
  const std::string log = slurp(kFx + "/sweep_b200.log");
  for (const char* bad : {R"("exec_time_ms": 1e-300)", R"("exec_time_ms": "0x10")"}) {
    const std::string path = write_file("tiny_times.log", std::regex_replace(log, std::regex(R"("exec_time_ms": [0-9.]+)"), bad,
                                                                             std::regex_constants::format_first_only));
    const Result r = run("compare " + kFx + "/sweep_h200.log " + path);
    EXPECT_EQ(r.code, 1) << bad << r.out;
    EXPECT_NE(r.err.find("hostile_tiny_times.log:5: "), std::string::npos) << r.err;
    EXPECT_TRUE(r.err.find("must be a finite number of at least 1e-06 ms") != std::string::npos ||
                r.err.find("\"exec_time_ms\" is not a number") != std::string::npos)
        << r.err;
  }
}

TEST(SilentlyWrong, FiguresOnTheCommandLineBeyondAnyRealOneAreRefused) {
  const std::string logs = kFx + "/sweep_h200.log " + kFx + "/sweep_b200.log";
  expect_error("memfit " + kFx + "/sweep_h200.log --capacity-gib 1e308", 2, "--capacity-gib: '1e308' is outside");
  expect_error("compare " + logs + " --price-old 1e-30 --price-new 5", 2, "--price-old: '1e-30' is outside 1e-06 to 1e+06");
  expect_error("compare " + logs + " --price-old 3 --price-new 5 --tokens 1e308", 2, "--tokens");
  expect_error("compare " + logs + " --power-price 0.1 --pue 0.5", 2, "--pue: '0.5' is outside 1 to 10");
  expect_error("flops --batch 99999999999", 2, "--batch 99999999999: at most 1000000");
  expect_error("compare " + logs + " --tokens 1e12 --train-gpus 1000000000000", 2, "--train-gpus 1000000000000: more GPUs");
  for (const char* far : {"1G", "1"}) {
    expect_error(fmt::format("predict {}/decompose_h200.txt --to b200 --model llama-3.1-8b --seqlens {}", kFx, far), 2,
                 "times the nearest measured length (8192): a step is carried at most 128x either way");
  }
}

TEST(SilentlyWrong, AMeasurementIsNotComparedWithItself) {
  expect_error("compare " + kFx + "/sweep_h200.log " + kFx + "/../fixtures/sweep_h200.log", 2, "are the same measurement");
  expect_error("decide " + kFx + "/suite_h200_2l " + kFx + "/suite_h200_2l/", 2, "are the same measurement");
  // By what it holds, not by its name: a copy of a suite, a stored run beside the file it came from,
  // one run selected twice.
  const std::string copy = temp_path("suite_copy");
  fs::remove_all(copy);
  fs::copy(kFx + "/suite_h200_2l", copy, fs::copy_options::recursive);
  expect_error("decide " + kFx + "/suite_h200_2l " + copy, 2, "sweep.jsonl are the same measurement");
  expect_error("compare " + kFx + "/suite_h200_2l/sweep.jsonl " + copy + "/sweep.jsonl", 2, "are the same measurement");
  const std::string db = fresh_db("same_measurement");
  ASSERT_EQ(run("history add --db " + db + " " + kFx + "/records_h200.jsonl").code, 0);
  expect_error("compare run:1 " + kFx + "/records_h200.jsonl --db " + db, 2, "are the same measurement");
  expect_error("compare run:1,1 " + kFx + "/records_h200_rerun.jsonl --db " + db, 2, "run:1,1: run 1 is selected twice");
  expect_error("compare run:1-1 run:1 --db " + db, 2, "are the same measurement");
  // A copy of a measurement of any kind, to the byte.
  for (const char* file : {"attention_h200.log", "mamf_finder_h200.txt", "nccl_records_h200x2_plain.jsonl",
                           "decompose_h200.txt", "suite_h200_2l/bandwidth.jsonl"}) {
    const std::string copied = write_file(std::string("copy_") + fs::path(file).filename().string(), slurp(kFx + "/" + file));
    expect_error("compare " + kFx + "/" + file + " " + copied, 2, "are the same measurement");
  }
}

// Two decompositions are of one workload: the lengths our records' context holds, the work each
// bucket says; where neither is known the output says it was not checked.
TEST(SilentlyWrong, DecompositionsOfAnotherWorkloadAreNotCompared) {
  expect_error("compare " + kFx + "/decompose_h200.txt " + kFx + "/engine_llama_2l_4096.jsonl", 2,
               "decompose steps of different lengths (8192 tokens vs 4096 tokens, old vs new)");
  const std::string b200 = slurp(kFx + "/decompose_b200.txt");
  const std::string half = write_file("decompose_half.txt",
                                      replaced(replaced(replaced(b200, "368.87 TFLOP  481.1 ms  766.7 TFLOPS  MFU 34.1",
                                                                          "184.43 TFLOP  481.1 ms  383.3 TFLOPS  MFU 17.0"),
                                                        "421.65 TFLOP  538.5 ms  783.0 TFLOPS  MFU 34.8",
                                                        "237.21 TFLOP  538.5 ms  440.5 TFLOPS  MFU 19.6"),
                                               "attention FLOP share=12.5%", "attention FLOP share=22.3%"));
  // A printout's work is its model's at its length: half of it is no Llama-3.1-8B step at 8192,
  // refused whatever --force says (the work of our buckets beside a printout's is held and forced
  // in APrintoutOfAnotherDepthBesideOurBucketsIsRefused).
  for (const std::string& force : {"", " --force"}) {
    expect_error("compare " + kFx + "/decompose_h200.txt " + half + force, 1,
                 "a step of 237.21 TFLOP is not llama-3.1-8b's work at 8192 tokens (421.65 TFLOP)");
  }
  // Our records: the batch a decomposition says, the work of the buckets that say theirs.
  const std::string ours = slurp(kFx + "/suite_h200_2l/decompose-long.jsonl");
  ASSERT_NE(ours.find(R"("type":"decomposition")"), std::string::npos);
  ASSERT_NE(ours.find(R"("batch":1,)"), std::string::npos);
  std::string batch2_text;
  std::istringstream ours_lines(ours);
  for (std::string line; std::getline(ours_lines, line);) {
    batch2_text += (line.find(R"("type":"decomposition")") != std::string::npos ? replaced(line, R"("batch":1,)", R"("batch":2,)") : line) + "\n";
  }
  const std::string batch2 = write_file("decompose_batch2.jsonl", batch2_text);
  expect_error("compare " + kFx + "/suite_h200_2l/decompose-long.jsonl " + batch2, 2, "different batches (1 vs 2");
  const std::string hf = temp_path("hf_decomposition.jsonl");
  fs::remove(hf);
  ASSERT_EQ(run("decompose " + kFx + "/hf_llama_2l_4096.pt.trace.json.gz --out " + hf).code, 0);
  // A trace says neither its length nor its buckets' work: nothing checks the workload, so only
  // --force compares it, and says so.
  expect_error("compare " + hf + " " + kFx + "/engine_llama_2l_4096.jsonl", 2,
               "neither their lengths nor their work (FLOPs) are in both files");
  const Result unchecked = run("compare " + hf + " " + kFx + "/engine_llama_2l_4096.jsonl --force");
  ASSERT_EQ(unchecked.code, 0) << unchecked.err;
  EXPECT_NE(unchecked.out.find("forced: one workload on both sides is assumed, not checked: their lengths"), std::string::npos)
      << unchecked.out;
}

// Another number of GPUs in the job, recomputed layers, sharded state or work moved to the host on
// one side only is another workload: refused without --force, said first with it.
TEST(SilentlyWrong, GpusInTheJobRecomputeShardingAndOffloadAreTheWorkload) {
  const std::string log = slurp(kFx + "/sweep_b200.log");
  for (const auto& [from, to] : {std::pair{"world_size=8", "world_size=1"}, std::pair{"gc=1", "gc=0"},
                                 std::pair{"zero=3", "zero=2"}, std::pair{"offload_optim=1", "offload_optim=0"}}) {
    std::string changed = log;
    for (size_t at; (at = changed.find(from)) != std::string::npos;) changed.replace(at, std::string(from).size(), to);
    const std::string path = write_file("workload.log", changed);
    expect_error("compare " + kFx + "/sweep_h200.log " + path, 2, "are not the same workload");
    const Result forced = run("compare --force " + kFx + "/sweep_h200.log " + path);
    EXPECT_EQ(forced.code, 0) << forced.err;
    EXPECT_NE(forced.out.find("forced: different"), std::string::npos) << forced.out;
  }
  // Our records: the state sharded, the optimizer kept on the host.
  const std::string ours = slurp(kFx + "/train_records_h200_plain_8k.jsonl");
  for (const auto& [from, to] : {std::pair{"\"zero_stage\":0", "\"zero_stage\":3"},
                                 std::pair{"\"offload_optimizer\":false", "\"offload_optimizer\":true"}}) {
    std::string changed = ours;
    const size_t at = changed.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    changed.replace(at, std::string(from).size(), to);
    const std::string path = write_file("lever.jsonl", changed);
    expect_error("compare " + kFx + "/train_records_h200_plain_8k.jsonl " + path, 2, "are not the same workload");
  }
}

TEST(SilentlyWrong, DecideFromTheCatalogRefusesWhatOnlyMeasurementsAnswer) {
  expect_error("decide --from h200-sxm --to b200-sxm --need-seqlen 256k", 2, "--need-seqlen goes with measurements");
  expect_error("decide --from h200-sxm --to b200-sxm --layers 99", 2, "--layers goes with --old-run");
}

// Two prices further apart than any two GPUs' hourly prices are a units slip, refused in every
// command that prices; within the bound, a figure that would round to nothing keeps its digits.
TEST(SilentlyWrong, PricesFurtherApartThanAnyTwoGpusAreRefused) {
  const std::string suite = kFx + "/suite_h200_2l";
  for (const std::string& command : std::vector<std::string>{"decide " + suite + " --to b200", "decide --from h200 --to b200",
                                     "predict --to b200 " + kFx + "/decompose_h200.txt",
                                     "compare " + kFx + "/sweep_h200.log " + kFx + "/sweep_b200.log"}) {
    expect_error(command + " --price-old 1000000 --price-new 0.000001", 2,
                 "--price-old 1000000 and --price-new 0.000001: 1e+12 times apart, where no two GPUs' hourly prices are "
                 "100 times apart");
  }
  const Result r = run("decide " + suite + " --to b200 --price-old 100 --price-new 1");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("break-even of 0.01x"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(down to 0.53% of the h200-sxm's cost)"), std::string::npos) << r.out;
  EXPECT_NE(run("decide " + suite + " --to b200 --price-old 6 --price-new 3").out.find("(down to 27% of the h200-sxm's cost)"), std::string::npos);
  // Electricity is priced where both GPUs' power was measured, per kWh within what power costs.
  expect_error("decide --from h200 --to b200 --power-price 0.1", 2, "the catalog alone measures none");
  for (const std::string& command : std::vector<std::string>{"decide --from h200 --to b200", "decide " + suite + " --to b200"}) {
    expect_error(command + " --pue 1.3", 2, "--pue is for the cost of --power-price: give --power-price too");
  }
  expect_error("decide " + suite + " --to b200 --power-price 0.1", 2, "the b200-sxm's power is not measured on a PREDICTED page");
  for (const char* price : {"0.000001", "100"}) {
    expect_error(fmt::format("compare {0}/train_records_h200_peer.jsonl {0}/train_records_h200_ours.jsonl --force "
                             "--power-price {1}", kFx, price), 2, "--power-price");
  }
  // Cheap GPU-hours: each $/Mtok keeps two significant digits (0.000102 and 0.000122 at 8k).
  const Result cheap = run("compare " + kFx + "/sweep_h200.log " + kFx + "/sweep_b200.log --price-old 0.001 --price-new 0.002");
  ASSERT_EQ(cheap.code, 0) << cheap.err;
  EXPECT_NE(cheap.out.find(" 0.0001     0.00012 "), std::string::npos) << cheap.out;
  EXPECT_EQ(cheap.out.find(" 0.000 "), std::string::npos) << cheap.out;
}

// SQLite's names that are no file: an in-memory database would keep nothing while `history add`
// says it added, and a URI names another file than the path a reader given it looks for.
TEST(SilentlyWrong, HistoryRefusesSqliteNamesThatAreNoFile) {
  const std::string records = kFx + "/records_h200.jsonl";
  expect_error("history add --db :memory: " + records, 2, "--db :memory:: SQLite's in-memory database keeps nothing");
  const fs::path dir = fresh_folder("sqlite_uri");
  fs::create_directories(dir);
  for (const std::string& uri : {std::string("file:x.sqlite"), std::string("'file:x.sqlite?mode=memory'")}) {
    for (const std::string& command : {"history add --db " + uri + " " + records, "history list --db " + uri}) {
      const Result r = run(command, dir.string());
      EXPECT_EQ(r.code, 2) << command << "\n" << r.err;
      EXPECT_NE(r.err.find("an SQLite URI, which names another file than the path it reads as"), std::string::npos) << r.err;
    }
  }
  EXPECT_TRUE(fs::is_empty(dir)) << "nothing written";
  // A file of that very name, as a path.
  const Result named = run("history add --db ./file:x.sqlite " + records, dir.string());
  EXPECT_EQ(named.code, 0) << named.err;
  EXPECT_TRUE(fs::exists(dir / "file:x.sqlite"));
  EXPECT_EQ(run("history list --db ./file:x.sqlite", dir.string()).code, 0);
}

// A trace's decomposition stored in the history names the GPU its records name (the context lists
// none: reading a trace measures nothing), so series of two GPU models never pool; a job's ranks
// are stored each under its rank, and the job is a workload of its own.
TEST(SilentlyWrong, HistoryKeepsATracesGpuAndEveryRank) {
  const fs::path dir = fresh_folder("history_traces");
  fs::create_directories(dir / "job");
  nlohmann::json trace = nlohmann::json::parse(slurp(kFx + "/trace_kineto_small.json"));
  const auto write = [&](const fs::path& path, const std::string& gpu, std::optional<int> rank, double shift_us) {
    nlohmann::json t = trace;
    t["deviceProperties"][0]["name"] = gpu;
    if (rank) t["distributedInfo"]["rank"] = *rank, t["distributedInfo"]["world_size"] = 2;
    for (auto& e : t["traceEvents"]) {
      if (e.contains("ts") && e["ts"].is_number()) e["ts"] = e["ts"].get<double>() + shift_us;
    }
    std::ofstream(path) << t.dump();
  };
  write(dir / "h100.json", "NVIDIA H100 80GB HBM3", std::nullopt, 0);
  write(dir / "h200.json", "NVIDIA H200", std::nullopt, 1000);
  write(dir / "job" / "r0.json", "NVIDIA H200", 0, 2000);
  write(dir / "job" / "r1.json", "NVIDIA H200", 1, 3000);
  const std::string db = (dir / "history.sqlite").string();
  for (const char* name : {"h100", "h200", "job"}) {
    const std::string in = (dir / name).string() + (std::string(name) == "job" ? "" : ".json");
    ASSERT_EQ(run("decompose " + in + " --out " + (dir / name).string() + ".jsonl").code, 0) << name;
  }
  const Result added = run(fmt::format("history add --db {0} {1}/h100.jsonl {1}/h200.jsonl {1}/job.jsonl", db, dir.string()));
  ASSERT_EQ(added.code, 0) << added.err;
  const Result h100 = run("history list --gpu h100 --json --db " + db);
  ASSERT_EQ(h100.code, 0) << h100.err;
  EXPECT_EQ(nlohmann::json::parse(h100.out).size(), 1u) << h100.out;
  const Result fleet = run("history fleet decompose.ms.gemm --db " + db);
  ASSERT_EQ(fleet.code, 0) << fleet.err;
  EXPECT_NE(fleet.out.find("across 1 GPU (ms, lower is better): NVIDIA H100 80GB HBM3, a traced step"), std::string::npos)
      << fleet.out;
  EXPECT_NE(fleet.out.find("NVIDIA H200, a traced step: model unknown, layers unknown, seqlen unknown, batch unknown, a job of "
                           "2 ranks"), std::string::npos) << fleet.out;
  const Result job = run("history show 3 --json --db " + db);
  ASSERT_EQ(job.code, 0) << job.err;
  const nlohmann::json shown = nlohmann::json::parse(job.out);
  EXPECT_EQ(shown["gpus"], 2) << job.out;
}

// With --old-run and no --model, every part of the page counts the model the run names: the
// memory reason and the JSON's model too, never the default Llama-3.1-8B.
TEST(SilentlyWrong, DecideFromAnOldRunCountsTheModelItRan) {
  const std::string q = temp_path("decide_qwen3_decomposition.jsonl");
  fs::remove(q);
  const Result d = run("decompose " + kFx + "/hf_qwen3_30b_a3b_4l_4096.pt.trace.json.gz --model qwen3-30b-a3b --layers 4 "
                       "--seqlen 4096 --out " + q);
  ASSERT_EQ(d.code, 0) << d.err;
  const Result r = run("decide --from h100 --old-run " + q + " --price-old 3.5 --price-new 6 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["model"], "qwen3-30b-a3b");
  const std::string reasons = j["reasons"].dump();
  EXPECT_NE(reasons.find("at least 7 h100-sxm vs 3 b200-sxm"), std::string::npos) << reasons;
  EXPECT_EQ(reasons.find("llama-3.1-8b"), std::string::npos) << reasons;
  const Result seventy = run("decide --old-run " + kFx + "/sweep_70b.log --price-old 3.5 --price-new 6 --json");
  ASSERT_EQ(seventy.code, 0) << seventy.err;
  EXPECT_EQ(nlohmann::json::parse(seventy.out)["model"], "llama-3.1-70b");
  // A run that names no model: no memory reason, and a warning that says why.
  const std::string bare = temp_path("decide_bare_decomposition.jsonl");
  fs::remove(bare);
  ASSERT_EQ(run("decompose " + kFx + "/trace_kineto_small.json --out " + bare).code, 0);
  const Result unnamed = run("decide --from h200 --old-run " + bare + " --json");
  ASSERT_EQ(unnamed.code, 0) << unnamed.err;
  EXPECT_TRUE(nlohmann::json::parse(unnamed.out)["model"].is_null());
  EXPECT_NE(unnamed.err.find(bare + ": the run names no model, so the memory of training it is left out: give --model"),
            std::string::npos) << unnamed.err;
}

// ---- Exit codes: a file of a kind a command does not read is a usage error, in every command ----

TEST(Messages, AFileOfAnotherKindExitsTwoInEveryCommand) {
  const std::string text = write_file("prose.txt", "a note\nnot a log at all\n");
  expect_error("memfit " + text, 2, "not a training log");
  expect_error("report " + text, 2, "");
  expect_error("history add --db " + fresh_db("prose") + " " + text, 2, "not a log the history reads");
  expect_error("compare " + text + " " + kFx + "/sweep_h200.log", 2, "compare needs two logs of one kind");
  // Records of another command, named as such rather than by what they lack.
  const std::string predicted = temp_path("predicted.jsonl");
  fs::remove(predicted);
  ASSERT_EQ(run("predict " + kFx + "/decompose_h200.txt --to b200 --out " + predicted).code, 0);
  expect_error("memfit " + predicted, 2, "records of `predict`, not a training log");
  // A file where a report's folder goes; a value CLI11 cannot convert; records that name no model.
  expect_error("report " + kFx + "/sweep_h200.log -o " + text, 2, "-o " + text + ": not a folder");
  expect_error("decompose --steps 99999999999 " + text, 2, "--steps: '99999999999' is not a value it takes");
  const std::string hf = temp_path("hf_no_model.jsonl");
  fs::remove(hf);
  ASSERT_EQ(run("decompose " + kFx + "/hf_llama_2l_4096.pt.trace.json.gz --out " + hf).code, 0);
  const Result no_model = run("predict " + hf + " --to b200");
  EXPECT_EQ(no_model.code, 0) << no_model.err;
  EXPECT_EQ(no_model.err.find("unknown model 'null'"), std::string::npos) << no_model.err;
}

TEST(Messages, WhatWouldFailAfterTheMeasuringIsRefusedBefore) {
  const std::string text = write_file("not_a_trace.txt", "a note\n");
  expect_error("suite --dry-run --trace " + text + " --out " + temp_path("suite_trace"), 2,
               "not_a_trace.txt: not a torch.profiler trace");
  expect_error("suite --dry-run --out " + text, 2, "a file, not a folder");
  expect_error("predict " + kFx + "/decompose_h200.txt --to b200-sxm --model llama-3.1-8b --to-layers 99", 2,
               "--to-layers 99 is more than the 32 layers of llama-3.1-8b");
  const std::string zero = write_file("seq_len_zero.log", replaced(slurp(kFx + "/sweep_b200.log"), "seq_len=8192 =====",
                                                                   "seq_len=0 ====="));
  expect_error("compare " + kFx + "/sweep_h200.log " + zero, 1, "hostile_seq_len_zero.log:");
}

// A pipe that never ends and holds no log: every reader says "not a log" after its kept start.
TEST(Bounds, AnEndlessPipeOfNoLogIsRefusedAsNotALog) {
  const auto start = std::chrono::steady_clock::now();
  const Result memfit = capture(fmt::format("yes | {} memfit /dev/stdin 2>&1", UB_BINARY));
  EXPECT_EQ(memfit.code, 2) << memfit.out;
  EXPECT_NE(memfit.out.find("not a training log"), std::string::npos) << memfit.out;
  const Result compare = capture(fmt::format("yes | {} compare /dev/stdin {}/sweep_h200.log 2>&1", UB_BINARY, kFx));
  EXPECT_EQ(compare.code, 2) << compare.out;
  EXPECT_NE(compare.out.find("compare needs two logs of one kind"), std::string::npos) << compare.out;
  const Result measured = capture(fmt::format("yes | {} predict {}/decompose_h200.txt --to b200 --measured /dev/stdin 2>&1",
                                              UB_BINARY, kFx));
  EXPECT_EQ(measured.code, 2) << measured.out;
  EXPECT_NE(measured.out.find("/dev/stdin: not a micro-benchmark predict reads"), std::string::npos) << measured.out;
  const Result history = capture(fmt::format("yes | {} history add --db {} /dev/stdin 2>&1", UB_BINARY, fresh_db("yes")));
  EXPECT_EQ(history.code, 2) << history.out;
  EXPECT_NE(history.out.find("/dev/stdin: not a log the history reads"), std::string::npos) << history.out;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 30);
}

// A gzip file cut short is refused, not read as far as it goes: a log's last lengths, a trace's
// last events would go missing without a word.
TEST(Messages, AGzipFileCutShortIsRefused) {
  const std::string b200 = kFx + "/sweep_b200.log";
  for (const auto& [file, cmd] : {std::pair<std::string, std::string>{"sweep_h200.log", "memfit {}"},
                                  std::pair<std::string, std::string>{"sweep_h200.log", "compare {} " + b200},
                                  std::pair<std::string, std::string>{"hf_llama_2l_4096.pt.trace.json.gz", "decompose {}"}}) {
    const std::string cut = temp_path("cut_" + file + (file.ends_with(".gz") ? "" : ".gz"));
    const std::string zip = file.ends_with(".gz") ? "cat" : "gzip -c";
    ASSERT_EQ(capture(fmt::format("{} {}/{} | head -c 600 > {}", zip, kFx, file, cut)).code, 0);
    expect_error(fmt::format(fmt::runtime(cmd), cut), 1, cut + ": the gzip stream stops short of its end (no trailer)");
  }
  const Result piped = capture(fmt::format("gzip -c {}/sweep_h200.log | head -c 600 | {} memfit /dev/stdin 2>&1", kFx, UB_BINARY));
  EXPECT_EQ(piped.code, 1) << piped.out;
  EXPECT_NE(piped.out.find("the gzip stream stops short"), std::string::npos) << piped.out;
}

// Lines after the gzip data (a plain log appended to a compressed one) are refused where they
// start: zlib's own reader stops at the gzip data's end and the appended lengths went unread.
TEST(Messages, AFileAppendedToAGzipFileIsRefused) {
  const std::string joined = temp_path("appended_sweep.log.gz");
  ASSERT_EQ(capture(fmt::format("gzip -c {0}/sweep_h200.log > {1} && cat {0}/sweep_b200.log >> {1}", kFx, joined)).code, 0);
  const Result memfit = capture(fmt::format("{} memfit {} 2>&1", UB_BINARY, joined));
  EXPECT_EQ(memfit.code, 1) << memfit.out;
  EXPECT_NE(memfit.out.find(joined + ": the bytes from "), std::string::npos) << memfit.out;
  EXPECT_NE(memfit.out.find("after the end of the gzip data, are not gzip"), std::string::npos) << memfit.out;
  // A trace is read to its end too, past its JSON document: a line appended to the gzip file,
  // or a second document after the first, is refused.
  const std::string trace = temp_path("appended_trace.json.gz");
  ASSERT_EQ(capture(fmt::format("cp {}/hf_llama_2l_4096.pt.trace.json.gz {} && echo garbage >> {}", kFx, trace, trace)).code, 0);
  expect_error("decompose " + trace, 1, trace + ": the bytes from ");
  const std::string two = temp_path("two_documents.json");
  ASSERT_EQ(capture(fmt::format("cat {0}/trace_kineto_small.json {0}/trace_kineto_small.json > {1}", kFx, two)).code, 0);
  expect_error("decompose " + two, 1, two + ": more after the end of the JSON document (two files in one?)");
}

// An endless pipe of records that look valid, each at a new length, stops at the bound of points
// a file holds, while it is read: kind detection looks no further than the pipe's kept start.
TEST(Bounds, AnEndlessPipeOfRecordsStopsAtThePointsAFileHolds) {
  const std::string endless = fmt::format(
      "(head -1 {}/records_h200.jsonl; awk 'BEGIN {{ for (s = 1032;; s += 8) printf \"{{\\\"type\\\": "
      "\\\"train_step\\\", \\\"seqlen\\\": %d, \\\"step\\\": 3, \\\"warmup\\\": false, "
      "\\\"exec_time_ms\\\": 100.0}}\\n\", s }}')",
      kFx);
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& cmd : {fmt::format("compare {}/records_h200.jsonl /dev/stdin", kFx),
                                 fmt::format("report /dev/stdin -o {}", temp_path("endless_report"))}) {
    const Result r = capture(fmt::format("{} 2>/dev/null | {} {} 2>&1", endless, UB_BINARY, cmd));
    EXPECT_EQ(r.code, 1) << cmd << "\n" << r.out;
    EXPECT_NE(r.out.find("more than 16384 points in one file"), std::string::npos) << cmd << "\n" << r.out;
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 60);
}

// An endless pipe of one valid step again and again adds no point and holds no more memory (the
// steps kept are bounded): it is refused at the most a pipe is read, instead of read for ever.
TEST(Bounds, AnEndlessPipeOfOneStepStopsAtTheMostAPipeIsRead) {
  const Result r = capture(fmt::format("(head -1 {0}/train_records_h200_ours.jsonl; yes \"$(sed -n 5p {0}/train_records_h200_ours.jsonl)\") "
                                       "2>/dev/null | {1} memfit /dev/stdin 2>&1", kFx, UB_BINARY));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("/dev/stdin: more than 256 MiB from a pipe: not a log upgradebench reads; give a file"), std::string::npos) << r.out;
}

// A folder where a command reads a file says what to give instead; a suite's folder, that decide
// reads it whole.
TEST(Messages, AFolderWhereAFileIsReadSaysWhatToGive) {
  const std::string suite = kFx + "/suite_h200_2l";
  for (const std::string& cmd : {"report " + suite + " -o " + fresh_folder("folder_report"), "compare " + suite + " " + suite +
                                 "/sweep.jsonl", "memfit " + suite, "predict " + suite + " --to b200"}) {
    expect_error(cmd, 2, suite + ": a folder, where a file is read: give one of its files (a suite's folder, which "
                         "`upgradebench decide` reads whole");
  }
  expect_error("memfit " + kFx + "/guide", 2, kFx + "/guide: a folder, where a file is read: give one of its files");
}

// JSON lines of another tool (train_peer.py's profile line) are no records of ours cut short: said
// as a file upgradebench does not read (exit 2), not as a damaged one.
TEST(Messages, AnotherToolsJsonLinesAreNotOurRecordsCutShort) {
  const std::string lines = kFx + "/hf_llama_2l_4096.key_averages.json";
  expect_error("history add --db " + fresh_db("foreign_lines") + " " + lines, 2,
               lines + ":1: JSON lines of a \"profile\" record and no context record");
}

// A suite folder holds files: a pipe where a part's records or the manifest should be is refused,
// not read forever.
TEST(Bounds, APipeInASuiteFolderIsRefused) {
  const std::string dir = temp_path("suite_with_pipe");
  fs::remove_all(dir);
  fs::copy(kFx + "/suite_h200_2l", dir, fs::copy_options::recursive);
  fs::remove(dir + "/mamf.jsonl");
  ASSERT_EQ(::mkfifo((dir + "/mamf.jsonl").c_str(), 0600), 0);
  expect_error("decide " + dir + " --to b200-sxm", 1, "mamf.jsonl are not a file");
  fs::remove(dir + "/mamf.jsonl");  // a done part's file gone: the folder damaged, as a pipe there is
  expect_error("decide " + dir + " --to b200-sxm", 1,
               dir + ": part mamf is done, but its records mamf.jsonl are missing: the folder was edited or damaged");
  fs::remove(dir + "/env.json");  // env.json is a part's records too
  expect_error("decide " + dir + " --to b200-sxm", 1, dir + ": part env is done, but its records env.json are missing");
  fs::remove(dir + "/manifest.json");
  ASSERT_EQ(::mkfifo((dir + "/manifest.json").c_str(), 0600), 0);
  expect_error("decide " + dir + " --to b200-sxm", 2, "manifest.json: not a file");
}

// One benchmark.py log is one workload: a header naming another model, batch, world size or
// recompute, or another sequence length than its block's, is refused naming the line.
TEST(SilentlyWrong, OneLogHoldsOneWorkload) {
  const std::string log = slurp(kFx + "/sweep_b200.log");
  const size_t second = log.find("model_size=8b", log.find("model_size=8b") + 1);
  ASSERT_NE(second, std::string::npos);
  std::string changed = log;
  changed.replace(second, std::string("model_size=8b").size(), "model_size=70b");
  expect_error("memfit " + write_file("two_models.log", changed), 1, "model_size=70b here, 8b at line");
  expect_error("memfit " + write_file("header_seq.log", replaced(log, "batch_size=1 seq_len=8192", "batch_size=1 seq_len=0")),
               1, "the header says seq_len=0 in the block of seq_len=8192");
}

// A training step faster than its GPU could do the model's FLOPs is no measurement: compared, its
// interval reached 1.7e9x.
TEST(SilentlyWrong, AStepFasterThanItsGpuCouldGoIsRefused) {
  const std::string path = write_file("step_past_peak.log", replaced(slurp(kFx + "/sweep_b200.log"), R"("exec_time_ms": 1767.9)",
                                                                       R"("exec_time_ms": 0.0000017679)"));
  expect_error("compare " + kFx + "/sweep_h200.log " + path, 1,
               "seqlen 8192: a step of 1.7679e-06 ms is 2.39e+11 TFLOPS of the model's FLOPs, past the b200-sxm's matmul ceiling");
}

// Every command that reads a training run refuses what no GPU can measure: compare did, while
// predict gave an MFU of 40 million percent and report drew a 0.0 ms step.
TEST(SilentlyWrong, EveryReaderOfATrainingRunRefusesWhatNoGpuCanMeasure) {
  const std::string fast = write_file("fast_step.log", std::regex_replace(slurp(kFx + "/sweep_h200.log"),
                                                                          std::regex(R"("exec_time_ms": "(2|3)[0-9]{3}\.00")"),
                                                                          R"("exec_time_ms": "0.001")"));
  for (const std::string& cmd : {"predict " + fast + " --to b200-sxm", "report " + fast + " -o " + fresh_folder("fast_report"),
                                 "memfit " + fast}) {
    expect_error(cmd, 1, "a step of 0.001 ms is");
  }
  // TFLOPS logged beside a time they do not match: one figure said twice that disagrees.
  const std::string rate = write_file("tflops_off.log", replaced(slurp(kFx + "/sweep_h200.log"), R"("tflops": "141.11")",
                                                                 R"("tflops": "900.0")"));
  expect_error("compare " + rate + " " + kFx + "/sweep_b200.log", 1,
               "tflops_off.log:7: seqlen 8192: a step of 2988 ms logged at 900.0 TFLOPS, where the model's FLOPs over that "
               "time are");
  std::string ours = slurp(kFx + "/train_records_h200_ours.jsonl");
  ours = std::regex_replace(ours, std::regex(R"("tflops":[0-9.e+]+)"), R"("tflops":2000)");
  expect_error("compare " + write_file("tflops_2000.jsonl", ours) + " " + kFx + "/train_records_h200_peer.jsonl", 1,
               "logged at 2000.0 TFLOPS, where the model's FLOPs over that time are");
  // A peak past what the GPU holds: memfit fitted it into a negative intercept.
  const std::string memory = write_file("peak_5000.log", replaced(slurp(kFx + "/sweep_h200.log"), R"("peak_mem_gib": "16.3")",
                                                                   R"("peak_mem_gib": "5000.3")"));
  expect_error("memfit " + memory, 1, "a peak of 5000.3 GiB in use, more than the h200-sxm holds");
  const std::string printout = write_file("decompose_peak_9999.txt", replaced(slurp(kFx + "/decompose_h200.txt"), "peak_mem=99.0",
                                                                           "peak_mem=9999.0"));
  expect_error("predict " + printout + " --to b200-sxm", 1, "a peak of 9999 GiB in use, more than the h200-sxm holds");
}

// A copy's rate is its bytes over its time, and no copy out of HBM runs past the GPU's memory
// bandwidth: twenty times the rates gave "20.00x" on one H200.
TEST(SilentlyWrong, ABandwidthRateNoCopyCouldReachIsRefused) {
  const std::string suite = kFx + "/suite_h200_2l/bandwidth.jsonl";
  std::string faster;
  std::string past;
  {
    std::ifstream in(suite);
    for (std::string line; std::getline(in, line);) {
      nlohmann::json r = nlohmann::json::parse(line);
      nlohmann::json p = r;
      if (r.value("type", "") == "bandwidth" && r.contains("gbps") && r["gbps"].is_object()) {
        for (auto& [k, v] : r["gbps"].items()) v = v.get<double>() * 20;
        for (auto& [k, v] : p["gbps"].items()) v = v.get<double>() * 20;
        for (auto& [k, v] : p["time_ms"].items()) {
          if (k != "n" && v.is_number_float()) v = v.get<double>() / 20;
        }
      }
      faster += r.dump() + "\n";
      past += p.dump() + "\n";
    }
  }
  expect_error("compare " + suite + " " + write_file("bandwidth_x20.jsonl", faster), 1,
               "GB/s beside a median time of");
  expect_error("compare " + suite + " " + write_file("bandwidth_past_hbm.jsonl", past), 1,
               "is past the h200-sxm's memory bandwidth");
  // Nor is a GiB buffer L2-resident because its record says so.
  const std::string l2 = write_file("bandwidth_gib_in_l2.jsonl", std::regex_replace(past, std::regex(R"("in_l2":false)"), R"("in_l2":true)"));
  expect_error("compare " + suite + " " + l2, 1, "is marked L2-resident, larger than the h200-sxm's");
  // The bytes a rate counts are what the operation moves (a copy reads and writes them): a record
  // that says otherwise, or names no operation there is, is refused naming the field.
  const std::string records = slurp(suite);
  const std::string moved = write_file("bandwidth_moved.jsonl", std::regex_replace(records, std::regex(R"("bytes_moved":2147483648\.0)"),
                                                                                    R"("bytes_moved":1073741824)",
                                                                                    std::regex_constants::format_first_only));
  ASSERT_NE(moved, suite);
  expect_error("compare " + suite + " " + moved, 1, "\"bytes_moved\" is 1.07374e+09, where a copy of 1073741824 bytes moves");
  const std::string op = write_file("bandwidth_op.jsonl", std::regex_replace(records, std::regex(R"("op":"read")"), R"("op":"teleport")",
                                                                             std::regex_constants::format_first_only));
  expect_error("compare " + suite + " " + op, 1, "\"op\" is \"teleport\": a bandwidth record is a copy, a read or a write");
}

// A matmul ceiling no GPU reaches, a median above its own max, a shape of another dtype: none is
// folded into a MAMF comparison.
TEST(SilentlyWrong, AMamfFigureNoMatmulCouldReachIsRefused) {
  const std::string log = slurp(kFx + "/mamf_finder_h200.txt");
  const std::string guide = kFx + "/guide/mamf_bf16_b200.txt";
  // The best shape's line damaged (its median above its max): left out, and with it the ceiling
  // the footer names, which the other lines do not reach: refused, not a lower ceiling passed on.
  const std::string above = write_file("mamf_median_above_max.txt", replaced(log, "772.8(median)", "9772.8(median)"));
  expect_error("compare " + above + " " + guide, 1, "1 shape line left out as damaged: the best may be among them");
  // A damaged line that is not the best: left out with a note, said once, in no figure.
  const std::string other = write_file("mamf_other_above_max.txt", replaced(log, "761.0(median)", "9761.0(median)"));
  const Result r = run("compare " + other + " " + guide);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("its median 9761 TFLOPS is above its max 781.2"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("9761"), r.out.rfind("9761")) << r.out;
  // The shape lines alone (the footer would disagree with the edited line, and is refused for it).
  const std::string lines = log.substr(0, log.find("Tried "));
  const std::string past = write_file("mamf_past_peak.txt",
                                      replaced(lines, "772.0(mean)  772.8(median)  790.9(max)", "9772.0(mean)  9772.8(median)  9790.9(max)"));
  expect_error("compare " + past + " " + guide, 1, "2048x4096x13312 at 9790.9 TFLOPS is past the h200-sxm's dense bf16 peak");
  std::string records = slurp(kFx + "/mamf_records_h200_a.jsonl");
  const size_t shape = records.find(R"("type":"mamf")");
  ASSERT_NE(shape, std::string::npos);
  const size_t line = records.rfind('\n', shape) + 1;
  const size_t dtype = records.find(R"("dtype":"bf16")", line);
  ASSERT_LT(dtype, records.find('\n', line));
  records.replace(dtype, 14, R"("dtype":"fp8")");
  expect_error("compare " + write_file("mamf_other_dtype.jsonl", records) + " " + kFx + "/mamf_records_h200_b.jsonl", 1,
               "a shape in fp8 in a run of bf16 (its context record): one dtype per file");
  // The run's own dtype in capitals is that dtype, not another.
  records.replace(dtype, 13, R"("dtype":"BF16")");
  const Result capitals = run("compare " + write_file("mamf_dtype_capitals.jsonl", records) + " " + kFx +
                              "/mamf_records_h200_b.jsonl");
  EXPECT_EQ(capitals.err.find("one dtype per file"), std::string::npos) << capitals.err;
}

// mamf-finder.py's footer says again what its shape lines say: a footer that disagrees (a mean
// of 5000 TFLOPS over lines of 700) is refused, not compared.
TEST(SilentlyWrong, AMamfFooterThatDisagreesWithItsLinesIsRefused) {
  const std::string log = slurp(kFx + "/mamf_finder_real_h200.txt");
  const size_t at = log.find("arithmetic mean: ");
  ASSERT_NE(at, std::string::npos);
  std::string edited = log;
  edited.replace(at, log.find('\n', at) - at, "arithmetic mean: 5000.0 TFLOPS");
  expect_error("compare " + kFx + "/mamf_finder_real_h200.txt " + write_file("mamf_footer_5000.txt", edited), 1,
               "the footer's arithmetic mean 5000 TFLOPS is not what its");
  // A shape line cut out: the footer still counts 79 shapes tried.
  const size_t line = log.rfind('\n', log.find(" 3 |  679.9(mean)"));
  ASSERT_NE(line, std::string::npos) << "the fixture numbers its shape lines";
  const std::string cut = log.substr(0, line) + log.substr(log.find('\n', line + 1));
  expect_error("compare " + kFx + "/mamf_finder_real_h200.txt " + write_file("mamf_line_cut.txt", cut), 1,
               "the footer counts 79 shapes, the file has 78 shape lines");
  // The best figure's shape edited: no shape line gives it there.
  expect_error("compare " + kFx + "/mamf_finder_real_h200.txt " +
                   write_file("mamf_footer_shape.txt", replaced(log, "median: 768.2 TFLOPS @ 2816x4096x4096",
                                                                "median: 768.2 TFLOPS @ 4096x4096x4096")),
               1, "the footer's best median is at 4096x4096x4096, and no shape line of that shape gives 768.2 TFLOPS");
}

// A measurement whose own check against the reference failed timed something else: left out,
// and said, as a collective whose output was wrong is.
TEST(SilentlyWrong, AMeasurementThatFailedItsOwnCheckIsLeftOut) {
  const std::string bandwidth = kFx + "/suite_h200_2l/bandwidth.jsonl";
  std::string failed = measured_again(slurp(bandwidth), 1.001);  // another measurement, one of whose copies failed
  const size_t check = failed.find(R"("check":"ok")");
  ASSERT_NE(check, std::string::npos);
  failed.replace(check, 12, R"("check":"failed")");
  const Result r = run("compare " + bandwidth + " " + write_file("bandwidth_failed_check.jsonl", failed));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE((r.out + r.err).find("left out: its check says \"failed\", not \"ok\""), std::string::npos) << r.out << r.err;
  std::string attention = measured_again(slurp(kFx + "/attention_records_h200.jsonl"), 1.001);
  const size_t ok = attention.find(R"("non_finite":0,"ok":true)");
  ASSERT_NE(ok, std::string::npos);
  attention.replace(ok, 24, R"("non_finite":5,"ok":false)");
  const Result a = run("compare " + kFx + "/attention_records_h200.jsonl " + write_file("attention_failed_check.jsonl", attention));
  EXPECT_NE((a.out + a.err).find("left out: its check against the reference failed"), std::string::npos) << a.out << a.err;
}

// A step's batch is its run's: one that says another would count its tokens wrongly.
TEST(SilentlyWrong, AStepOfAnotherBatchThanItsRunIsRefused) {
  const std::string records = std::regex_replace(slurp(kFx + "/records_h200.jsonl"),
                                                 std::regex(R"("type": ?"train_step")"), R"("type": "train_step", "batch": 2)");
  expect_error("memfit " + write_file("step_batch_2.jsonl", records) + " --capacity-gib 130", 1,
               "a step of batch 2 in a run of batch 1 (its context record)");
}

// A printout's length and its FLOPs say one thing twice, for the model it ran: an 8k step
// labelled 64k was predicted as a 64k one.
TEST(SilentlyWrong, APrintoutsLengthIsCheckedAgainstItsWork) {
  const std::string printout = write_file("decompose_seq_64k.txt", replaced(slurp(kFx + "/decompose_h200.txt"), "seq=8192", "seq=65536"));
  expect_error("predict " + printout + " --to b200-sxm", 1, "a step of 421.65 TFLOP is not llama-3.1-8b's work at 65536 tokens");
}

// Two printouts of different levers (recompute, sharding, offload) are two workloads.
TEST(SilentlyWrong, DecompositionsWithOtherLeversNeedForce) {
  std::string b200 = slurp(kFx + "/decompose_b200.txt");
  b200 = replaced(replaced(b200, "gc=0", "gc=1"), "zero=2", "zero=3");
  const std::string other = write_file("decompose_other_levers.txt", b200);
  expect_error("compare " + kFx + "/decompose_h200.txt " + other, 2, "different levers (gc 0 vs 1, zero 2 vs 3, old vs new)");
  const Result forced = run("compare " + kFx + "/decompose_h200.txt " + other + " --force");
  ASSERT_EQ(forced.code, 0) << forced.err;
  EXPECT_NE(forced.out.find("forced: different levers: gc 0 vs 1"), std::string::npos) << forced.out;
  // A collective record that does not say whether its output was checked is not a checked one.
  const std::string nccl = std::regex_replace(slurp(kFx + "/nccl_records_h200x2_plain.jsonl"), std::regex(R"("wrong":0)"),
                                              R"("wrong":null)", std::regex_constants::format_first_only);
  expect_error("compare " + write_file("nccl_wrong_null.jsonl", nccl) + " " + kFx + "/nccl_records_h200x2_graph.jsonl", 1,
               "no \"wrong\" count: whether the output passed its check is not known");
  const std::string unsaid = std::regex_replace(slurp(kFx + "/nccl_records_h200x2_plain.jsonl"), std::regex(R"(,"wrong":0)"), "",
                                                std::regex_constants::format_first_only);
  expect_error("compare " + write_file("nccl_wrong_absent.jsonl", unsaid) + " " + kFx + "/nccl_records_h200x2_graph.jsonl", 1,
               "no \"wrong\" count");
}

// Between two runs of one format, a lever one of them does not name is that format's default:
// ZeRO-3 said on one side only is still another workload.
TEST(SilentlyWrong, ALeverOneRunLeavesOutIsItsDefault) {
  const std::string sharded = write_file("rerun_zero3.jsonl", replaced(slurp(kFx + "/records_h200_rerun.jsonl"),
                                                                      R"("checkpointing": true)",
                                                                      R"("checkpointing": true, "zero_stage": 3)"));
  expect_error("compare " + kFx + "/records_h200.jsonl " + sharded, 2, "different zero_stage: 0 (not said) vs 3");
}

// An out-of-memory record at a length whose steps were measured in the same run: said, not dropped.
TEST(SilentlyWrong, AnOutOfMemoryAtAMeasuredLengthIsSaid) {
  const std::string both = write_file("oom_at_measured.jsonl", slurp(kFx + "/records_h200.jsonl") +
      R"({"type": "train_oom", "seqlen": 8192, "batch": 1, "what": "arena", "bytes": 1000, "error": "oom"})" + "\n");
  const Result r = run("memfit " + both + " --capacity-gib 130");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("seqlen 8192 out of memory after steps measured at it"), std::string::npos) << r.err;
}

// A capacity below what the run holds before any token: nothing fits, and it says so.
TEST(SilentlyWrong, ACapacityBelowTheModelsStateFitsNothing) {
  const Result r = run("memfit --capacity-gib 0.001 " + kFx + "/records_h200.jsonl");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("longest sequence that fits: none: the memory before any token"), std::string::npos) << r.out;
}

// Our MAMF records: a shape whose timed algorithm failed its check is left out, and a shape
// whose TFLOPS are not its 2MNK over its time is refused.
TEST(SilentlyWrong, AMamfRecordIsItsOwnCheckAndItsOwnWork) {
  std::vector<nlohmann::json> records;
  {
    std::ifstream in(kFx + "/mamf_records_h200_a.jsonl");
    for (std::string line; std::getline(in, line);) records.push_back(nlohmann::json::parse(line));
  }
  const auto written = [&](const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
    std::string text;
    for (size_t i = 0; i < records.size(); ++i) {
      nlohmann::json r = records[i];
      if (i == 6) edit(r);
      text += r.dump() + "\n";
    }
    return write_file(name, text);
  };
  ASSERT_EQ(records[6].value("type", ""), "mamf");
  const std::string failed = written("mamf_winner_failed.jsonl", [](nlohmann::json& r) {
    for (auto& c : r["checks"]) {
      if (c["rank"] == r["algo"]["rank"]) c["ok"] = false, c["failures"] = 5;
    }
  });
  const Result r = run("compare " + failed + " " + kFx + "/mamf_records_h200_b.jsonl");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE((r.out + r.err).find("left out: its timed algorithm (rank 0) failed its check"), std::string::npos) << r.out << r.err;
  const std::string wider = written("mamf_other_m.jsonl", [](nlohmann::json& r) { r["m"] = 20480; });
  expect_error("compare " + wider + " " + kFx + "/mamf_records_h200_b.jsonl", 1, "TFLOPS of its 2MNK: one of the figures is wrong");
  // mamf-finder.py's footer alone, every shape line damaged: nothing to read it against.
  const std::string damaged = write_file("mamf_lines_damaged.txt", replaced(slurp(kFx + "/guide/mamf_bf16_h200.txt"),
                                                                            "794.5(median)", "900.0(median)"));
  expect_error("compare " + damaged + " " + kFx + "/guide/mamf_bf16_b200.txt", 1, "every shape line is damaged or impossible");
}

// A lever one block of a benchmark.py log leaves out, or a second run of our records changes
// under its older key, is another workload in the file.
TEST(SilentlyWrong, ALeverLeftOutOrRenamedWithinOneLogIsRefused) {
  std::string log = slurp(kFx + "/guide/sweep_h200.log");
  const size_t second = log.find("# gpu=", log.find("# gpu=") + 1);
  ASSERT_NE(second, std::string::npos);
  const size_t gc = log.find("gc=1 ", second);
  ASSERT_LT(gc, log.find('\n', second));
  log.erase(gc, 5);
  expect_error("memfit " + write_file("gc_left_out.log", log), 1, "gc=(not said) here, 1 at line");
  std::string records = slurp(kFx + "/records_h200.jsonl");
  const std::string context = records.substr(0, records.find('\n') + 1);
  const size_t cut = [&] {
    size_t p = 0;
    for (int i = 0; i < 7; ++i) p = records.find('\n', p) + 1;
    return p;
  }();
  records.insert(cut, replaced(context, R"("checkpointing": true)", R"("checkpointing": false)"));
  expect_error("memfit " + write_file("checkpointing_changed.jsonl", records), 1,
               "a second context record for another workload (checkpointing false here, true before)");
}

// A step read twice in one point (a line pasted twice) is counted once, and said.
TEST(SilentlyWrong, AStepReadTwiceIsCountedOnce) {
  const std::string log = slurp(kFx + "/sweep_h200.log");
  const size_t at = log.find(R"({"step": 2,)");
  const std::string line = log.substr(at, log.find('\n', at) + 1 - at);
  const std::string twice = write_file("step_twice.log", log.substr(0, at) + line + log.substr(at));
  const Result r = run("compare " + twice + " " + kFx + "/sweep_b200.log --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const Result once = run("compare " + kFx + "/sweep_h200.log " + kFx + "/sweep_b200.log --json");
  EXPECT_EQ(nlohmann::json::parse(r.out)["rows"], nlohmann::json::parse(once.out)["rows"]);
  EXPECT_NE(r.out.find("step 2 of seqlen 8192 read again (first at line"), std::string::npos) << r.out;
  std::string records = slurp(kFx + "/train_records_h200_ours.jsonl");
  const size_t fifth = [&] {
    size_t p = 0;
    for (int i = 0; i < 4; ++i) p = records.find('\n', p) + 1;
    return p;
  }();
  const std::string step = records.substr(fifth, records.find('\n', fifth) + 1 - fifth);
  const Result memfit = run("memfit " + write_file("record_twice.jsonl", records.insert(fifth, step)) + " --capacity-gib 130");
  ASSERT_EQ(memfit.code, 0) << memfit.err;
  EXPECT_NE(memfit.err.find("read again (first at line 5): counted once"), std::string::npos) << memfit.err;
  // The same step with another time: two measurements of one step, and no telling which is right.
  std::string other = line;
  other.replace(other.find("2988.00"), 7, "2990.00");
  expect_error("compare " + write_file("step_twice_other.log", log.substr(0, at) + other + log.substr(at)) + " " + kFx +
                   "/sweep_b200.log", 1, "step 2 of seqlen 8192 again, in 2988 ms where line 7 says 2990 ms");
  std::string other_step = step;
  other_step.replace(other_step.find("79.10553741455078"), 17, "79.2");
  expect_error("memfit " + write_file("record_twice_other.jsonl", slurp(kFx + "/train_records_h200_ours.jsonl").insert(fifth, other_step)) +
                   " --capacity-gib 130", 1, "step 3 of seqlen 4096 again, in 79.10553741455078 ms where line 5 says 79.2 ms: one step, two measurements");
}

// What makes a workload (memory levers, sharding, precision) is one per log, as the model is.
TEST(SilentlyWrong, MemoryLeversChangedWithinOneLogAreRefused) {
  const std::string log = slurp(kFx + "/sweep_h200.log");
  const size_t second = log.find("zero=3", log.find("zero=3") + 1);
  ASSERT_NE(second, std::string::npos);
  std::string changed = log;
  changed.replace(second, 6, "zero=1");
  expect_error("memfit " + write_file("two_stages.log", changed), 1, "zero=1 here, 3 at line");
  const std::string records = slurp(kFx + "/train_records_h200_ours.jsonl");
  const size_t context = records.find(R"("type":"context")", records.find(R"("type":"context")") + 1);
  ASSERT_NE(context, std::string::npos) << "the fixture holds several runs";
  const size_t line = records.rfind('\n', context) + 1;
  std::string edited = records;
  const std::string key = R"("activation_checkpointing":false)";
  const size_t at = edited.find(key, line);
  ASSERT_NE(at, std::string::npos);
  edited.replace(at, key.size(), R"("activation_checkpointing":true)");
  expect_error("memfit " + write_file("levers_changed.jsonl", edited) + " --capacity-gib 130", 1,
               "a second context record for another workload (activation_checkpointing true here, false before)");
  expect_error("memfit " + kFx + "/sweep_h200.log --capacity-gib 80 --for b200-sxm", 2,
               "--capacity-gib and --for both give the capacity: give one");
  // Full and selective checkpointing: both recompute, they keep different things.
  std::string kept = slurp(kFx + "/suite_h200_2l/sweep.jsonl");
  const std::string off = R"("activation_checkpointing":false)";
  for (size_t at = 0; (at = kept.find(off, at)) != std::string::npos;) kept.replace(at, off.size(), R"("activation_checkpointing":true)");
  const std::string null_kept = R"("checkpointing_kept":null)";
  const size_t run1 = kept.find(null_kept), run2 = kept.find(null_kept, run1 + 1);
  ASSERT_NE(run2, std::string::npos) << "the fixture holds two runs";
  kept.replace(run2, null_kept.size(), R"("checkpointing_kept":"layer inputs, attention outputs and statistics")");
  kept.replace(run1, null_kept.size(), R"("checkpointing_kept":"layer inputs")");
  expect_error("memfit " + write_file("kept_changed.jsonl", kept) + " --capacity-gib 130", 1,
               "(checkpointing_kept layer inputs, attention outputs and statistics here, layer inputs before)");
}

// An option that cannot apply is refused, not ignored: the user meant something by it.
TEST(Messages, AnOptionThatCannotApplyIsRefused) {
  const std::string logs = kFx + "/sweep_h200.log " + kFx + "/sweep_b200.log";
  expect_error("compare " + logs + " --train-gpus 8", 2, "--train-gpus is for the time to train --tokens: give --tokens too");
  expect_error("compare " + logs + " --pue 1.3", 2, "--pue is for the cost of --power-price: give --power-price too");
  expect_error("compare " + logs + " --power-price 0.1", 2,
               "--power-price prices the energy per token, and neither");
  expect_error("predict " + kFx + "/sweep_h200.log --to b200-sxm --carry-from 8k", 2,
               "--carry-from picks the measured length that --seqlen carries from: give --seqlen too");
  expect_error("predict " + kFx + "/sweep_h200.log --to b200-sxm --model llama-3.1-8b --seqlen 8k,8k", 2,
               "--seqlen: 8192 is given twice");
  expect_error("flops --seqlen 4096,4096", 2, "--seqlen: 4096 is given twice");
  expect_error("memfit " + kFx + "/records_h200.jsonl --for ''", 2, "--for");
  expect_error("report " + kFx + "/records_h200.jsonl -o /tmp/report_one --tokens 1e12 --price-new 3", 2,
               "report of one log: --price-new, --tokens are for comparing two runs (OLD NEW)");
  expect_error("flops --doc-len 8192 --seqlen 4096", 2, "--doc-len 8192: longer than the sequence of 4096 tokens");
}

// An empty file where a JSON document is read says so, not the JSON library's words.
// An empty history file (a new database) is said to be empty, not an old one to bring up to date.
TEST(Messages, AnEmptyHistoryIsSaidToBeEmpty) {
  const std::string db = write_file("empty_history.db", "");
  expect_error("history list --db " + db, 1, "history database " + db + ": empty, no runs yet");
}

TEST(Messages, AnEmptyJsonFileIsSaidToBeEmpty) {
  const std::string empty = write_file("empty_config.json", "\n");
  expect_error("flops --model " + empty, 1, empty + ": empty: not a JSON document");
}

// An attention figure past its GPU's dense peak is no measurement: compared, it gave a 10x speedup.
TEST(SilentlyWrong, AnAttentionFigurePastTheGpusPeakIsRefused) {
  const std::string path = write_file("attention_past_peak.log",
                                      replaced(slurp(kFx + "/attention_h200.log"), R"("fwd_ms": 0.922, "fwd_tflops": 596.3)",
                                               R"("fwd_ms": 0.0922, "fwd_tflops": 5963)"));
  expect_error("compare " + path + " " + kFx + "/attention_b200.log", 1,
               "seqlen 8192: 5963.0 TFLOPS is past the h200-sxm's dense bf16 peak");
}

// An attention log without its header names no GPU and no shape: every check was skipped and a
// figure 100x past any GPU's peak compared.
TEST(SilentlyWrong, AnAttentionLogWithoutItsHeaderIsRefused) {
  std::string log = slurp(kFx + "/attention_h200.log");
  log = std::regex_replace(log, std::regex("# gpu=[^\n]*\n"), "");
  const std::string path = write_file("attention_no_header.log", log);
  expect_error("compare " + path + " " + kFx + "/attention_b200.log", 1,
               "attention_no_header.log:2: a result line whose `# gpu=` header above it does not give nheads=, head_dim= and causal=");
  expect_error("compare " + write_file("attention_causal_maybe.log", replaced(slurp(kFx + "/attention_h200.log"), "causal=True",
                                                                            "causal=maybe")) + " " + kFx + "/attention_b200.log",
               1, "attention_causal_maybe.log:2: causal=maybe is neither True nor False");
  // A header that leaves out the problem's shape is no better.
  const std::string partial = write_file("attention_partial_header.log", replaced(slurp(kFx + "/attention_h200.log"), " nheads=32", ""));
  expect_error("compare " + partial + " " + kFx + "/attention_b200.log", 1, "does not give nheads=, head_dim= and causal=");
}

// A line's time and TFLOPS say one thing twice (the shape's FLOPs over the time): a time 1000x
// longer beside unchanged TFLOPS gave a ratio from whichever figure compare read.
TEST(SilentlyWrong, AnAttentionTimeThatDisagreesWithItsTflopsIsRefused) {
  const std::string peer = write_file("attention_time_off.log",
                                      replaced(slurp(kFx + "/attention_h200.log"), R"("fwd_bwd_ms": 3.73)", R"("fwd_bwd_ms": 3730)"));
  expect_error("compare " + peer + " " + kFx + "/attention_b200.log", 1,
               "attention_time_off.log:4: fwd_bwd_ms 3730 and fwd_bwd_tflops 515.1 disagree: seqlen 8192 is 1.924 TFLOP, "
               "which at 515.1 TFLOPS takes 3.735 ms");
  // Our records carry their FLOPs: the same check without a header.
  std::string ours = slurp(kFx + "/attention_records_h200.jsonl");
  ours = std::regex_replace(ours, std::regex(R"("fwd_ms":[0-9.]+)"), R"("fwd_ms":50)", std::regex_constants::format_first_only);
  const std::string records = write_file("attention_records_time_off.jsonl", ours);
  expect_error("compare " + records + " " + kFx + "/attention_b200.log", 1, "fwd_ms 50 and fwd_tflops");
}

TEST(SilentlyWrong, AnAttentionLineWithNoTimeOrNoWorkIsRefused) {
  const std::string log = slurp(kFx + "/attention_h200.log");
  for (const auto& [re, bad, said] : {std::tuple{R"("fwd_tflops": [0-9.]+)", R"("fwd_tflops": 0)", "no work measured"},
                                      std::tuple{R"("fwd_ms": [0-9.]+)", R"("fwd_ms": 1e-300)", "less than any kernel takes"}}) {
    const std::string path = write_file("attention_bad.log", std::regex_replace(log, std::regex(re), bad,
                                                                                std::regex_constants::format_first_only));
    const Result r = run("compare " + path + " " + kFx + "/attention_b200.log");
    EXPECT_EQ(r.code, 1) << bad << r.out;
    EXPECT_NE(r.err.find(said), std::string::npos) << r.err;
  }
}

TEST(SilentlyWrong, DecideOfTwoMeasuredGpusRefusesWhatPredictsOrNamesAGpu) {
  const std::string copy = temp_path("suite_copy_for_options");
  fs::remove_all(copy);
  fs::copy(kFx + "/suite_h200_2l", copy, fs::copy_options::recursive);
  for (const char* option : {"--to b200-sxm", "--from a100-sxm", "--seqlens 8k", "--layers 3"}) {
    expect_error("decide " + kFx + "/suite_h200_2l " + copy + " " + option, 2, "goes with one GPU's folder or the catalog");
  }
  expect_error("decide --from h200-sxm --to h200", 2, "--from and --to are both h200-sxm");
  expect_error("decide --from h200-sxm --to b200-sxm --pue 20", 2, "--pue: '20' is outside 1 to 10");
  expect_error("report -o " + fresh_folder("self_report") + " " + kFx + "/sweep_h200.log " + kFx + "/sweep_h200.log", 2,
               "are the same measurement");
}

TEST(Messages, JsonOfAnotherKindIsNoTraceAndNoManifest) {
  for (const char* text : {"{}", "[]", R"({"gpus": []})"}) {
    expect_error("decompose " + write_file("not_trace.json", text), 2, "not a torch.profiler trace");
  }
  const std::string dir = temp_path("suite_array_manifest");
  fs::remove_all(dir);
  fs::copy(kFx + "/suite_h200_2l", dir, fs::copy_options::recursive);
  for (const char* manifest : {"[]", R"({"type": "upgradebench-suite", "version": "1"})"}) {
    std::ofstream(dir + "/manifest.json") << manifest;
    expect_error("decide " + dir + " --to b200-sxm", 2, "not a suite manifest");
  }
}

// A run added while its last line was still being written reads back as the file did.
TEST(ValidInput, AStoredRunWithALastLineCutShortReadsBack) {
  const std::string db = fresh_db("cut_short");
  const Result add = run("history add --json --db " + db + " " + kFx + "/sweep_b200.log");
  ASSERT_EQ(add.code, 0) << add.err;
  const Result r = run("compare " + kFx + "/sweep_h200.log run:1 --force --db " + db);
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST(Messages, DatesAreDatesOfTheCalendar) {
  const std::string db = fresh_db("dates");
  ASSERT_EQ(run("history add --db " + db + " " + kFx + "/sweep_h200.log").code, 0);
  expect_error("history list --since 2026-02-30 --db " + db, 2, "--since: '2026-02-30' is not a date");
  expect_error("history list --until 2026-11-30T99:99 --db " + db, 2, "is not a date");
  for (const char* ok : {"2028-02-29", "2026-11-30T07:01:02Z", "2026-11-30 07", "2026-11-30T07:01"}) {
    EXPECT_EQ(run(fmt::format("history list --until '{}' --db {}", ok, db)).code, 0) << ok;
  }
  // The dates the history stores: a context record's that is not one is refused, a log's line
  // stamped outside the calendar dates nothing.
  const std::string records = slurp(kFx + "/records_h200.jsonl");
  for (const char* bad : {"2026-02-30T10:00:00Z", "not a date", "2026-11-30T08:00:00+99:00", "0000-01-01T00:00:00Z"}) {
    const std::string path = write_file("bad_date.jsonl", replaced(records, "2026-11-30T08:00:00Z", bad));
    expect_error("history add --db " + fresh_db("bad_date") + " " + path, 1,
                 fmt::format("bad_date.jsonl:1: date '{}' is not a time of the calendar", bad));
  }
  const std::string stamped = write_file("bad_stamp.log", replaced(slurp(kFx + "/sweep_h200.log"), "[2026-11-30 10:00:00]",
                                                                    "[2026-11-30 25:61:61]"));
  const std::string stamped_db = fresh_db("bad_stamp");
  ASSERT_EQ(run("history add --db " + stamped_db + " " + stamped).code, 0);
  const Result listed = run("history list --json --db " + stamped_db);
  EXPECT_EQ(listed.out.find("25:61:61"), std::string::npos) << listed.out;
}

// Attention through a sliding window is another problem than full causal attention: a pair of
// them is not one speedup.
TEST(SilentlyWrong, AttentionOfAnotherWindowIsAnotherProblem) {
  // A window of 4096 at 1024 tokens: the same FLOPs (every key is in the window), yet measured as
  // another problem.
  std::string windowed = slurp(kFx + "/attention_records_h200.jsonl");
  const size_t point = windowed.find(R"("seqlen":1024,)");
  ASSERT_NE(point, std::string::npos);
  const size_t at = windowed.rfind(R"("causal":true,)", point);
  ASSERT_NE(at, std::string::npos);
  windowed.insert(at + 14, R"("window":4096,)");
  const std::string path = write_file("attention_window.jsonl", windowed);
  expect_error("compare " + kFx + "/attention_records_h200.jsonl " + path, 2,
               "at seqlen 1024 (window 0 vs 4096, old vs new)");
  // The record's FLOPs are its shape's: a window that would change them without them changing is refused.
  std::string wider = slurp(kFx + "/attention_records_h200.jsonl");
  const size_t p8k = wider.find(R"("seqlen":8192,)");
  ASSERT_NE(p8k, std::string::npos);
  wider.insert(wider.rfind(R"("causal":true,)", p8k) + 14, R"("window":4096,)");
  expect_error("compare " + kFx + "/attention_records_h200.jsonl " + write_file("attention_window_8k.jsonl", wider), 1,
               "is not the attention FLOPs of its shape");
}

// A bench_decompose.py printout without its TOTAL line still has its step: the buckets it split,
// held to the `# wall` line. predict gives the same answer as with the line, never a 0 ms step.
TEST(SilentlyWrong, APrintoutWithoutItsTotalLineIsTheStepItsBucketsSplit) {
  std::string printout = slurp(kFx + "/guide/decompose_h200.txt");
  const size_t total = printout.find("TOTAL ");
  ASSERT_NE(total, std::string::npos);
  const std::string cut = write_file("decompose_no_total.txt", printout.substr(0, total));
  const Result with = run("predict --to b200 " + kFx + "/guide/decompose_h200.txt --json");
  const Result without = run("predict --to b200 " + cut + " --json");
  ASSERT_EQ(with.code, 0) << with.err;
  ASSERT_EQ(without.code, 0) << without.err;
  const auto a = nlohmann::json::parse(with.out).at(0), b = nlohmann::json::parse(without.out).at(0);
  EXPECT_NEAR(a["old_step_ms"].get<double>(), b["old_step_ms"].get<double>(), 1e-9) << without.out.substr(0, 600);
  EXPECT_NEAR(a["speedup"].get<double>(), b["speedup"].get<double>(), 1e-12);
  // Buckets that do not add up to the `# wall` step are refused without the TOTAL line too.
  std::string off = printout.substr(0, total);
  off.replace(off.find("118.1 ms  447.0 TFLOPS"), 22, "218.1 ms  242.0 TFLOPS");
  off.replace(off.find("attention wall share=12.9%"), 26, "attention wall share=21.5%");
  expect_error("predict --to b200 " + write_file("decompose_no_total_off.txt", off), 1,
               "the `# wall` line's step is 914.8 ms, the buckets (no TOTAL line) add up to 1014.8 ms");
}

// predict's measured attention ratio is of one problem on two GPUs, as compare's is: a B200 log
// of another head dim or mask does not scale the H200's attention.
TEST(SilentlyWrong, PredictPairsAttentionOfOneProblemOnly) {
  // Head dim 64 at halved times: the lines' TFLOPS stay true to the new shape's FLOPs.
  const std::string b200 =
      "# gpu=NVIDIA B200 backend=fa4 causal=True nheads=32 nheads_kv=8 head_dim=64\n"
      R"({"seqlen": 8192, "fwd_ms": 0.2925, "fwd_tflops": 940.0, "fwd_bwd_ms": 1.0235, "fwd_bwd_tflops": 940.0})" "\n"
      R"({"seqlen": 32768, "fwd_ms": 4.511, "fwd_tflops": 975.0, "fwd_bwd_ms": 15.788, "fwd_bwd_tflops": 975.0})" "\n";
  expect_error("predict --to b200 " + kFx + "/guide/decompose_h200.txt --measured " + kFx + "/guide/attention_h200.log " +
                   write_file("attention_b200_d64.log", b200),
               2, "measured different attention problems (head_dim 128 vs 64, old vs new)");
}

// bench_flash_attn.py's dtype= (torch's names read as ours): a log that leaves it out ran bf16, as
// the script does. An fp8 run beside it is another problem, in compare and in predict, which also
// holds a bf16 step's attention to bf16 runs on both GPUs.
TEST(SilentlyWrong, AttentionOfAnotherDtypeIsAnotherProblem) {
  const std::string h200 = kFx + "/attention_h200.log", b200 = slurp(kFx + "/attention_b200.log");
  const std::string header = "head_dim=128";
  const std::string fp8 = write_file("attention_b200_fp8.log", replaced(b200, header, header + " dtype=float8_e4m3fn"));
  const std::string bf16 = write_file("attention_b200_bf16.log", replaced(b200, header, header + " dtype=torch.bfloat16"));
  expect_error("compare " + h200 + " " + fp8, 2, "measured different attention problems (dtype bf16 (not said) vs fp8, old vs new)");
  EXPECT_EQ(run("compare " + h200 + " " + bf16).code, 0);
  const std::string step = "predict --to b200 " + kFx + "/decompose_h200.txt --measured ";
  expect_error(step + h200 + " " + fp8, 2, fp8 + ": an attention run of fp8; predict scales bf16 attention by bf16 attention runs");
  const std::string h200_fp8 = write_file("attention_h200_fp8.log", replaced(slurp(h200), header, header + " dtype=fp8"));
  expect_error(step + h200_fp8 + " " + bf16, 2, h200_fp8 + ": an attention run of fp8");
  EXPECT_EQ(run(step + h200 + " " + bf16).code, 0);
}

// A JSON object that gives one key twice says two things: the parser would keep the last without
// a word. Refused in a benchmark.py step, in our records and in a model's config.json.
TEST(SilentlyWrong, AKeyGivenTwiceInOneObjectIsRefused) {
  const std::string log = slurp(kFx + "/sweep_h200.log");
  const size_t at = log.find(R"("warmup": false,)");
  ASSERT_NE(at, std::string::npos);
  std::string twice = log;
  twice.insert(at, R"("warmup": true, )");
  expect_error("compare " + write_file("warmup_twice.log", twice) + " " + kFx + "/sweep_b200.log", 1,
               "the key \"warmup\" is given twice in one object");
  std::string records = slurp(kFx + "/train_records_h200_ours.jsonl");
  const size_t layers = records.find(R"("layers":)");
  ASSERT_NE(layers, std::string::npos);
  records.insert(layers, R"("layers":32,)");
  expect_error("memfit " + write_file("layers_twice.jsonl", records) + " --capacity-gib 130", 1,
               "the key \"layers\" is given twice in one object");
  std::string config = slurp(std::string(UB_DATA_DIR) + "/models/llama-3.1-8b.json");
  config.insert(config.find("\"num_hidden_layers\""), "\"num_hidden_layers\": 4, ");
  expect_error("flops --model " + write_file("config_twice.json", config) + " --seqlen 8k", 1,
               "the key \"num_hidden_layers\" is given twice in one object");
}

// benchmark.py says its GPU, levers and software in every block: a block without its own header
// (pasted from another log) would silently take the block before it's.
TEST(SilentlyWrong, ABlockWithoutItsOwnHeaderIsRefused) {
  const std::string log = slurp(kFx + "/sweep_h200.log");
  const size_t block = log.find("===== seq_len=131072");
  ASSERT_NE(block, std::string::npos);
  for (const std::string header : {"# gpu=", "# env:"}) {
    const size_t at = log.find(header, block);
    const std::string cut = log.substr(0, at) + log.substr(log.find('\n', at) + 1);
    expect_error("compare " + write_file("block_without_header.log", cut) + " " + kFx + "/sweep_b200.log", 1,
                 "a step of the block of seq_len=131072 (line 28), which has no `" + header + "` line of its own");
  }
}

// A GPU the catalog does not know is refused naming the input that measured it, --from or not.
TEST(Messages, AnUnknownGpuIsRefusedNamingTheInput) {
  const std::string printout = replaced(slurp(kFx + "/guide/decompose_h200.txt"), "gpu=NVIDIA H200", "gpu=NVIDIA H100");
  const std::string path = write_file("decompose_h100_unknown.txt", printout);
  for (const std::string from : {"", " --from h200"}) {
    expect_error("predict --to b200" + from + " " + path, 2,
                 "decompose_h100_unknown.txt: the GPU it measured: unknown GPU 'NVIDIA H100'");
  }
}

// A header line that gives one key twice says two things (an H200 log whose header also says
// gpu=NVIDIA B200 was compared as a B200's): refused, in each reader of such headers.
TEST(SilentlyWrong, AHeaderKeyGivenTwiceIsRefused) {
  const std::string sweep = replaced(slurp(kFx + "/sweep_h200.log"), "gpu=NVIDIA H200 ", "gpu=NVIDIA H200 gpu=NVIDIA B200 ");
  expect_error("compare " + write_file("sweep_gpu_twice.log", sweep) + " " + kFx + "/sweep_b200.log", 1,
               "gpu= is given twice in one header line (NVIDIA H200 and NVIDIA B200)");
  const std::string attention = replaced(slurp(kFx + "/guide/attention_h200.log"), "causal=True", "causal=True causal=False");
  expect_error("compare " + write_file("attention_causal_twice.log", attention) + " " + kFx + "/guide/attention_b200.log", 1,
               "causal= is given twice in one header line");
  const std::string printout = replaced(slurp(kFx + "/guide/decompose_h200.txt"), "zero=2", "zero=2 zero=3");
  expect_error("decompose " + write_file("decompose_zero_twice.txt", printout), 1, "zero= is given twice in one header line");
}

// One measurement given twice to predict (the same file, or a copy) would be predicted twice.
TEST(SilentlyWrong, PredictRefusesAMeasurementGivenTwice) {
  const std::string copy = write_file("sweep_h200_copy.log", slurp(kFx + "/sweep_h200.log"));
  for (const std::string& second : {kFx + "/sweep_h200.log", copy}) {
    expect_error("predict " + kFx + "/sweep_h200.log " + second + " --to b200", 2,
                 "are the same measurement: given twice it is predicted twice");
  }
}

// A length measured out of memory on the log's GPU caps the longest fit for any capacity no larger
// than that GPU's: --capacity-gib 130 on an H200 log does not fit what ran out of memory there.
TEST(SilentlyWrong, AMeasuredOutOfMemoryCapsAGivenCapacityToo) {
  const Result own = run("memfit " + kFx + "/sweep_h200.log --json");
  const Result given = run("memfit " + kFx + "/sweep_h200.log --capacity-gib 130 --json");
  ASSERT_EQ(own.code, 0) << own.err;
  ASSERT_EQ(given.code, 0) << given.err;
  const auto a = nlohmann::json::parse(own.out), b = nlohmann::json::parse(given.out);
  ASSERT_LT(a["max_seqlen"].get<int64_t>(), 262144) << own.out;
  EXPECT_EQ(b["max_seqlen"], a["max_seqlen"]) << given.out;
  // More memory than the GPU that ran out has: the measured failure says nothing there.
  const Result more = run("memfit " + kFx + "/sweep_h200.log --capacity-gib 180 --json");
  ASSERT_EQ(more.code, 0) << more.err;
  EXPECT_GT(nlohmann::json::parse(more.out)["max_seqlen"].get<int64_t>(), 262144);
}

// A printout's figures no GPU can have are refused by every command that reads it, as predict
// refuses them: a peak past the GPU's memory, an MFU that is not the bucket's TFLOPS over the peak.
TEST(SilentlyWrong, APrintoutsImpossibleFiguresAreRefusedByDecomposeAndCompare) {
  const std::string printout = slurp(kFx + "/decompose_h200.txt");
  const std::string memory = write_file("decompose_999gib.txt", replaced(printout, "peak_mem=99.0", "peak_mem=999.0"));
  for (const std::string& cmd : {"decompose " + memory, "compare " + memory + " " + kFx + "/decompose_b200.txt"}) {
    expect_error(cmd, 1, "a peak of 999 GiB in use, more than the h200-sxm holds");
  }
  const size_t mfu = printout.find("MFU ");
  ASSERT_NE(mfu, std::string::npos);
  std::string wrong = printout;
  wrong.replace(mfu, printout.find('%', mfu) - mfu, "MFU 4.97");
  expect_error("decompose " + write_file("decompose_mfu_wrong.txt", wrong), 1, "MFU 4.97% is not its");
}

// A depth given with --layers that the log's steps cannot have done is the option's mistake as
// much as the log's: a usage error that says so.
TEST(Messages, ALayersOptionTheLogCannotHaveRunIsAUsageError) {
  expect_error("predict " + kFx + "/sweep_h200.log --to b200 --layers 4", 2,
               "(the model's FLOPs as --model (the log's) --layers 4 count them: if the log ran another depth or model");
}

// A printout's `# wall` line says its attention shares again: shares its buckets do not give
// were edited, one side or the other.
TEST(SilentlyWrong, APrintoutsSharesMustBeItsBuckets) {
  const std::string printout = slurp(kFx + "/decompose_h200.txt");
  expect_error("decompose " + write_file("decompose_share.txt", replaced(printout, "attention FLOP share=12.5%",
                                                                          "attention FLOP share=60.0%")),
               1, "the `# wall` line's attention FLOP share is 60%, its buckets give 12.5%");
  expect_error("compare " + write_file("decompose_wshare.txt", replaced(printout, "attention wall share=11.8%",
                                                                         "attention wall share=90.0%")) +
                   " " + kFx + "/decompose_b200.txt",
               1, "attention wall share is 90%, its buckets give 11.8%");
}

}  // namespace

// One measurement is stored once, whatever its context record or header now says: a copy whose
// date and host were edited, or a peer's log with one header line changed, is the run already
// stored, said so in its row, and the history holds one run of it.
TEST(SilentlyWrong, TheHistoryStoresOneMeasurementOnceUnderAnyContext) {
  const std::string db = fresh_db("same_figures");
  const std::string records = slurp(kFx + "/records_h200.jsonl");
  const std::string edited = write_file("same_figures.jsonl",
                                        replaced(replaced(records, "2026-11-30T08:00:00Z", "2026-12-01T09:00:00Z"),
                                                 R"("host": "test")", R"("host": "elsewhere")"));
  ASSERT_EQ(run("history add --db " + db + " " + kFx + "/records_h200.jsonl").code, 0);
  const Result again = run("history add --db " + db + " " + edited + " --json");
  ASSERT_EQ(again.code, 0) << again.err;
  const nlohmann::json j = nlohmann::json::parse(again.out);
  EXPECT_EQ(j["files"][0]["runs"][0]["status"], "same measurement");
  EXPECT_EQ(j["files"][0]["runs"][0]["id"], 1);
  const std::string log = slurp(kFx + "/sweep_h200.log");
  ASSERT_EQ(run("history add --db " + db + " " + kFx + "/sweep_h200.log").code, 0);
  const std::string peer = write_file("same_figures.log", std::regex_replace(log, std::regex("python=3\\.12\\.12"),
                                                                              "python=3.12.13"));
  const Result table = run("history add --db " + db + " " + peer);
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("same measurement"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("1 run not stored: the same figures"), std::string::npos) << table.out;
  const Result list = run("history list --db " + db + " --json");
  ASSERT_EQ(list.code, 0) << list.err;
  EXPECT_EQ(nlohmann::json::parse(list.out)["runs"].size(), 2u) << list.out;
  // A measurement of its own (another date, its steps timed otherwise) is stored; a copy with a
  // length left out is the measurement stored.
  const std::string other = write_file("other_figures.jsonl",
                                       measured_again(replaced(records, "2026-11-30T08:00:00Z", "2026-12-02T09:00:00Z"), 1.002));
  std::string fewer;
  {
    std::istringstream in(replaced(records, "2026-11-30T08:00:00Z", "2026-12-03T09:00:00Z"));
    for (std::string line; std::getline(in, line);) {
      if (line.find(R"("seqlen": 4096)") == std::string::npos) fewer += line + "\n";
    }
  }
  const Result subset = run("history add --db " + db + " " + write_file("fewer_lengths.jsonl", fewer) + " --json");
  ASSERT_EQ(subset.code, 0) << subset.err;
  EXPECT_EQ(nlohmann::json::parse(subset.out)["files"][0]["runs"][0]["status"], "same measurement") << subset.out;
  const Result added = run("history add --db " + db + " " + other + " --json");
  ASSERT_EQ(added.code, 0) << added.err;
  EXPECT_EQ(nlohmann::json::parse(added.out)["files"][0]["runs"][0]["status"], "added") << added.out;
}

// A suite's training sweep runs the lengths its manifest names (and --find-max's probes, where
// the sweep ran with it): a sweep file of other lengths is another run.
TEST(SilentlyWrong, ASuitesSweepOfLengthsItsManifestDoesNotNameIsRefused) {
  const std::string dir = temp_path("suite_other_lengths");
  fs::remove_all(dir);
  fs::copy(kFx + "/suite_h200_2l", dir, fs::copy_options::recursive);
  nlohmann::json m = nlohmann::json::parse(slurp(dir + "/manifest.json"));
  m["workload"]["seqlens"] = {2048, 8192};
  std::ofstream(dir + "/manifest.json") << m.dump(2);
  const Result r = run("decide " + dir + " --to b200-sxm");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("a step of 4096 tokens, a length the manifest does not ask for (2048, 8192)"), std::string::npos)
      << r.err;
}

// Two GPUs of one name are two GPUs: a part whose records name another GPU's UUID than the
// suite's env.json was measured on another machine.
TEST(SilentlyWrong, ASuitePartOfAnotherGpuOfTheSameNameIsRefused) {
  const std::string dir = temp_path("suite_other_uuid");
  fs::remove_all(dir);
  fs::copy(kFx + "/suite_h200_2l", dir, fs::copy_options::recursive);
  const std::string other = replaced(slurp(dir + "/attention.jsonl"), "GPU-5d5ef7b4-6d9f-1c74-d0fa-60ace3bdd669",
                                     "GPU-00000000-6d9f-1c74-d0fa-60ace3bdd669");
  std::ofstream(dir + "/attention.jsonl") << other;
  const Result r = run("decide " + dir + " --to b200-sxm");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("part attention (attention.jsonl) ran on GPU GPU-00000000-6d9f-1c74-d0fa-60ace3bdd669, which is "
                       "not the suite's (env.json: GPU-5d5ef7b4"), std::string::npos) << r.err;
}

// Warm-up steps count in no figure and are still held to what a GPU can do: one logged at ten
// times the TFLOPS its time gives, or faster than the GPU could do the model's FLOPs.
TEST(SilentlyWrong, AWarmupStepIsHeldToTheSameLimits) {
  const std::string log = slurp(kFx + "/sweep_h200.log");
  const std::string rate = write_file("warmup_rate.log", replaced(log, R"("tflops": "78.08")", R"("tflops": "780.80")"));
  expect_error("compare " + rate + " " + kFx + "/sweep_b200.log", 1,
               fmt::format("warmup_rate.log:{}: seqlen 8192: a step of 5400 ms logged at 780.8 TFLOPS", line_of(log, "78.08")));
  const std::string fast = write_file("warmup_fast.log", replaced(replaced(log, R"("exec_time_ms": "5400.00")",
                                                                           R"("exec_time_ms": "5.40")"),
                                                                  R"("tflops": "78.08")", R"("tflops": "78080.00")"));
  expect_error("compare " + fast + " " + kFx + "/sweep_b200.log", 1, "a step of 5.4 ms is");
}

// compare and report take the cost and time options for training runs only: given with two MAMF,
// attention, bandwidth or collective runs they would be ignored, so they are refused by name.
TEST(Messages, CostOptionsOfAComparisonWithoutStepsAreRefused) {
  expect_error(fmt::format("compare {0}/mamf_records_h200_a.jsonl {0}/mamf_records_h200_b.jsonl --price-old 3 --price-new 6",
                           kFx), 2, "a MAMF comparison: --price-old, --price-new are for training runs");
  expect_error(fmt::format("compare {0}/attention_h200.log {0}/attention_b200.log --power-price 0.1", kFx), 2,
               "an attention comparison: --power-price is for training runs");
  expect_error(fmt::format("compare {0}/nccl_records_h200x2_plain.jsonl {0}/nccl_records_h200x2_graph.jsonl --tokens 1e12", kFx),
               2, "a collective comparison: --tokens is for training runs");
  expect_error(fmt::format("report {0}/decompose_h200.txt {0}/decompose_b200.txt -o {1} --price-old 3", kFx,
                           temp_path("report_decomposition_price")), 2, "a decomposition report: --price-old is for training runs");
}

// Every point of ours says how it was checked against the reference: an attention point, a
// bandwidth copy or a MAMF shape whose check is missing may be of anything, and is refused.
TEST(SilentlyWrong, OurRecordsWithoutTheirCheckAreRefused) {
  // `path`'s records with `key` taken out of each record of `type`, or emptied.
  const auto without = [](const std::string& path, const std::string& type, const std::string& key, bool empty) {
    std::istringstream in(slurp(path));
    std::string out, line;
    while (std::getline(in, line)) {
      nlohmann::json r = nlohmann::json::parse(line);
      if (r.value("type", "") == type && r.contains(key)) {
        if (empty) r[key] = nlohmann::json::array();
        else r.erase(key);
      }
      out += r.dump() + "\n";
    }
    return out;
  };
  const std::string a = write_file("attention_no_check.jsonl",
                                   without(kFx + "/attention_records_h200.jsonl", "attention", "check", false));
  expect_error("compare " + kFx + "/attention_records_h200.jsonl " + a, 1, "no \"check\": whether its outputs matched");
  const std::string bandwidth = kFx + "/suite_h200_2l/bandwidth.jsonl";
  const std::string b = write_file("bandwidth_no_check.jsonl", without(bandwidth, "bandwidth", "check", false));
  expect_error("compare " + bandwidth + " " + b, 1, "no \"check\": whether the copy matched");
  const std::string m = write_file("mamf_no_check.jsonl", without(kFx + "/mamf_records_h200_b.jsonl", "mamf", "checks", true));
  expect_error("compare " + kFx + "/mamf_records_h200_a.jsonl " + m, 1, "no check of its timed algorithm");
}

// decide compares two GPUs: two files of one GPU say so, naming both files and the GPU, and two
// runs of one kind of one GPU point to compare.
TEST(Messages, DecideOfOneGpusFilesSaysWhatItHolds) {
  const std::string a = kFx + "/suite_h200_2l/mamf.jsonl", b = kFx + "/suite_h200_2l/sweep.jsonl";
  expect_error("decide " + a + " " + b, 2,
               fmt::format("decide: {} and {} are one GPU's measurements (NVIDIA H200): give the other GPU's folder", a, b));
  expect_error(fmt::format("decide {0}/records_h200.jsonl {0}/records_h200_rerun.jsonl", kFx), 2,
               "one of each per GPU; two runs of one GPU side by side are `upgradebench compare OLD NEW`");
}

// One measurement on both sides, told by its figures whatever its header or context says: an
// edited copy of any kind of log, and a training run with a length left out or added, are the
// measurement they copy.
TEST(SilentlyWrong, AnEditedCopyIsTheMeasurementItCopies) {
  const std::string s = kFx + "/suite_h200_2l/";
  for (const std::string& part : {s + "attention.jsonl", s + "mamf.jsonl", s + "bandwidth.jsonl",
                                  s + "decompose-short.jsonl", kFx + "/nccl_records_h200x2_plain.jsonl"}) {
    std::string copy = slurp(part);
    const size_t date = copy.find("\"date\":\"");
    ASSERT_NE(date, std::string::npos) << part;
    copy.replace(date + 8, 20, "2026-12-06T01:02:03Z");
    const std::string edited = write_file("edited_copy_" + fs::path(part).filename().string(), copy);
    expect_error("compare " + part + " " + edited, 2, "are the same measurement: every figure both hold is alike");
  }
  const std::string peer = write_file("edited_copy_attention.log", "# copied to another machine\n" + slurp(kFx + "/attention_h200.log"));
  expect_error("compare " + kFx + "/attention_h200.log " + peer, 2, "are the same measurement");
  // A training run copied with a length left out: the lengths both hold are one measurement.
  const std::string records = replaced(slurp(kFx + "/records_h200.jsonl"), "2026-11-30T08:00:00Z", "2026-12-01T09:00:00Z");
  expect_error("compare " + kFx + "/records_h200.jsonl " +
                   write_file("fewer_lengths_copy.jsonl", lines_without(records, R"("seqlen": 16384)")), 2,
               "are the same measurement: every figure both hold is alike");
  // A copy with one step left out: of a one-length log, and at every length of our records.
  const std::string log = kFx + "/torch_versions/h200_torch2.13.0_cu130.log";
  const std::string dropped = lines_without(replaced(slurp(log), "2026-11-23", "2026-11-29"), R"("step": 7,)");
  expect_error("compare " + log + " " + write_file("dropped_step.log", dropped), 2, "are the same measurement");
  expect_error("compare " + kFx + "/records_h200.jsonl " +
                   write_file("dropped_steps.jsonl", lines_without(records, R"("step": 4,)")), 2,
               "are the same measurement");
  // A copy re-printed with fewer digits (as pandas' to_json writes 80.07999999999998: 80.08).
  std::string rounded;
  std::istringstream round_in(records);
  for (std::string line; std::getline(round_in, line);) {
    nlohmann::json j = nlohmann::json::parse(line);
    if (j.value("type", "") == "train_step") j["exec_time_ms"] = std::round(j["exec_time_ms"].get<double>() * 1e4) / 1e4;
    rounded += j.dump() + "\n";
  }
  expect_error("compare " + kFx + "/records_h200.jsonl " + write_file("rounded_copy.jsonl", rounded), 2,
               "are the same measurement");
}

// Predictions are no measurements: compare says so, naming both.
TEST(Messages, CompareOfTwoPredictionsSaysWhatTheyAre) {
  const std::string a = temp_path("prediction_a.jsonl"), b = temp_path("prediction_b.jsonl");
  fs::remove(a), fs::remove(b);
  ASSERT_EQ(run("predict --to b200 " + kFx + "/decompose_h200.txt --out " + a).code, 0);
  ASSERT_EQ(run("predict --to h100 " + kFx + "/decompose_h200.txt --out " + b).code, 0);
  expect_error("compare " + a + " " + b, 2, "compare takes two measurements: " + a + " and " + b + " are predictions");
}

// A prediction for a slower GPU (a downgrade: less HBM bandwidth) keeps every interval in order,
// its point inside: the step's, the speedup's and each bucket's.
TEST(SilentlyWrong, APredictedDowngradeKeepsItsIntervalsInOrder) {
  const Result r = run("predict --to h100 " + kFx + "/guide/sweep_h200.log --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j.empty());
  for (const nlohmann::json& p : j) {
    const auto inside = [&](double point, const nlohmann::json& interval, const std::string& what) {
      EXPECT_LE(interval[0].get<double>(), point * (1 + 1e-12)) << what << " at " << p["seqlen"];
      EXPECT_LE(point, interval[1].get<double>() * (1 + 1e-12)) << what << " at " << p["seqlen"];
    };
    inside(p["speedup"].get<double>(), p["speedup_interval"], "speedup");
    inside(p["step_ms"].get<double>(), p["step_ms_interval"], "step");
    for (const nlohmann::json& b : p["buckets"]) {
      if (b["ratio"].is_null()) continue;
      inside(b["ratio"]["point"].get<double>(), nlohmann::json{b["ratio"]["low"], b["ratio"]["high"]}, b["name"]);
      for (const nlohmann::json& part : b["parts"]) {
        inside(part["point"].get<double>(), nlohmann::json{part["low"], part["high"]}, part["what"]);
      }
    }
  }
}

// A file of predictions is one series: one pair of GPUs, one workload, one prediction per length.
// --out refuses what would break it, report a file that does.
TEST(SilentlyWrong, AFileOfPredictionsIsOneSeries) {
  const std::string out = temp_path("two_pairs.jsonl");
  fs::remove(out);
  ASSERT_EQ(run("predict --to b200 " + kFx + "/guide/sweep_h200.log --out " + out).code, 0);
  ASSERT_EQ(run("predict --to b200 " + kFx + "/guide/sweep_h200.log --seqlens 16k --out " + out).code, 0);  // the same pair: more rows
  const std::string before = slurp(out);
  expect_error("predict --to h100 " + kFx + "/guide/sweep_h200.log --out " + out, 2,
               "a prediction of h200-sxm -> h100-sxm after ones of h200-sxm -> b200-sxm: one pair of GPUs per file");
  expect_error("predict --to b200 " + kFx + "/guide/sweep_h200.log --seqlens 16k --out " + out, 2,
               "a second prediction at 16384 tokens: one per length");
  // Our 4-layer step after the guide's eight-GPU job: another workload.
  expect_error("predict --to b200 " + kFx + "/train_records_h200_ours.jsonl --out " + out, 2, "one workload per file");
  EXPECT_EQ(slurp(out), before) << "nothing appended";
  std::string mixed = slurp(out);
  mixed += replaced(lines_without(mixed, R"("type":"context")"), R"("new_gpu":"b200-sxm")", R"("new_gpu":"h100-sxm")");
  expect_error("report " + write_file("mixed_pairs.jsonl", mixed) + " -o " + fresh_folder("mixed_report"), 1,
               "one pair of GPUs per file, as a report draws a file");
  std::string twice = slurp(out);
  twice += lines_without(twice, R"("type":"context")");
  expect_error("report " + write_file("twice.jsonl", twice) + " -o " + fresh_folder("twice_report"), 1,
               "a second prediction at");
}

// A duration's part may be zero (2h0m); past the longest a budget may be, the message says the limit.
TEST(ValidInput, ADurationWithAZeroPart) {
  for (const char* budget : {"2h0m", "0h30m", "1m0s", "1h0s"}) {
    const Result r = run(std::string("suite --dry-run --out ") + temp_path("dry_suite") + " --budget " + budget);
    EXPECT_EQ(r.code, 0) << budget << ": " << r.err;
  }
  expect_error("suite --dry-run --out " + temp_path("dry_suite") + " --budget 1000h", 2, "--budget: '1000h' is longer than a week");
  expect_error("suite --dry-run --out " + temp_path("dry_suite") + " --budget 0h0m", 2, "--budget: must be positive, got '0h0m'");
  // Each unit once, largest first: 1h1h is no 2h, 30s1h no 1h0m30s; a budget under a second holds nothing.
  for (const char* budget : {"1h1h", "30s1h", "1m1h"}) {
    expect_error("suite --dry-run --out " + temp_path("dry_suite") + " --budget " + budget, 2,
                 fmt::format("--budget: '{}' gives its units out of order or twice", budget));
  }
  for (const char* budget : {"0.0001s", "0.5"}) {
    expect_error("suite --dry-run --out " + temp_path("dry_suite") + " --budget " + budget, 2,
                 fmt::format("--budget: '{}' is under a second", budget));
  }
  // After a larger unit, minutes and seconds stay under 60 (1h90m: a slip for 1h09m or 2h30m?).
  for (const char* budget : {"1h90m", "1m60s"}) {
    expect_error("suite --dry-run --out " + temp_path("dry_suite") + " --budget " + budget, 2,
                 fmt::format("--budget: '{}' gives", budget));
  }
  EXPECT_EQ(run("suite --dry-run --out " + temp_path("dry_suite") + " --budget 90m").code, 0);
}

// `records` with each record given to `edit` (its line number from 0), the context's date moved on.
std::string edited_records(const std::string& records, const std::function<void(nlohmann::json&, int)>& edit) {
  std::string out;
  std::istringstream in(slurp(records));
  int n = 0;
  for (std::string line; std::getline(in, line); ++n) {
    nlohmann::json j = nlohmann::json::parse(line);
    if (j.value("type", "") == "context") j["date"] = "2026-12-06T01:02:03Z";
    edit(j, n);
    out += j.dump() + "\n";
  }
  return out;
}

// Text from a file reaches report.md as text: its banner lines too, not only its tables.
TEST(SilentlyWrong, AReportsMarkdownKeepsFileTextAsText) {
  const std::string other = write_file("html_in_version.jsonl", edited_records(kFx + "/records_h200.jsonl", [](nlohmann::json& j, int) {
    if (j.value("type", "") == "context") j["stack"]["cudnn"]["version"] = "9.14.0</script><b>x";
    if (j.value("type", "") == "train_step") {
      j["exec_time_ms"] = j["exec_time_ms"].get<double>() * 1.01;
      if (j.contains("tflops") && j["tflops"].is_number()) j["tflops"] = j["tflops"].get<double>() / 1.01;
    }
  }));
  const std::string dir = temp_path("html_in_version_report");
  fs::remove_all(dir);
  const Result r = run("report " + kFx + "/records_h200.jsonl " + other + " -o " + dir);
  if (report_tools_missing(r)) GTEST_SKIP() << r.err;
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string md = slurp(dir + "/report.md");
  EXPECT_FALSE(std::regex_search(md, std::regex(R"([^\\]</script>)"))) << md.substr(0, 400);  // each one escaped
  EXPECT_NE(md.find("9.14.0\\</script>"), std::string::npos);
}


// The history holds a copy with a step left out at every length to the run it copies, in either
// order; a copy whose time summaries lost some figures is the same too.
TEST(SilentlyWrong, TheHistoryKnowsACopyWithStepsLeftOut) {
  const std::string records = replaced(slurp(kFx + "/records_h200.jsonl"), "2026-11-30T08:00:00Z", "2026-12-01T09:00:00Z");
  const std::string no_step_4 = write_file("history_dropped_steps.jsonl", lines_without(records, R"("step": 4,)"));
  const std::string log = write_file("history_dropped_step.log", lines_without(slurp(kFx + "/sweep_h200.log"), R"("step": 7,)"));
  for (const auto& [first, second] : {std::pair{kFx + "/records_h200.jsonl", no_step_4}, {no_step_4, kFx + "/records_h200.jsonl"},
                                      {kFx + "/sweep_h200.log", log}, {log, kFx + "/sweep_h200.log"}}) {
    const std::string db = fresh_db("dropped_steps");
    ASSERT_EQ(run("history add --db " + db + " " + first).code, 0);
    const Result again = run("history add --db " + db + " " + second);
    EXPECT_EQ(again.code, 0) << again.err;
    EXPECT_NE(again.out.find("same measurement"), std::string::npos) << first << " then " << second << ":\n" << again.out;
  }
  const std::string bw = kFx + "/suite_h200_2l/bandwidth.jsonl";
  const std::string stripped = write_file("stripped_summaries.jsonl", edited_records(bw, [](nlohmann::json& j, int) {
    for (auto& item : j.items()) {
      if (item.value().is_object() && item.value().contains("median_low")) {
        for (const char* key : {"stddev", "q1", "q3"}) item.value().erase(key);
      }
    }
  }));
  expect_error("compare " + bw + " " + stripped, 2, "are the same measurement");
}

// Two runs of one length whose steps' times meet (printed to 0.01 ms) under other step numbers
// are two measurements; so are two printouts alike at one length only.
TEST(ValidInput, StepsThatMeetUnderOtherNumbersAreTwoMeasurements) {
  // The steady steps' times given to each other's numbers: the same values, another run.
  const std::string log = slurp(kFx + "/torch_versions/h200_torch2.13.0_cu130.log");
  std::vector<std::string> times;
  const std::regex time(R"re("exec_time_ms": "([0-9.]+)")re");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), time); it != std::sregex_iterator(); ++it) times.push_back((*it)[1]);
  ASSERT_GE(times.size(), 6u);
  std::string shuffled = replaced(log, "2026-11-23", "2026-11-29");
  size_t at = 0;
  for (size_t i = 0; i < times.size(); ++i) {  // each step's time moves to the next step (warm-up ones stay)
    at = shuffled.find("\"exec_time_ms\": \"" + times[i] + "\"", at);
    ASSERT_NE(at, std::string::npos);
    const std::string to = i < 2 ? times[i] : times[2 + (i - 2 + 1) % (times.size() - 2)];
    shuffled.replace(at + 17, times[i].size(), to);
    at += 17 + to.size();
  }
  const Result r = run("compare " + kFx + "/torch_versions/h200_torch2.13.0_cu130.log " + write_file("steps_moved.log", shuffled));
  EXPECT_EQ(r.err.find("same measurement"), std::string::npos) << r.err;
  // A printout alike at one length of another's.
  const std::string one_line = write_file("attention_one_length.log", "# gpu=NVIDIA H200 backend=fa2 causal=True nheads=32 "
                                          "nheads_kv=8 head_dim=128\n" + lines_without(lines_without(lines_without(slurp(kFx + "/attention_h200.log"), "#"),
                                                                                  "8192"), "16384"));
  const Result a = run("compare " + kFx + "/attention_h200.log " + one_line);
  EXPECT_EQ(a.err.find("same measurement"), std::string::npos) << a.err;
}

// decide knows one card under two names whatever case its UUID is written in, with or without
// NVML's "GPU-".
TEST(SilentlyWrong, OneCardUnderTwoNamesWhateverItsUuidsCase) {
  const std::string uuid = "GPU-5d5ef7b4-6d9f-1c74-d0fa-60ace3bdd669";
  std::string no_dashes = uuid;
  std::erase(no_dashes, '-');
  for (const std::string& written : {std::string("GPU-5D5EF7B4-6D9F-1C74-D0FA-60ACE3BDD669"), uuid.substr(4), uuid + " ",
                                     "{" + uuid + "}", no_dashes}) {
    const fs::path copy = temp_path("suite_renamed_card");
    fs::remove_all(copy);
    fs::copy(kFx + "/suite_h200_2l", copy, fs::copy_options::recursive);
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(copy)) {
      if (!e.is_regular_file()) continue;
      std::string text = slurp(e.path().string());
      text = std::regex_replace(text, std::regex(uuid), written);
      text = std::regex_replace(text, std::regex("NVIDIA H200"), "NVIDIA H200 NVL");
      text = std::regex_replace(text, std::regex("h200-sxm"), "h200-nvl");
      std::ofstream(e.path().string(), std::ios::trunc | std::ios::binary) << text;
    }
    expect_error("decide " + kFx + "/suite_h200_2l " + copy.string(), 2, "were measured on one GPU");
  }
}

// A benchmark.py log without liger= ran without Liger's kernels: not the workload of a prediction
// from a log with them. A file given twice asks for the other GPU's measurement.
TEST(SilentlyWrong, APredictionsRunWithoutLigerSaid) {
  const std::string out = temp_path("prediction_liger.jsonl");
  fs::remove(out);
  ASSERT_EQ(run("predict --to b200 " + kFx + "/guide/sweep_h200.log --out " + out).code, 0);
  const std::string no_liger = write_file("sweep_b200_no_liger.log", std::regex_replace(slurp(kFx + "/guide/sweep_b200.log"),
                                                                                        std::regex(" liger=1"), ""));
  expect_error("report " + out + " " + no_liger + " -o " + fresh_folder("liger_report"), 2, "liger: 0 (not said) vs 1");
  expect_error("compare " + kFx + "/records_h200.jsonl " + kFx + "/records_h200.jsonl", 2,
               "give the other GPU's measurement");
  // Another attention backend's family is said on the page; FlashAttention's next generation is not.
  const std::string sdpa = write_file("sweep_b200_sdpa.log", std::regex_replace(slurp(kFx + "/guide/sweep_b200.log"),
                                                                                std::regex("attn_backend=flash_attention_4"),
                                                                                "attn_backend=sdpa"));
  for (const auto& [measured, said] : {std::pair{sdpa, true}, {kFx + "/guide/sweep_b200.log", false}}) {
    const std::string dir = temp_path("backend_report");
    fs::remove_all(dir);
    const Result r = run("report " + out + " " + measured + " -o " + dir);
    if (report_tools_missing(r)) GTEST_SKIP() << r.err;
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(slurp(dir + "/report.md").find("ATTENTION BACKEND: the measured run's is sdpa, the prediction's input ran "
                                             "flash_attention_3") != std::string::npos, said) << measured;
  }
}


// Two measurements of short kernels can share a median and its interval to the last bit (CUDA
// events tick in half microseconds), never their whole time summary; and one point that differs
// makes two measurements, whatever other points share.
TEST(ValidInput, MeasurementsThatShareSomeFiguresAreTwo) {
  const std::string s = kFx + "/suite_h200_2l/";
  const auto spread_otherwise = [](nlohmann::json& j, int) {
    for (auto& item : j.items()) {
      nlohmann::json& t = item.value();
      if (!t.is_object() || !t.contains("median_low")) continue;
      for (const auto& [key, by] : {std::pair{"mean", 1.002}, {"stddev", 1.5}, {"max", 1.05}}) {
        if (t.contains(key) && t[key].is_number()) t[key] = t[key].get<double>() * by;
      }
    }
  };
  for (const char* part : {"attention.jsonl", "mamf.jsonl", "bandwidth.jsonl"}) {
    const std::string other = write_file(std::string("same_medians_") + part, edited_records(s + part, spread_otherwise));
    const Result r = run("compare " + s + part + " " + other);
    EXPECT_EQ(r.err.find("same measurement"), std::string::npos) << part << ": " << r.err;
    EXPECT_EQ(r.code, 0) << part << ": " << r.err;
  }
  // Training: one length's steps 10% slower, the other's alike.
  const std::string slower = write_file("one_length_slower.jsonl", edited_records(kFx + "/records_h200.jsonl", [](nlohmann::json& j, int) {
    if (j.value("type", "") == "train_step" && j.value("seqlen", 0) == 16384) {
      j["exec_time_ms"] = j["exec_time_ms"].get<double>() * 1.1;
      if (j.contains("tflops") && j["tflops"].is_number()) j["tflops"] = j["tflops"].get<double>() / 1.1;
    }
  }));
  const Result t = run("compare " + kFx + "/records_h200.jsonl " + slower);
  EXPECT_EQ(t.err.find("same measurement"), std::string::npos) << t.err;
  // The history stores both, each a run of its own.
  const std::string db = fresh_db("share_some_figures");
  const std::string other_bw = write_file("same_medians_bw.jsonl", edited_records(s + "bandwidth.jsonl", spread_otherwise));
  const Result h = run("history add --db " + db + " " + s + "bandwidth.jsonl " + other_bw);
  ASSERT_EQ(h.code, 0) << h.err;
  EXPECT_EQ(h.out.find("same measurement"), std::string::npos) << h.out;
  // A suite whose sweep differs but whose micro-benchmarks share their medians: two measurements.
  const fs::path copy = temp_path("suite_partly_alike");
  fs::remove_all(copy);
  fs::copy(s, copy, fs::copy_options::recursive);
  for (const char* part : {"attention.jsonl", "mamf.jsonl", "mamf-step.jsonl", "bandwidth.jsonl"}) {
    std::ofstream((copy / part).string(), std::ios::trunc) << edited_records(s + part, spread_otherwise);
  }
  for (const fs::directory_entry& e : fs::directory_iterator(copy)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("sweep", 0) != 0 && name.rfind("decompose", 0) != 0) continue;
    std::ofstream(e.path().string(), std::ios::trunc) << measured_again(slurp((fs::path(s) / name).string()), 1.03);
  }
  const Result d = run("decide " + std::string(s) + " " + copy.string());
  EXPECT_EQ(d.err.find("same measurement"), std::string::npos) << d.err;
  EXPECT_EQ(d.code, 0) << d.err;
  EXPECT_NE(d.out.find("SAME GPU"), std::string::npos) << d.out;  // one card measured twice, named alike
}

// Our engine's `decompose` records (its steps, then the decomposition) are a run the history
// stores, with its steps' times beside the buckets.
TEST(ValidInput, TheHistoryStoresOurDecomposeRecords) {
  const std::string db = fresh_db("decompose_records");
  const Result r = run("history add --db " + db + " " + kFx + "/engine_llama_2l_4096.jsonl " + kFx +
                       "/suite_h200_2l/decompose-short.jsonl --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["files"][1]["runs"][0]["status"], "added");
  EXPECT_EQ(j["files"][1]["runs"][0]["kind"], "decomposition");
  const Result m = run("history metrics --db " + db + " --json");
  EXPECT_NE(m.out.find("train.step_ms"), std::string::npos) << m.out;
  EXPECT_NE(m.out.find("decompose.ms.gemm"), std::string::npos) << m.out;
}

// A suite folder is one machine's: a part whose records name their GPU without a UUID where
// env.json names the machine's, an env.json that names no GPU, and a sweep whose manifest claims
// --find-max without its result, are refused; a suite without env.json is read and says so.
TEST(SilentlyWrong, ASuiteIsOneMachinesWordForWord) {
  const auto copy = [](const std::string& name) {
    const std::string dir = temp_path(name);
    fs::remove_all(dir);
    fs::copy(kFx + "/suite_h200_2l", dir, fs::copy_options::recursive);
    return dir;
  };
  const std::string no_uuid = copy("suite_no_uuid");
  const std::string sweep = replaced(slurp(no_uuid + "/sweep.jsonl"), R"("uuid":"GPU-5d5ef7b4-6d9f-1c74-d0fa-60ace3bdd669")",
                                     R"("uuid":"")");
  std::ofstream(no_uuid + "/sweep.jsonl") << sweep;
  expect_error("decide " + no_uuid + " --to b200-sxm", 1, "part sweep (sweep.jsonl) names its GPU without a UUID");
  const std::string empty_env = copy("suite_empty_env");
  std::ofstream(empty_env + "/env.json") << "{}";
  expect_error("decide " + empty_env + " --to b200-sxm", 1, "env.json: names no GPU");
  const std::string fifo_env = copy("suite_fifo_env");
  fs::remove(fifo_env + "/env.json");
  ASSERT_EQ(::mkfifo((fifo_env + "/env.json").c_str(), 0600), 0);
  expect_error("decide " + fifo_env + " --to b200-sxm", 1, fifo_env + ": part env is done, but its records env.json are not a "
                                                            "file: the folder was edited or damaged");
  const std::string claimed = copy("suite_claimed_find_max");
  nlohmann::json m = nlohmann::json::parse(slurp(claimed + "/manifest.json"));
  m["workload"]["seqlens"] = {4096};
  for (nlohmann::json& p : m["parts"]) {
    if (p["name"] == "sweep") p["command"].push_back("--find-max");
  }
  std::ofstream(claimed + "/manifest.json") << m.dump(2);
  expect_error("decide " + claimed + " --to b200-sxm", 1, "a step of 2048 tokens, a length the manifest does not ask for");
}

// Our records' warm-up step whose TFLOPS disagree with its time, where the steady steps log none:
// held to the model's FLOPs over its time.
TEST(SilentlyWrong, AWarmupStepOfOurRecordsIsHeldToItsWork) {
  const std::string records = slurp(kFx + "/records_h200.jsonl");
  const std::string bad = write_file("warmup_tflops.jsonl", replaced(records, R"("exec_time_ms": 120.0, "tflops": null)",
                                                                      R"("exec_time_ms": 120.0, "tflops": 100.0)"));
  expect_error("memfit " + bad, 1, fmt::format("warmup_tflops.jsonl:{}: seqlen 4096: a step of 120 ms logged at 100.0 TFLOPS",
                                               line_of(records, R"("exec_time_ms": 120.0)")));
}

// compare and report take the older names of the price options, as decide and predict do; decide,
// compare and report refuse two files of one GPU (one UUID) under two names.
TEST(Messages, OlderNamesAndOneGpuUnderTwoNames) {
  const Result r = run(fmt::format("compare {0}/sweep_h200.log {0}/sweep_b200.log --force --price-from 3 --price-to 6", kFx));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Break-even speedup"), std::string::npos) << r.out;
  const std::string renamed = write_file("rerun_renamed.jsonl", std::regex_replace(slurp(kFx + "/records_h200_rerun.jsonl"),
                                                                                   std::regex(R"("name": "NVIDIA H200")"),
                                                                                   R"("name": "NVIDIA H200 SXM 141GB")"));
  expect_error("decide " + kFx + "/records_h200.jsonl " + renamed + " --price-old 3 --price-new 3", 2,
               "decide: " + kFx + "/records_h200.jsonl (NVIDIA H200) and " + renamed +
                   " (NVIDIA H200 SXM 141GB) were measured on one GPU, GPU-test");
  expect_error("compare " + kFx + "/records_h200.jsonl " + renamed, 2, "compare: " + kFx + "/records_h200.jsonl (NVIDIA H200)");
  expect_error("report " + kFx + "/records_h200.jsonl " + renamed + " -o " + fresh_folder("one_card_report"), 2,
               "were measured on one GPU, GPU-test");
  EXPECT_FALSE(fs::exists(temp_path("one_card_report")));
}

// The step's arithmetic (fp32 master weights or pure bf16, MLP tiles, loss chunks) is the
// software's part of a speedup: two runs that differ in it are not one workload for compare and
// decide; a prediction's measured run must match it (a run before these keys were recorded ran
// untiled and unchunked); a suite's sweep must have run what its manifest says.
TEST(SilentlyWrong, TheStepsArithmeticIsPartOfTheWorkload) {
  const std::string said = R"("checkpointing": true, "master_weights": true)";
  const std::string records = write_file("arithmetic_h200.jsonl", replaced(slurp(kFx + "/records_h200.jsonl"), R"("checkpointing": true)", said));
  // The rerun as another GPU's, with one of the three changed.
  std::string rerun = replaced(slurp(kFx + "/records_h200_rerun.jsonl"), R"("checkpointing": true)", said);
  rerun = replaced(rerun, R"("name": "NVIDIA H200", "uuid": "GPU-test")", R"("name": "NVIDIA B200", "uuid": "GPU-test-b200")");
  for (const auto& [key, value] : {std::pair{"master_weights", "false"}, std::pair{"mlp_tile", "2048"},
                                   std::pair{"loss_chunk", "4096"}}) {
    const std::string changed = std::string(key) == "master_weights"
                                    ? replaced(rerun, R"("master_weights": true)", R"("master_weights": false)")
                                    : replaced(rerun, said, said + fmt::format(R"(, "{}": {})", key, value));
    const std::string other = write_file(fmt::format("arithmetic_{}.jsonl", key), changed);
    expect_error("compare " + records + " " + other, 2, fmt::format("different {}: ", key));
    expect_error("decide " + records + " " + other + " --price-old 3 --price-new 3", 2, fmt::format("different {}: ", key));
  }
  const std::string predictions = temp_path("arithmetic_predictions.jsonl");
  fs::remove(predictions);
  const std::string ours = slurp(kFx + "/train_records_h200_ours.jsonl");
  ASSERT_EQ(run("predict --to b200 " + kFx + "/train_records_h200_ours.jsonl --out " + predictions).code, 0);
  const auto as_b200 = [&](const std::string& name, const std::string& config) {
    std::string b200 = std::regex_replace(std::regex_replace(ours, std::regex("NVIDIA H200"), "NVIDIA B200"),
                                          std::regex("GPU-a132b5df"), "GPU-b200b5df");
    b200 = std::regex_replace(b200, std::regex(R"("master_weights":false)"), R"("master_weights":false)" + config);
    return write_file(name, replaced_match(b200, std::regex(R"("exec_time_ms":([0-9.]+))"), "1"));
  };
  expect_error("report " + predictions + " " + as_b200("arithmetic_tiled.jsonl", R"(,"mlp_tile":2048)") + " -o " +
                   temp_path("arithmetic_report"), 2, "mlp_tile: 2048 vs 0 (not said)");
  expect_error("report " + predictions + " " + as_b200("arithmetic_chunked.jsonl", R"(,"loss_chunk":4096)") + " -o " +
                   temp_path("arithmetic_report"), 2, "loss_chunk: 4096 vs 0 (not said)");
  // A suite whose sweep ran other options than its manifest says.
  const fs::path suite = temp_path("arithmetic_suite");
  fs::remove_all(suite);
  fs::copy(kFx + "/suite_h200_2l", suite, fs::copy_options::recursive);
  const std::string sweep = (suite / "sweep.jsonl").string();
  const std::string tiled = std::regex_replace(slurp(sweep), std::regex(R"("mlp_tile":0)"), R"("mlp_tile":1024)");
  std::ofstream(sweep, std::ios::trunc) << tiled;
  expect_error("decide " + kFx + "/suite_h200_2l " + suite.string(), 1, "is of another run than the suite's (mlp_tile 1024 vs 0");
}

// The history stores nothing compare or report would refuse: a step faster than its GPU could do
// its model's FLOPs, or a peak past its memory (warm-up steps too), refused naming the line.
TEST(SilentlyWrong, TheHistoryRefusesWhatNoGpuMeasures) {
  const std::string db = fresh_db("impossible");
  const std::string records = slurp(kFx + "/records_h200.jsonl");
  const std::string fast = write_file("history_fast.jsonl", replaced(replaced(records, R"("exec_time_ms": 80.07999999999998)",
                                                                              R"("exec_time_ms": 0.08007999999999998)"),
                                                                     "2026-11-30T08:00:00Z", "2026-12-02T00:00:00Z"));
  expect_error("history add --db " + db + " " + fast, 1,
               "past the h200-sxm's matmul ceiling (MAMF 794.5 TFLOPS, published): not a measurement");
  const std::string log = slurp(kFx + "/sweep_h200.log");
  const std::string warm = write_file("history_warm.log", replaced(log, R"("tflops": "78.08")", R"("tflops": "7808.00")"));
  expect_error("history add --db " + db + " " + warm, 1, "TFLOPS");
  EXPECT_EQ(run("history list --db " + db + " --json").code, 0);
}

// A file under a stored run's context record is that run as stored, or grown since: lines that
// differ from the stored ones (an edited copy, a rewritten file) are refused, not taken for it.
TEST(SilentlyWrong, TheHistoryGrowsARunOnlyByWhatFollowsIt) {
  const std::string db = fresh_db("grown");
  const std::string records = slurp(kFx + "/records_h200.jsonl");
  ASSERT_EQ(run("history add --db " + db + " " + kFx + "/records_h200.jsonl").code, 0);
  const std::string edited = write_file("grown_edited.jsonl", replaced(records, R"("exec_time_ms": 80.07999999999998)",
                                                                       R"("exec_time_ms": 70.07999999999998)"));
  expect_error("history add --db " + db + " " + edited, 1, fmt::format("grown_edited.jsonl: line {} differs from run 1",
                                                                        line_of(records, "80.07999999999998")));
  const std::string grown = write_file("grown_more.jsonl", records + R"({"type": "train_step", "seqlen": 65536, "step": 9, "warmup": false, "exec_time_ms": 2000.0, "tflops": null, "peak_mem_gib": 60.0, "loss": 11.8})" "\n");
  const Result r = run("history add --db " + db + " " + grown + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["files"][0]["runs"][0]["status"], "grown") << r.out;
  // A peer's log grows a stored one only on the GPU and stack its header lines named: the same
  // steps under another GPU's and torch's headers, with a length more, are the stored measurement
  // copied, not the run grown.
  const std::string log = slurp(kFx + "/sweep_h200.log");
  ASSERT_EQ(run("history add --db " + db + " " + kFx + "/sweep_h200.log").code, 0);
  std::string renamed = std::regex_replace(log, std::regex("gpu=NVIDIA H200"), "gpu=NVIDIA B200");
  renamed = std::regex_replace(renamed, std::regex("torch=2.13.0"), "torch=2.12.0");
  const size_t last = renamed.rfind("===== seq_len=");
  std::string more = renamed.substr(last);
  more = std::regex_replace(more, std::regex("seq_len=([0-9]+)"), "seq_len=262144");
  const std::string edited_log = write_file("grown_renamed.log", renamed + more);
  const Result g = run("history add --db " + db + " " + edited_log + " --json");
  ASSERT_EQ(g.code, 0) << g.err;
  EXPECT_EQ(nlohmann::json::parse(g.out)["files"][0]["runs"][0]["status"], "same measurement") << g.out;
}

// The history's series pool only runs of one workload and order them by the instant they ran: a
// run with fp32 master weights is no point of a pure-bf16 fleet, a run dated 10:00+14:00 came
// before one at 21:00Z of the day before, and one card (UUID) is one GPU model.
TEST(SilentlyWrong, TheHistoryPoolsOnlyOneWorkloadInTimeOrderOnOneCardName) {
  const std::string ours = slurp(kFx + "/train_records_h200_ours.jsonl");
  const auto variant = [&](const std::string& name, const std::string& date, const std::string& uuid, double factor,
                           const std::string& extra_config) {
    std::string text = std::regex_replace(ours, std::regex(R"("date":"[^"]*")"), "\"date\":\"" + date + "\"");
    text = std::regex_replace(text, std::regex("GPU-a132b5df-1e02-fc58-b23c-4b13de1081fe"), uuid);
    text = std::regex_replace(text, std::regex(R"("master_weights":false)"), R"("master_weights":false)" + extra_config);
    std::string scaled;  // every step's time times `factor`: another measurement
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      nlohmann::json r = nlohmann::json::parse(line);
      if (r["type"] == "train_step") r["exec_time_ms"] = r["exec_time_ms"].get<double>() * factor, r["tflops"] = r["tflops"].get<double>() / factor,
                                     r["mfu"] = r["mfu"].get<double>() / factor;
      scaled += r.dump() + "\n";
    }
    return write_file(name, scaled);
  };
  const std::string db = fresh_db("pooling");
  const std::string a = variant("pool_a.jsonl", "2026-12-02T10:00:00Z", "GPU-aaaaaaaa-0000-0000-0000-000000000001", 1.0, "");
  const std::string b = variant("pool_b.jsonl", "2026-12-03T10:00:00Z", "GPU-aaaaaaaa-0000-0000-0000-000000000002", 1.003, "");
  std::string c = variant("pool_c.jsonl", "2026-12-04T10:00:00Z", "GPU-aaaaaaaa-0000-0000-0000-000000000003", 1.4, "");
  c = write_file("pool_c.jsonl", std::regex_replace(slurp(c), std::regex(R"("master_weights":false)"), R"("master_weights":true)"));
  ASSERT_EQ(run(fmt::format("history add --db {} {} {} {}", db, a, b, c)).code, 0);
  const Result fleet = run(fmt::format("history fleet train.tflops --at 4096 --db {}", db));
  ASSERT_EQ(fleet.code, 0) << fleet.err;
  EXPECT_EQ(fleet.out.find("SLOW"), std::string::npos) << "the master-weights run is a fleet of its own:\n" << fleet.out;
  EXPECT_NE(fleet.out.find("2 fleets of unlike runs"), std::string::npos) << fleet.out;
  // Dates with offsets, in the order of their instants.
  const std::string tz = fresh_db("pooling_tz");
  const std::string east = variant("tz_east.jsonl", "2026-12-10T10:00:00+14:00", "GPU-tz", 1.0, "");
  const std::string utc = variant("tz_utc.jsonl", "2026-12-09T21:00:00Z", "GPU-tz", 0.8, "");
  ASSERT_EQ(run(fmt::format("history add --db {} {} {}", tz, east, utc)).code, 0);
  const Result trend = run(fmt::format("history trend train.tflops --at 4096 --db {}", tz));
  ASSERT_EQ(trend.code, 0) << trend.err;
  EXPECT_LT(trend.out.find("2026-12-09T20:00:00Z"), trend.out.find("2026-12-09T21:00:00Z")) << trend.out;
  const Result since = run(fmt::format("history list --db {} --since 2026-12-10 --json", tz));
  EXPECT_TRUE(nlohmann::json::parse(since.out)["runs"].empty()) << since.out;
  // One card under two names.
  std::string renamed = std::regex_replace(slurp(b), std::regex("NVIDIA H200"), "NVIDIA B200");
  renamed = std::regex_replace(renamed, std::regex("h200-sxm"), "b200-sxm");
  const std::string b200 = write_file("pool_renamed.jsonl", replaced(renamed, "2026-12-03T10:00:00Z", "2026-12-05T10:00:00Z"));
  expect_error(fmt::format("history add --db {} {}", db, b200), 2,
               "GPU GPU-aaaaaaaa-0000-0000-0000-000000000002 is NVIDIA B200 here and NVIDIA H200 in the history");
}

// Another program's runs are of the workload their header says: the torch.distributed peer's
// ranks, bench_flash_attn.py's attention shape, bench_decompose.py's levers. Runs of another
// (an 8-rank job beside a 2-rank one, 48 heads beside 32, ZeRO-3 with checkpointing beside ZeRO-2
// without) are fleets of their own, never a SLOW GPU of one fleet; `list` shows the job's GPUs.
TEST(SilentlyWrong, AnotherProgramsRunsArePooledOnlyWithRunsOfTheirHeadersWorkload) {
  std::string eight;
  {
    std::istringstream in(slurp(kFx + "/nccl_peer_h200x2.jsonl"));
    for (std::string line; std::getline(in, line);) {
      nlohmann::json r = nlohmann::json::parse(line);
      const double factor = r["collective"] == "all_reduce" ? 2.0 * 7 / 8 : 7.0 / 8;
      r["world_size"] = 8, r["time_us"] = r["time_us"].get<double>() * 3;
      r["algbw_gbps"] = r["bytes"].get<double>() / (r["time_us"].get<double>() * 1e-6) / 1e9;
      r["busbw_gbps"] = r["algbw_gbps"].get<double>() * factor;
      eight += r.dump() + "\n";
    }
  }
  std::string attention48;  // 1.5x the work in the same time
  {
    std::istringstream in(std::regex_replace(slurp(kFx + "/attention_h200.log"), std::regex("nheads=32"), "nheads=48"));
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("{", 0) != 0) {
        attention48 += line + "\n";
        continue;
      }
      nlohmann::json r = nlohmann::json::parse(line);
      for (const char* k : {"fwd_tflops", "fwd_bwd_tflops"}) r[k] = r[k].get<double>() * 1.5;
      attention48 += r.dump() + "\n";
    }
  }
  std::string zero3 = slurp(kFx + "/guide/decompose_h200.txt");
  zero3 = replaced(zero3, "zero=2 gc=0", "zero=3 gc=1");  // and 1.3x the time: layers recomputed
  zero3 = replaced(zero3, "wall step=914.8 ms", "wall step=1189.2 ms");
  zero3 = replaced(zero3, "118.1 ms  447.0 TFLOPS  MFU 45.2%", "153.5 ms  343.8 TFLOPS  MFU 34.8%");
  zero3 = replaced(zero3, "796.7 ms  463.0 TFLOPS  MFU 46.8%", "1035.7 ms  356.2 TFLOPS  MFU 36.0%");
  zero3 = replaced(zero3, "914.8 ms  460.9 TFLOPS  MFU 46.6%", "1189.2 ms  354.6 TFLOPS  MFU 35.8%");
  struct Case {
    std::string one, other, metric, at, workload;
  };
  const std::vector<Case> cases = {
      {kFx + "/nccl_peer_h200x2.jsonl", write_file("peer_8_ranks.jsonl", eight), "nccl.busbw.all_reduce.bf16", "1M",
       "2 GPUs, torch.distributed"},
      {kFx + "/attention_h200.log", write_file("attention_48_heads.log", attention48), "attention.fwd_tflops", "8192",
       "32 heads (8 KV) of 128, batch 1, causal, bf16, bench_flash_attn.py backend fa3"},
      {kFx + "/guide/decompose_h200.txt", write_file("decompose_zero3.txt", zero3), "decompose.ms.TOTAL", "8192",
       "a bench_decompose.py step of llama-3.1-8b: backend=flash_attention_3, zero=2, gc=0, offload=0, liger=0, batch=1, "
       "world_size=1"},
  };
  for (const Case& c : cases) {
    const std::string db = fresh_db("peer_workloads");
    ASSERT_EQ(run(fmt::format("history add --db {} {} {}", db, c.one, c.other)).code, 0) << c.one;
    const Result fleet = run(fmt::format("history fleet {} --at {} --db {}", c.metric, c.at, db));
    ASSERT_EQ(fleet.code, 0) << fleet.err;
    EXPECT_EQ(fleet.out.find("SLOW"), std::string::npos) << c.other << " is a fleet of its own:\n" << fleet.out;
    EXPECT_NE(fleet.out.find("2 fleets of unlike runs"), std::string::npos) << fleet.out;
    const Result list = run(fmt::format("history list --db {} --json", db));
    ASSERT_EQ(list.code, 0) << list.err;
    const nlohmann::json runs = nlohmann::json::parse(list.out)["runs"];
    ASSERT_EQ(runs.size(), 2u) << list.out;
    EXPECT_EQ(runs[0]["workload"], c.workload) << list.out;
    EXPECT_NE(runs[0]["workload"], runs[1]["workload"]) << list.out;
  }
}

// One step's printouts that say its batch as bs=1, as batch=1 or not at all (bench_decompose.py's
// default) are one workload in the history, as compare takes them: one series, not three.
TEST(SilentlyWrong, PrintoutsOfOneStepSaidDifferentlyAreOneSeries) {
  const std::string guide = slurp(kFx + "/guide/decompose_h200.txt");
  const std::string liger = "liger=0";
  const std::string db = fresh_db("printout_batch_spellings");
  const std::vector<std::string> files = {
      kFx + "/guide/decompose_h200.txt",
      write_file("printout_bs1.txt", replaced(replaced(guide, liger, liger + " bs=1"), "914.8 ms  460.9", "915.8 ms  460.4")),
      write_file("printout_batch1.txt", replaced(replaced(guide, liger, liger + " batch=1"), "914.8 ms  460.9", "916.8 ms  459.9"))};
  for (const std::string& f : files) ASSERT_EQ(run(fmt::format("history add --db {} {}", db, f)).code, 0) << f;
  const Result list = run(fmt::format("history list --db {} --json", db));
  ASSERT_EQ(list.code, 0) << list.err;
  const nlohmann::json runs = nlohmann::json::parse(list.out)["runs"];
  ASSERT_EQ(runs.size(), 3u) << list.out;
  for (const nlohmann::json& r : runs) EXPECT_EQ(r["workload"], runs[0]["workload"]) << list.out;
  EXPECT_NE(runs[0]["workload"].get<std::string>().find("batch=1, world_size=1"), std::string::npos) << list.out;
}

// Two runs of one model path (a config.json of that name on each machine) whose context records
// give other shapes ran two models: refused as another workload, not compared as a stack warning.
TEST(SilentlyWrong, RunsOfOneModelNameAndAnotherShapeAreTwoWorkloads) {
  const std::string base = replaced_all(slurp(kFx + "/suite_h200_2l/sweep.jsonl"), R"("model":"llama-3.1-8b")",
                                 R"("model":"/configs/my-llama/config.json")");
  const std::string one = write_file("model_path_a.jsonl", base);
  const std::string other = write_file("model_path_b.jsonl", replaced_all(measured_again(base, 1.05), R"("intermediate":14336)",
                                                                     R"("intermediate":28672)"));
  expect_error("compare " + one + " " + other, 2,
               "are not the same workload (different model shape: intermediate: 14336 vs 28672); --force compares them anyway");
  const std::string same_shape = write_file("model_path_c.jsonl", measured_again(base, 1.05));
  EXPECT_EQ(run("compare " + one + " " + same_shape).code, 0);
}

// Selective checkpointing (the attention outputs kept too) is a lever of its own beside full
// checkpointing: memfit gives it its own row, as compare and decide tell the two apart.
TEST(ValidInput, SelectiveAndFullCheckpointingAreTwoLevers) {
  std::string selective = replaced(slurp(kFx + "/levers/checkpointing.jsonl"), R"("activation_checkpointing": true,)",
                                   R"("activation_checkpointing": true, "checkpointing_kept": "layer inputs, attention outputs and statistics",)");
  selective = replaced(selective, R"("date": "2026-12-05T08:00:00Z")", R"("date": "2026-12-05T09:00:00Z")");
  const std::string file = write_file("levers_selective.jsonl", measured_again(selective, 0.93));
  const Result r = run(fmt::format("memfit {0}/levers/none.jsonl {0}/levers/checkpointing.jsonl {1} --for h200 --json", kFx, file));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string out = r.out;
  EXPECT_NE(out.find("\"selective checkpointing\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"checkpointing\""), std::string::npos) << out;
}

// One call's predictions are one series, as a file of them is: a 2-layer and a 4-layer step, or a
// sweep and a decomposition of one length, are refused within the call, with nothing written.
TEST(SilentlyWrong, OneCallsPredictionsAreOneSeries) {
  const std::string suite = kFx + "/suite_h200_2l";
  const std::string out = temp_path("one_call_series.jsonl");
  fs::remove(out);
  expect_error(fmt::format("predict --to b200 {}/decompose-short.jsonl {}/decompose_records_h200_64k.jsonl --out {}", suite,
                           kFx, out),
               2, "decompose_records_h200_64k.jsonl's step is a prediction of another workload than the ones before it "
                  "(different depth: 2 vs 4 layers");
  expect_error(fmt::format("predict --to b200 {0}/sweep.jsonl {0}/decompose-short.jsonl --out {1}", suite, out), 2,
               "decompose-short.jsonl's step is a second prediction at 2048 tokens: one per length");
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(run(fmt::format("predict --to b200 {0}/decompose-short.jsonl {0}/decompose-long.jsonl --out {1}", suite, out)).code, 0);
}

// An attention run of one GPU only has nothing to be set beside: decide leaves it out and says so.
TEST(SilentlyWrong, AMicroBenchmarkOfOneSideOnlyIsSaidLeftOut) {
  const std::string g = kFx + "/guide";
  const Result r = run(fmt::format("decide {0}/sweep_h200.log {0}/attention_h200.log {0}/sweep_b200.log --force "
                                   "--price-old 3.5 --price-new 6 --json", g));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(nlohmann::json::parse(r.out)["warnings"].dump().find(
                g + "/attention_h200.log (attention) measured on the old GPU only: left out of the comparison"),
            std::string::npos) << r.out;
}

// A length that failed otherwise than out of memory (an illegal memory access, an NCCL error, a
// watchdog) says nothing of memory: left out with a warning in every reader, never "cannot run this".
TEST(SilentlyWrong, ALengthThatCrashedIsNotOutOfMemory) {
  const std::string log = slurp(kFx + "/sweep_h200.log");
  const std::string oom = "[rank3]: torch.OutOfMemoryError: CUDA out of memory.";
  for (const std::string& failure : {std::string("RuntimeError: CUDA error: an illegal memory access was encountered"),
                                     std::string("[rank3]: Watchdog caught collective operation timeout")}) {
    std::string crashed = log;
    const size_t at = crashed.find(oom);
    ASSERT_NE(at, std::string::npos);
    crashed.replace(at, crashed.find('\n', at) - at, failure);
    const std::string file = write_file("sweep_crashed.log", crashed);
    const Result fit = run("memfit " + file + " --json");
    ASSERT_EQ(fit.code, 0) << fit.err;
    const nlohmann::json j = nlohmann::json::parse(fit.out);
    EXPECT_TRUE(j["capped_by_out_of_memory"].is_null()) << fit.out;
    EXPECT_NE(fit.err.find("seq_len=262144 failed, not out of memory"), std::string::npos) << fit.err;
    const Result both = run("compare " + file + " " + kFx + "/sweep_b200.log");
    ASSERT_EQ(both.code, 0) << both.err;
    EXPECT_EQ(both.out.find("old cannot run this"), std::string::npos) << both.out;
    const std::string db = fresh_db("crashed_length");
    EXPECT_EQ(run("history add --db " + db + " " + file).code, 0);
  }
}

// A million copies of one step line: counted once, said in bounded words.
TEST(Hangs, AStepRepeatedWithoutEndIsSaidInBoundedWords) {
  std::string log = slurp(kFx + "/sweep_h200.log");
  const size_t block = log.find("===== seq_len=32768");
  const size_t last = log.rfind("\n{", block);
  ASSERT_NE(last, std::string::npos);
  const std::string step = log.substr(last + 1, log.find('\n', last + 1) - last);
  std::string copies;
  for (int i = 0; i < 20000; ++i) copies += step;
  log.insert(block, copies);
  const Result r = run("memfit " + write_file("sweep_step_repeated.log", log));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_LT(std::count(r.err.begin(), r.err.end(), '\n'), 40) << r.err.substr(0, 2000);
  EXPECT_NE(r.err.find("more steps read again from here on: each counted once, not named"), std::string::npos);
}

// A pattern whose counted repetitions multiply into gigabytes of automaton is refused before it
// is compiled, naming the rule.
TEST(Hangs, ARegularExpressionTooCostlyToCompileIsRefused) {
  const std::string rules = write_file("classes_costly.json", R"({"rules":[{"bucket":"gemm","pattern":"(a{1,100}){1,100}{1,100}"}]})");
  expect_error("decompose " + kFx + "/trace_kineto_small.json --classes " + rules, 2,
               "would cost too much to compile: its counted repetitions ({m,n}) multiply past 1000 copies");
  expect_error("decompose " + kFx + "/trace_kineto_small.json --step-name '(a{1,200}){1,200}'", 2,
               "--step-name: \"(a{1,200}){1,200}\" would cost too much to compile");
  EXPECT_EQ(run("decompose " + kFx + "/trace_kineto_small.json --step-name 'ProfilerStep#[0-9]{1,3}'").code, 0);
  // Many rules each within the bound cost as much together: the file is held to a budget of them all.
  std::string many = R"({"rules":[)";
  for (int i = 0; i < 200; ++i) many += std::string(i ? "," : "") + R"({"bucket":"gemm","pattern":"a{1,999}"})";
  const std::string many_rules = write_file("classes_many_costly.json", many + "]}");
  expect_error("decompose " + kFx + "/trace_kineto_small.json --classes " + many_rules, 2,
               "its 200 rules' patterns would cost too much to compile together");
}

// Records of a step given to predict --measured are named for what they are (exit 2), not read as
// a bandwidth run.
TEST(Messages, AStepGivenAsAMicroBenchmarkIsSaidToBeOne) {
  const std::string suite = kFx + "/suite_h200_2l";
  expect_error("predict --to b200 " + suite + "/sweep.jsonl --measured " + suite + "/decompose-short.jsonl", 2,
               suite + "/decompose-short.jsonl: a step decomposition, not a micro-benchmark predict reads");
}

// predict's measured ratios hold as compare's do: HBM copies of one kernel on both GPUs, and the
// attention the step runs (its model's heads, KV heads, head size, causal).
TEST(SilentlyWrong, PredictsMeasuredRatiosAreOfTheStepsProblem) {
  const std::string step = "predict --to b200 " + kFx + "/guide/decompose_h200.txt --measured ";
  const std::string h200_copies = kFx + "/suite_h200_2l/bandwidth.jsonl";
  std::string b200 = replaced_all(replaced_all(slurp(h200_copies), "NVIDIA H200", "NVIDIA B200"), "h200-sxm", "b200-sxm");
  b200 = replaced_all(b200, "GPU-5d5ef7b4", "GPU-0b200000");
  const std::string memcpy_copies = write_file("b200_copies_memcpy.jsonl", replaced_all(b200, "tiled8cs", "memcpy"));
  expect_error(step + h200_copies + " " + memcpy_copies, 2, "with different kernels (tiled8cs vs memcpy, old vs new)");
  EXPECT_EQ(run(step + h200_copies + " " + write_file("b200_copies_tiled.jsonl", b200)).code, 0);
  // 48 heads in the same times: 1.5x the TFLOPS, as the lines' FLOPs must agree with their header.
  const auto heads48 = [](const std::string& log) {
    std::string out;
    std::istringstream in(replaced(slurp(log), "nheads=32", "nheads=48"));
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("{", 0) == 0) {
        nlohmann::json r = nlohmann::json::parse(line);
        for (const char* k : {"fwd_tflops", "fwd_bwd_tflops"}) r[k] = r[k].get<double>() * 1.5;
        line = r.dump();
      }
      out += line + "\n";
    }
    return out;
  };
  const std::string h48 = write_file("attention_h200_48_heads.log", heads48(kFx + "/guide/attention_h200.log"));
  const std::string b48 = write_file("attention_b200_48_heads.log", heads48(kFx + "/guide/attention_b200.log"));
  expect_error(step + h48 + " " + b48, 2, "attention of another problem than the step's (llama-3.1-8b: heads 48 vs 32");
  EXPECT_EQ(run(step + kFx + "/guide/attention_h200.log " + kFx + "/guide/attention_b200.log").code, 0);
}

// A bench_decompose.py printout is the step of the model the script trains, stored at its length:
// its seq=, or without one the length its work is (as compare reads it), so --model and --at reach it.
TEST(SilentlyWrong, APrintoutIsStoredWithItsModelAndLength) {
  const std::string no_seq = write_file("printout_no_seq.txt", replaced(slurp(kFx + "/guide/decompose_h200.txt"), " seq=8192", ""));
  const std::string db = fresh_db("printout_model_length");
  ASSERT_EQ(run("history add --db " + db + " " + no_seq).code, 0);
  const Result list = run("history list --db " + db + " --model llama-3.1-8b --json");
  ASSERT_EQ(list.code, 0) << list.err;
  EXPECT_EQ(nlohmann::json::parse(list.out)["runs"].size(), 1u) << list.out;
  const Result fleet = run("history fleet decompose.ms.TOTAL --at 8k --db " + db);
  EXPECT_EQ(fleet.code, 0) << fleet.err;
  EXPECT_NE(fleet.out.find("NVIDIA H200"), std::string::npos) << fleet.out;
}

// A benchmark.py log that names no model (model_size=) is predicted once --model says it: without,
// the option is what is missing (exit 2), not a measured point.
TEST(Messages, APredictionOfALogWithoutItsModelAsksForIt) {
  std::string log = slurp(kFx + "/sweep_h200.log");
  for (size_t at; (at = log.find(" model_size=8b")) != std::string::npos;) log.erase(at, 14);
  const std::string file = write_file("sweep_no_model.log", log);
  expect_error("predict --to b200 " + file, 2, file + ": names no model (benchmark.py's model_size=, our records' model)");
  EXPECT_EQ(run("predict --to b200 " + file + " --model llama-3.1-8b").code, 0);
}

// Our own records given to decompose as a trace are named for what they are (exit 2).
TEST(Messages, RecordsGivenAsATraceAreSaidToBeRecords) {
  for (const std::string& f : {kFx + "/suite_h200_2l/decompose-short.jsonl", kFx + "/suite_h200_2l/sweep.jsonl"}) {
    expect_error("decompose " + f, 2, f + ": upgradebench's records (");
  }
}

// benchmark.py's switches read one way in every reader: True is 1; a value that is no switch, ZeRO
// stage or GPU count is refused naming the line, never taken as the default.
TEST(SilentlyWrong, ABenchmarkPyLeverReadsOneWayOrIsRefused) {
  const std::string log = slurp(kFx + "/sweep_h200.log");
  const std::string said_true = write_file("sweep_gc_true.log", replaced_all(log, " gc=1 ", " gc=True "));
  const Result both = run("compare " + said_true + " " + kFx + "/sweep_b200.log --json");  // gc=1 there
  ASSERT_EQ(both.code, 0) << both.err;
  EXPECT_EQ(both.out.find("config gc differs"), std::string::npos) << both.out;
  for (const auto& [from, to, says] : {std::tuple{" gc=1 ", " gc=abc ", "gc=abc is neither 0 nor 1"},
                                       std::tuple{" zero=3 ", " zero=abc ", "zero=abc is no ZeRO stage (0 to 3)"},
                                       std::tuple{" world_size=8 ", " world_size=eight ", "world_size=eight is not a number of GPUs"}}) {
    const std::string bad = write_file("sweep_bad_lever.log", replaced_all(log, from, to));
    expect_error("memfit " + bad, 1, bad + ":4: " + says);
    expect_error("history add --db " + fresh_db("bad_lever") + " " + bad, 1, says);
  }
}

// Collectives in torch's dtype names are ours (bfloat16 is bf16); an unknown dtype is refused
// naming the line; two runs of no point in common compare nothing (exit 2).
TEST(SilentlyWrong, CollectivesOfTorchsDtypeNamesAreOurs) {
  const std::string peer = slurp(kFx + "/nccl_peer_h200x2.jsonl");
  const std::string torch_names = write_file("nccl_peer_torch_names.jsonl", replaced_all(peer, R"("dtype": "bf16")", R"("dtype": "bfloat16")"));
  const std::string plain = kFx + "/nccl_records_h200x2_plain.jsonl";
  const Result r = run("compare " + torch_names + " " + plain + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("bfloat16"), std::string::npos) << r.out;
  expect_error("compare " + write_file("nccl_peer_float8.jsonl", replaced_all(peer, R"("dtype": "bf16")", R"("dtype": "float8")")) + " " + plain,
               1, "dtype \"float8\" is none upgradebench knows");
  expect_error("compare " + write_file("nccl_peer_fp32.jsonl", replaced_all(peer, R"("dtype": "bf16")", R"("dtype": "fp32")")) + " " + plain,
               2, "measured no collective, dtype and size in common");
}

// A printout without its TOTAL line: its step is its buckets' sum in every reader, compare's
// table and the history alike.
TEST(SilentlyWrong, APrintoutWithoutATotalLineHasItsBucketsSumAsItsStep) {
  std::string text = slurp(kFx + "/guide/decompose_h200.txt");
  text.erase(text.find("TOTAL"), text.find('\n', text.find("TOTAL")) - text.find("TOTAL") + 1);
  const std::string no_total = write_file("printout_no_total.txt", text);
  const Result r = run("compare " + no_total + " " + kFx + "/guide/decompose_b200.txt");
  ASSERT_EQ(r.code, 0) << r.err;
  const size_t total = r.out.find("\nTOTAL");
  ASSERT_NE(total, std::string::npos) << r.out;
  const std::string row = r.out.substr(total + 1, r.out.find('\n', total + 1) - total - 1);
  EXPECT_EQ(row.find("N/A"), std::string::npos) << row;
  const std::string db = fresh_db("printout_no_total");
  ASSERT_EQ(run("history add --db " + db + " " + no_total).code, 0);
  const Result fleet = run("history fleet decompose.ms.TOTAL --at 8k --db " + db);
  EXPECT_EQ(fleet.code, 0) << fleet.err;
}

// The torch.distributed peer's NCCL version (on each of its lines) is its run's stack in the
// history, as --stack finds it; a log whose lines name two versions is two runs', refused.
TEST(SilentlyWrong, ThePeersNcclVersionIsItsStack) {
  const std::string peer = kFx + "/nccl_peer_h200x2.jsonl";
  const std::string db = fresh_db("peer_nccl_version");
  ASSERT_EQ(run("history add --db " + db + " " + peer).code, 0);
  const Result found = run("history list --db " + db + " --stack nccl=2.28.9 --json");
  ASSERT_EQ(found.code, 0) << found.err;
  EXPECT_EQ(nlohmann::json::parse(found.out)["runs"].size(), 1u) << found.out;
  std::string mixed = slurp(peer);
  const size_t last = mixed.rfind(R"("nccl": "2.28.9")");
  ASSERT_NE(last, std::string::npos);
  mixed.replace(last, 16, R"("nccl": "2.29.1")");
  expect_error("compare " + write_file("nccl_peer_two_versions.jsonl", mixed) + " " + kFx + "/nccl_records_h200x2_plain.jsonl",
               1, "nccl 2.29.1 here, 2.28.9 on the lines before: one log holds one run's stack");
}

// Our records beside benchmark.py's log: the same levers under each format's keys are compared
// as one (ZeRO stage, checkpointing, offloaded optimizer), and our records at the model's every
// layer are its whole depth.
TEST(SilentlyWrong, LeversAcrossFormatsAreComparedAsOne) {
  const std::string ours = std::string(UB_DATA_DIR) + "/examples/sweep_h200_llama-3.1-8b-4layers.jsonl";
  expect_error("compare " + ours + " " + kFx + "/guide/sweep_b200.log", 2,
               "different ZeRO stage: 0 vs 3; different offloaded optimizer: 0 vs 1");
  std::string whole = slurp(ours);
  for (size_t at = 0; (at = whole.find(R"("layers":4,)", at)) != std::string::npos;) whole.replace(at, 11, R"("layers":32,)");
  const Result r = run("compare " + write_file("sweep_all_layers.jsonl", whole) + " " + kFx + "/guide/sweep_b200.log");
  EXPECT_EQ(r.err.find("different depth"), std::string::npos) << r.err;
}

// A length out of memory below lengths that ran (a file of two settings) caps nothing: the longest
// sequence is read from what ran and the failures past it, and the contradiction is said.
TEST(SilentlyWrong, AFailureBelowALengthThatRanCapsNothing) {
  const std::string example = slurp(UB_DATA_DIR "/examples/sweep_h200_llama-3.1-8b-4layers.jsonl");
  const std::string file = write_file("oom_below_runs.jsonl", std::regex_replace(example, std::regex("393216"), "200000"));
  const Result r = run("memfit " + file + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["max_seqlen"].get<int64_t>(), 327680) << r.out;
  EXPECT_TRUE(j["capped_by_out_of_memory"].is_null()) << r.out;
  EXPECT_NE(j["warnings"].dump().find("out of memory at 200000 tokens, while 327680 tokens ran"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("out of memory at 200000 tokens, while 327680 tokens ran"), std::string::npos) << r.err;
  // A failure past every length that ran and below the fit's answer (345120) caps it, unsaid.
  const Result above = run("memfit " + write_file("oom_above_runs.jsonl", std::regex_replace(example, std::regex("393216"),
                                                                                              "340000")) + " --json");
  ASSERT_EQ(above.code, 0) << above.err;
  const nlohmann::json capped = nlohmann::json::parse(above.out);
  EXPECT_EQ(capped["capped_by_out_of_memory"], 340000) << above.out;
  EXPECT_EQ(capped["max_seqlen"], 339968) << above.out;
  EXPECT_EQ(capped["warnings"].dump().find("while"), std::string::npos) << above.out;
}

// A fit read below a length the run ran on its own GPU (the run used memory the usable capacity
// leaves free) says less than was measured: the longest sequence is the length that ran, said so.
TEST(SilentlyWrong, ALongestSequenceIsNeverBelowALengthThatRan) {
  std::string high;  // the example's 327680-token steps at 136.0 GiB, past the 130 GiB usable
  {
    std::istringstream in(slurp(UB_DATA_DIR "/examples/sweep_h200_llama-3.1-8b-4layers.jsonl"));
    for (std::string line; std::getline(in, line);) {
      nlohmann::json r = nlohmann::json::parse(line);
      if (r["type"] == "train_step" && r["seqlen"] == 327680) {
        r["peak_mem_gib"] = r["peak_allocated_gib"] = 136.0, r["device_used_gib"] = 136.5;
      }
      high += r.dump() + "\n";
    }
  }
  const std::string file = write_file("ran_past_fit.jsonl", high);
  const Result r = run("memfit " + file + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["max_seqlen"], 327680) << r.out;
  EXPECT_LT(j["fitted_max_seqlen"].get<int64_t>(), 327680) << r.out;
  const Result text = run("memfit " + file);
  EXPECT_NE(text.out.find("longest sequence that fits: 327680 (327680 ran, past the "), std::string::npos) << text.out;
}

// Two printouts or two bench_flash_attn.py logs: a lever or a batch one leaves out is its
// script's default (no recompute, one sequence), compared as if said; and a printout's or a log's
// work is its batch's, so that a batch-2 step reads and one sequence's work said to be two is not.
TEST(SilentlyWrong, APrintoutsOrAnAttentionLogsUnsaidLeverIsItsScriptsDefault) {
  const std::string guide = slurp(kFx + "/guide/decompose_h200.txt");
  const auto edited = [&](const std::string& name, const std::string& header, const std::vector<std::string>& lines) {
    std::string t = replaced(guide, "zero=2 gc=0 offload=0", header);
    const std::vector<std::string> from = {"wall step=914.8 ms", "52.78 TFLOP  118.1 ms  447.0 TFLOPS  MFU 45.2%",
                                           "368.87 TFLOP  796.7 ms  463.0 TFLOPS  MFU 46.8%",
                                           "421.65 TFLOP  914.8 ms  460.9 TFLOPS  MFU 46.6%"};
    for (size_t i = 0; i < lines.size(); ++i) t = replaced(t, from[i], lines[i]);
    return write_file(name, t);
  };
  // Checkpointing: 1.3x the time, the same work.
  const std::vector<std::string> recomputed = {"wall step=1189.2 ms", "52.78 TFLOP  153.5 ms  343.8 TFLOPS  MFU 34.8%",
                                               "368.87 TFLOP  1035.7 ms  356.2 TFLOPS  MFU 36.0%",
                                               "421.65 TFLOP  1189.2 ms  354.6 TFLOPS  MFU 35.8%"};
  const std::string unsaid = edited("printout_gc_unsaid.txt", "zero=2 offload=0", {});
  const std::string gc1 = edited("printout_gc1.txt", "zero=2 gc=1 offload=0", recomputed);
  expect_error("compare " + unsaid + " " + gc1, 2, "different levers (gc 0 (not said) vs 1, old vs new)");
  // Two sequences a step: twice the work in twice the time is a batch-2 step, read; compared with
  // one sequence's it is another batch.
  const std::string two = edited("printout_bs2.txt", "bs=2 zero=2 gc=0 offload=0",
                                 {"wall step=1829.6 ms", "105.56 TFLOP  236.2 ms  447.0 TFLOPS  MFU 45.2%",
                                  "737.74 TFLOP  1593.4 ms  463.0 TFLOPS  MFU 46.8%",
                                  "843.30 TFLOP  1829.6 ms  460.9 TFLOPS  MFU 46.6%"});
  const std::string db = fresh_db("printout_batches");
  EXPECT_EQ(run(fmt::format("history add --db {} {}", db, two)).code, 0);
  const std::string out = temp_path("printout_bs2.jsonl");
  fs::remove(out);
  ASSERT_EQ(run("decompose " + two + " --out " + out).code, 0);
  EXPECT_NE(slurp(out).find("\"batch\":2"), std::string::npos) << slurp(out);
  expect_error("compare " + kFx + "/guide/decompose_h200.txt " + two, 2, "different batches (1 (not said) vs 2, old vs new)");
  // Said as batch=, the batch is the printout's workload as bs= is.
  const std::string said_batch = write_file("printout_batch2.txt", replaced(slurp(two), "bs=2", "batch=2"));
  const std::string batches = fresh_db("printout_batch_key");
  ASSERT_EQ(run(fmt::format("history add --db {} {}", batches, said_batch)).code, 0);
  EXPECT_NE(run(fmt::format("history list --db {} --json", batches)).out.find("batch=2"), std::string::npos);
  const Result predicted = run("predict " + two + " --to b200-sxm");  // two sequences' step, at one's rate
  ASSERT_EQ(predicted.code, 0) << predicted.err;
  EXPECT_NE(predicted.out.find("  8192     1829.60       1031.58"), std::string::npos) << predicted.out;
  const std::string one_said_two = edited("printout_bs2_one_sequence.txt", "bs=2 zero=2 gc=0 offload=0", recomputed);
  expect_error(fmt::format("history add --db {} {}", db, one_said_two), 1,
               "a step of 421.65 TFLOP is not llama-3.1-8b's work at 8192 tokens x 2 sequences");
  // bench_flash_attn.py: batch=2 with every time doubled reads; beside a log that says no batch it
  // is another problem.
  std::string attention2;
  {
    std::istringstream in(slurp(kFx + "/attention_h200.log"));
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("# gpu", 0) == 0) line += " batch=2";
      if (line.rfind("{", 0) == 0) {
        nlohmann::json r = nlohmann::json::parse(line);
        for (const char* k : {"fwd_ms", "fwd_bwd_ms"}) r[k] = r[k].get<double>() * 2;
        line = r.dump();
      }
      attention2 += line + "\n";
    }
  }
  const std::string batch2 = write_file("attention_batch2.log", attention2);
  EXPECT_EQ(run(fmt::format("history add --db {} {}", fresh_db("attention_batch2"), batch2)).code, 0);
  expect_error("compare " + kFx + "/attention_h200.log " + batch2, 2, "different attention problems (batch 1 (not said) vs 2");
}

// A bandwidth run's kernel is part of what it measured: the driver's memcpy beside the tiled copy
// is refused by compare, and is a fleet of its own in the history.
TEST(SilentlyWrong, BandwidthRunsOfOtherKernelsAreOtherMeasurements) {
  std::string memcpy_run;
  {
    std::istringstream in(slurp(kFx + "/suite_h200_2l/bandwidth.jsonl"));
    for (std::string line; std::getline(in, line);) {
      nlohmann::json r = nlohmann::json::parse(line);
      if (r["type"] == "context") {
        r["config"]["kernel"] = "memcpy", r["config"]["ops"] = {"copy"}, r["date"] = "2026-12-04T06:00:00Z";
        r["gpus"][0]["uuid"] = "GPU-11111111-2222-3333-4444-555555555555";
      } else {
        if (r["op"] != "copy") continue;
        r["kernel"] = "memcpy";
        for (auto& [k, v] : r["gbps"].items()) v = v.get<double>() * 0.9;
        for (auto& [k, v] : r["time_ms"].items()) {
          if (v.is_number_float()) v = v.get<double>() / 0.9;
        }
      }
      memcpy_run += r.dump() + "\n";
    }
  }
  const std::string tiled = kFx + "/suite_h200_2l/bandwidth.jsonl";
  const std::string memcpy_file = write_file("bandwidth_memcpy.jsonl", memcpy_run);
  expect_error("compare " + tiled + " " + memcpy_file, 2, "with different kernels (tiled8cs vs memcpy, old vs new)");
  const std::string db = fresh_db("bandwidth_kernels");
  ASSERT_EQ(run(fmt::format("history add --db {} {} {}", db, tiled, memcpy_file)).code, 0);
  const Result fleet = run(fmt::format("history fleet bandwidth.gbps.copy --at 4G --db {}", db));
  ASSERT_EQ(fleet.code, 0) << fleet.err;
  EXPECT_EQ(fleet.out.find("SLOW"), std::string::npos) << fleet.out;
  EXPECT_NE(fleet.out.find("2 fleets of unlike runs"), std::string::npos) << fleet.out;
}

// Our engine's step traced and Hugging Face's step traced, decomposed with the same options, are
// two programs' steps: each record says whose, and the history keeps them apart.
TEST(SilentlyWrong, OurEnginesTraceAndAnotherProgramsAreTwoWorkloads) {
  const std::string options = " --model llama-3.1-8b --layers 2 --seqlen 4096 --batch 1 --out ";
  const std::string hf = temp_path("traced_hf.jsonl"), ours = temp_path("traced_engine.jsonl");
  fs::remove(hf), fs::remove(ours);
  ASSERT_EQ(run("decompose " + kFx + "/hf_llama_2l_4096.pt.trace.json.gz" + options + hf).code, 0);
  ASSERT_EQ(run("decompose " + kFx + "/engine_llama_2l_4096.pt.trace.json.gz" + options + ours).code, 0);
  EXPECT_NE(slurp(ours).find("\"source\":\"upgradebench engine (CUPTI)\""), std::string::npos);
  EXPECT_NE(slurp(hf).find("\"source\":\"torch.profiler trace\""), std::string::npos);
  const std::string db = fresh_db("traced_programs");
  ASSERT_EQ(run(fmt::format("history add --db {} {} {}", db, hf, ours)).code, 0);
  const Result trend = run(fmt::format("history trend decompose.ms.elementwise --at 4096 --db {}", db));
  ASSERT_EQ(trend.code, 0) << trend.err;
  EXPECT_NE(trend.out.find("upgradebench engine (CUPTI)"), std::string::npos) << trend.out;
  EXPECT_EQ(trend.out.find("-86"), std::string::npos) << "two programs' steps are no change over time:\n" << trend.out;
}

// A context record that leaves a lever out ran without it: `sweep --resume` holds new options to
// that (an MLP tile on a file that says none is another workload, refused before any GPU), and a
// file whose later context says the default where the first said nothing reads as one workload.
TEST(SilentlyWrong, AnUnsaidLeverIsItsDefault) {
  const std::string example = slurp(UB_DATA_DIR "/examples/sweep_h200_llama-3.1-8b-4layers.jsonl");
  ASSERT_EQ(example.find("\"mlp_tile\""), std::string::npos) << "the example must leave mlp_tile out";
  const std::string file = write_file("unsaid_lever.jsonl", example);
  expect_error("sweep --model llama-3.1-8b --layers 4 --precision bf16 --checkpointing --loss-chunk 4096 --mlp-tile 1024 "
               "--seqlens 256k --resume --out " + file, 2, "mlp_tile is 0 there (not said), 1024 here");
  EXPECT_EQ(slurp(file), example);
  // The same runs again under a context that says mlp_tile 0: one workload; 1024: another.
  const std::string first_context = example.substr(0, example.find('\n') + 1);
  const std::string zero = replaced(first_context, R"("master_weights":false)", R"("master_weights":false,"mlp_tile":0)");
  const std::string steps = example.substr(example.find('\n') + 1);
  const std::string later = std::regex_replace(steps, std::regex(R"("exec_time_ms":([0-9]+)\.)"), "\"exec_time_ms\":$1.5");
  EXPECT_EQ(run("memfit " + write_file("unsaid_zero.jsonl", example + zero + later)).code, 0);
  const std::string tiled = replaced(zero, R"("mlp_tile":0)", R"("mlp_tile":1024)");
  expect_error("memfit " + write_file("unsaid_tiled.jsonl", example + tiled + later), 1, "mlp_tile 1024 here, 0 before");
}

// An attention check says whether it passed and what it checked; an error past its tolerance is
// a failed check whatever its "ok" says.
TEST(SilentlyWrong, AnAttentionCheckSaysWhatItChecked) {
  const std::string fixture = kFx + "/attention_records_h200.jsonl";
  const auto edited = [&](const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
    std::istringstream in(measured_again(slurp(fixture), 1.001));
    std::string out;
    for (std::string line; std::getline(in, line);) {
      nlohmann::json r = nlohmann::json::parse(line);
      if (r.value("type", "") == "attention") edit(r["check"]);
      out += r.dump() + "\n";
    }
    return write_file(name, out);
  };
  expect_error("compare " + fixture + " " + edited("check_empty.jsonl", [](nlohmann::json& c) { c = nlohmann::json::object(); }),
               1, "its check has no \"ok\"");
  expect_error("compare " + fixture + " " + edited("check_no_dq.jsonl", [](nlohmann::json& c) { c["tensors"].erase("dQ"); }),
               1, "its check has no tensor dQ");
  expect_error("compare " + fixture + " " +
                   edited("check_past_tolerance.jsonl", [](nlohmann::json& c) { c["tensors"]["O"]["nmse"] = 0.5; }),
               1, "left out: its check against the reference failed)");
}

// A report rewritten in its folder removes the charts its earlier page drew and this one does not,
// and nothing else: files of someone else's in charts/ stay.
TEST(FilesClobbered, ARewrittenReportRemovesOnlyItsOwnEarlierCharts) {
  const std::string dir = temp_path("report_own_charts");
  fs::remove_all(dir);
  const std::string two = fmt::format("report {0}/sweep_h200.log {0}/sweep_b200.log --force --price-old 3 --price-new 6 -o {1}", kFx, dir);
  const Result first = run(two);
  if (first.code != 0 && (first.err.find("gnuplot") != std::string::npos || first.err.find("vega") != std::string::npos)) {
    GTEST_SKIP() << first.err;
  }
  ASSERT_EQ(first.code, 0) << first.err;
  std::vector<std::string> before;
  for (const auto& e : fs::directory_iterator(dir + "/charts")) before.push_back(e.path().filename().string());
  ASSERT_FALSE(before.empty());
  fs::copy_file(dir + "/charts/" + before.front(), dir + "/charts/holiday.png");
  std::ofstream(dir + "/charts/by_hand.svg") << "<svg/>";
  // A page edited by hand (a picture of the user's listed in it) is the user's now: refused, not
  // overwritten; as written again, it is the report's.
  std::ofstream(dir + "/charts/notes.png") << "png";
  std::ofstream(dir + "/charts/notes.svg") << "<svg/>";
  const std::string page = slurp(dir + "/report.md");
  std::ofstream(dir + "/report.md", std::ios::app) << "![notes](charts/notes.png)\n";
  expect_error(fmt::format("report {0}/sweep_h200.log -o {1}", kFx, dir), 2,
               "its report.md is not as upgradebench wrote it");
  EXPECT_NE(slurp(dir + "/report.md").find("![notes]"), std::string::npos);
  std::ofstream(dir + "/report.md", std::ios::trunc) << page;
  const Result one = run(fmt::format("report {0}/sweep_h200.log -o {1}", kFx, dir));
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_TRUE(fs::exists(dir + "/charts/holiday.png"));
  EXPECT_TRUE(fs::exists(dir + "/charts/by_hand.svg"));
  EXPECT_TRUE(fs::exists(dir + "/charts/notes.png"));
  EXPECT_TRUE(fs::exists(dir + "/charts/notes.svg"));
  size_t left = 0;
  for (const auto& e : fs::directory_iterator(dir + "/charts")) {
    const std::string name = e.path().filename().string();
    left += name != "holiday.png" && name != "by_hand.svg" && name.rfind("notes.", 0) != 0;
  }
  EXPECT_LT(left, before.size()) << "the two-run report's own charts the one-run report does not draw are gone";
}

// A page is overwritten only as the report wrote it: its last line the digest of the rest. Edited
// with the digest taken away, cut short, emptied, or replaced by the user's own file beside a page
// of the report's, it is refused and kept.
TEST(FilesClobbered, APageNotAsTheReportWroteItIsKept) {
  const std::string dir = temp_path("report_not_as_written");
  const std::string again = fmt::format("report {}/sweep_h200.log -o {}", kFx, dir);
  fs::remove_all(dir);
  const Result first = run(again);
  if (first.code != 0 && (first.err.find("gnuplot") != std::string::npos || first.err.find("vega") != std::string::npos)) {
    GTEST_SKIP() << first.err;
  }
  ASSERT_EQ(first.code, 0) << first.err;
  const std::string md = slurp(dir + "/report.md"), html = slurp(dir + "/report.html");
  const auto without_last_line = [](const std::string& text) { return text.substr(0, text.rfind('\n', text.size() - 2) + 1); };
  const std::vector<std::pair<std::string, std::string>> pages = {
      {"report.md", without_last_line(md) + "my note\n"},
      {"report.md", md.substr(0, md.size() / 2)},
      {"report.md", ""},
      {"report.html", replaced(without_last_line(html), "<h1>", "<h1>mine ")},
  };
  for (const auto& [page, text] : pages) {
    SCOPED_TRACE(page + ": " + text.substr(0, 40));
    std::ofstream(dir + "/" + page, std::ios::trunc) << text;
    expect_error(again, 2, "its " + page + " is not ");  // as the report wrote it, or (its mark cut away) a page of it
    EXPECT_EQ(slurp(dir + "/" + page), text);
    std::ofstream(dir + "/report.md", std::ios::trunc) << md;
    std::ofstream(dir + "/report.html", std::ios::trunc) << html;
  }
  std::ofstream(dir + "/report.md", std::ios::trunc) << "# my own notes\n";
  expect_error(again, 2, "its report.md is not a page upgradebench wrote");
  std::ofstream(dir + "/report.md", std::ios::trunc) << md;
  EXPECT_EQ(run(again).code, 0) << "as written, the pages are the report's";
}

// A folder's name that reads like an option, or the filesystem's root, is no report's folder:
// refused before anything is created.
TEST(FilesClobbered, AReportFolderIsNamedAsAFolder) {
  for (const char* name : {"--json", "-", "--"}) {
    expect_error(fmt::format("report {}/sweep_h200.log -o {}", kFx, name), 2, "a folder's name that reads like an option");
    EXPECT_FALSE(fs::exists(name));
  }
  expect_error(fmt::format("report {}/sweep_h200.log -o /", kFx), 2, "the filesystem's root is no report's folder");
  expect_error(fmt::format("report {}/sweep_h200.log -o /tmp/..", kFx), 2, "the filesystem's root is no report's folder");
  // decide's page alike: a file where the folder goes, or no name at all, refused in one line.
  const std::string file = write_file("page_is_a_file", "mine");
  expect_error("decide -o " + file, 2, "-o " + file + ": a file, not a folder");
  EXPECT_EQ(slurp(file), "mine");
  expect_error("decide -o ''", 2, "--page: an empty value for -o,--page,--out (give one, or leave the option out)");
  // A suite's folder, not given as an input, is still no place for a page.
  expect_error("report " + kFx + "/sweep_h200.log -o " + kFx + "/suite_h200_2l", 2,
               "a suite's folder (it holds manifest.json): write the page into another folder");
  expect_error("report " + kFx + "/sweep_h200.log -o " + kFx + "/suite_h200_2l/logs", 2, "inside a suite's folder");
  // Nor into a suite's folder that is an input: it keeps what was measured, and nothing else.
  const fs::path suite = temp_path("suite_is_the_page");
  fs::remove_all(suite);
  fs::copy(kFx + "/suite_h200_2l", suite, fs::copy_options::recursive);
  for (const std::string& spelled : {suite.string(), suite.string() + "/", suite.string() + "/.", suite.string() + "/logs",
                                     suite.string() + "/new_folder"}) {
    expect_error("decide " + suite.string() + " --to b200-sxm -o " + spelled, 2,
                 "the folder is an input, or in one (" + suite.string() + "): write the page into another folder");
  }
  EXPECT_FALSE(fs::exists(suite / "new_folder"));
  EXPECT_FALSE(fs::exists(suite / "report.html"));
  EXPECT_FALSE(fs::exists(suite / "charts"));
  // A part of the suite emptied, or holding its context record alone, is data missing (exit 1),
  // not a file of the wrong kind (2).
  const std::string context = slurp((suite / "bandwidth.jsonl").string()).substr(0, slurp((suite / "bandwidth.jsonl").string()).find('\n') + 1);
  std::ofstream(suite / "bandwidth.jsonl", std::ios::trunc).flush();
  expect_error("decide " + suite.string() + " --to b200-sxm", 1,
               "part bandwidth is done, but its records bandwidth.jsonl are empty");
  std::ofstream(suite / "bandwidth.jsonl", std::ios::trunc) << context;
  expect_error("decide " + suite.string() + " --to b200-sxm", 1, "bandwidth.jsonl: our records with no measurement after the context record");
}

// Our context record's shape beside the model's name: a record whose widths are not the named
// model's is refused, not counted with the named model's FLOPs.
TEST(SilentlyWrong, ARunWhoseShapeIsNotItsModelsIsRefused) {
  const std::string ours = slurp(kFx + "/train_records_h200_ours.jsonl");
  for (const auto& [from, to] : {std::pair{R"("hidden":4096)", R"("hidden":5120)"}, std::pair{R"("kv_heads":8)", R"("kv_heads":32)"},
                                 std::pair{R"("config_layers":32)", R"("config_layers":80)"}}) {
    const std::string edited = write_file("shape_not_model.jsonl", std::regex_replace(ours, std::regex(from), to));
    expect_error("report " + edited + " -o " + fresh_folder("shape_report"), 1, "the records name another model than the one that ran");
  }
}

// A byte of no valid UTF-8 sequence in what an error quotes (a safetensors header's key) is
// shown as \xNN, never written raw to the terminal.
TEST(Messages, AnErrorShowsInvalidUtf8AsItsBytes) {
  const std::string header = "{\"\xff\": 1}";
  std::string file(8, '\0');
  file[0] = static_cast<char>(header.size());
  const std::string path = write_file("invalid_utf8.safetensors", file + header);
  const Result r = run("train --model llama-tiny --seqlen 16 --weights " + path);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("\\xff"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\xff'), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// PREDICTIONS MEASURED given the other way round: the message gives the order that works.
TEST(Messages, AReportOfARunThenItsPredictionsSaysWhichComesFirst) {
  const std::string predictions = temp_path("reversed_predictions.jsonl");
  fs::remove(predictions);
  ASSERT_EQ(run(fmt::format("predict {}/sweep_h200.log --to b200 --out {}", kFx, predictions)).code, 0);
  expect_error(fmt::format("report {}/sweep_b200.log {} -o {}", kFx, predictions, temp_path("reversed_report")), 2,
               fmt::format("is predict's records and comes first: `upgradebench report {} {}/sweep_b200.log`", predictions, kFx));
}

// A run beside a prediction in a report is "the new GPU measured": one of another GPU or of
// another model is refused, naming what differs.
TEST(SilentlyWrong, AReportPairsAPredictionWithItsOwnGpuAndWorkload) {
  const std::string to_mi = temp_path("pred_mi300x.jsonl"), to_b200 = temp_path("pred_b200.jsonl");
  fs::remove(to_mi), fs::remove(to_b200);
  ASSERT_EQ(run(fmt::format("predict {}/sweep_h200.log --to mi300x --out {}", kFx, to_mi)).code, 0);
  ASSERT_EQ(run(fmt::format("predict {}/sweep_h200.log --to b200-sxm --out {}", kFx, to_b200)).code, 0);
  const std::string page = temp_path("report_pred_pairs");
  expect_error(fmt::format("report {} {}/sweep_b200.log -o {}", to_mi, kFx, page), 2,
               "is not a measurement of what");
  expect_error(fmt::format("report {} {}/sweep_h200.log -o {}", to_b200, kFx, page), 2, "GPU NVIDIA H200 vs b200-sxm");
  expect_error(fmt::format("report {} {}/sweep_70b.log -o {}", to_b200, kFx, page), 2, "is not a measurement of what");
}

// Bandwidth records whose check failed: the history says so and stores no empty run; predict
// --measured holds its bandwidth records to their check as every reader does.
TEST(SilentlyWrong, BandwidthThatFailedItsCheckIsNeitherStoredNorPredictedFrom) {
  const std::string bandwidth = kFx + "/suite_h200_2l/bandwidth.jsonl";
  const std::string failed = write_file("bandwidth_all_failed.jsonl",
                                        std::regex_replace(slurp(bandwidth), std::regex(R"("check":"ok")"), R"("check":"failed")"));
  expect_error("history add --db " + fresh_db("bandwidth_failed") + " " + failed, 1,
               "no bandwidth record to store, 6 left out (the first: ");
  const std::string unchecked = write_file("bandwidth_unchecked.jsonl",
                                           std::regex_replace(slurp(bandwidth), std::regex(R"("check":"ok",)"), ""));
  expect_error("predict " + kFx + "/suite_h200_2l/decompose-short.jsonl --to b200-sxm --measured " + unchecked, 1,
               "no \"check\": whether the copy matched");
}

// Where one measurement ends and another begins: a mamf-finder.py log with its date and GPU UUID
// edited, and a bench_flash_attn.py log with a row left out, are the logs they copy; two runs
// whose one length's median and interval happen to fall alike, their other lengths not, are two
// measurements; a benchmark.py log added while its sweep ran, then again when it finished, grows.
TEST(SilentlyWrong, OneMeasurementIsToldByAllItsFiguresNotOne) {
  const std::string mamf = slurp(kFx + "/mamf_finder_real_h200.txt");
  const std::string moved = write_file("mamf_finder_moved.txt", std::regex_replace(
      replaced(mamf, "2026-11-30 22:59:20", "2026-12-06 22:59:20"), std::regex("95b16759"), "deadbeef"));
  expect_error("compare " + kFx + "/mamf_finder_real_h200.txt " + moved, 2, "are the same measurement");
  const std::string db = fresh_db("all_figures");
  const Result added = run("history add --db " + db + " " + kFx + "/mamf_finder_real_h200.txt " + moved + " --json");
  ASSERT_EQ(added.code, 0) << added.err;
  EXPECT_EQ(nlohmann::json::parse(added.out)["files"][1]["runs"][0]["status"], "same measurement") << added.out;
  std::string fewer;
  {
    std::istringstream in(slurp(kFx + "/attention_h200.log"));
    int rows = 0;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("{", 0) == 0 && ++rows == 3) continue;
      fewer += line + "\n";
    }
  }
  expect_error("compare " + kFx + "/attention_h200.log " + write_file("attention_fewer.log", fewer), 2, "are the same measurement");
  // Two runs: the 4096 steps differ, though their median and its interval fall alike.
  std::string nightly;
  {
    std::istringstream in(replaced(slurp(kFx + "/records_h200_rerun.jsonl"), "2026-11-30", "2026-12-02"));
    const double steps[] = {80.07999999999998, 80.1, 80.3, 80.32};  // median 80.2 and its interval, as the original's
    size_t i = 0;
    for (std::string line; std::getline(in, line);) {
      nlohmann::json r = nlohmann::json::parse(line);
      if (r["type"] == "train_step" && r["seqlen"] == 4096 && !r["warmup"].get<bool>() && i < 4) r["exec_time_ms"] = steps[i++];
      nightly += r.dump() + "\n";
    }
  }
  const Result two = run("compare " + kFx + "/records_h200.jsonl " + write_file("records_nightly.jsonl", nightly));
  EXPECT_EQ(two.code, 0) << two.err;
  // A sweep log added while it ran, then finished.
  const std::string log = slurp(kFx + "/sweep_h200.log");
  const std::string running = temp_path("sweep_running.log");
  std::ofstream(running) << log.substr(0, log.rfind("===== seq_len="));
  const std::string grown_db = fresh_db("peer_grown");
  ASSERT_EQ(run("history add --db " + grown_db + " " + running).code, 0);
  std::ofstream(running) << log;
  const Result grown = run("history add --db " + grown_db + " " + running + " --json");
  ASSERT_EQ(grown.code, 0) << grown.err;
  EXPECT_EQ(nlohmann::json::parse(grown.out)["files"][0]["runs"][0]["status"], "grown") << grown.out;
}

// A check rests on its figures: an attention tensor's error without a number, or under a tolerance
// looser than the tool checks to, and a MAMF check without its worst ratio, are not passes; a
// benchmark.py warm-up step logged lower than its time gives is refused.
TEST(SilentlyWrong, ChecksAndFiguresRestOnWhatTheySay) {
  const std::string fixture = kFx + "/attention_records_h200.jsonl";
  std::string loose, bare;
  {
    std::istringstream in(measured_again(slurp(fixture), 1.001));
    for (std::string line; std::getline(in, line);) {
      nlohmann::json r = nlohmann::json::parse(line), b = r;
      if (r.value("type", "") == "attention") {
        r["check"]["tensors"]["O"]["tolerance"] = 10.0, r["check"]["tensors"]["O"]["nmse"] = 5.0;
        b["check"]["tensors"]["O"].erase("nmse");
      }
      loose += r.dump() + "\n", bare += b.dump() + "\n";
    }
  }
  expect_error("compare " + fixture + " " + write_file("check_loose.jsonl", loose), 1, "left out: its check against the reference failed");
  expect_error("compare " + fixture + " " + write_file("check_bare.jsonl", bare), 1, "its check of O has no \"nmse\"");
  const std::string mamf = std::regex_replace(slurp(kFx + "/mamf_records_h200_b.jsonl"), std::regex(R"("worst_ratio":[0-9.e+-]+)"),
                                              R"("worst":0)");
  expect_error("compare " + kFx + "/mamf_records_h200_a.jsonl " + write_file("mamf_no_worst.jsonl", mamf), 1, "has no \"worst_ratio\"");
  const std::string log = slurp(kFx + "/sweep_h200.log");
  expect_error("memfit " + write_file("warmup_low.log", replaced(log, R"("tflops": "78.08")", R"("tflops": "10.00")")), 1,
               fmt::format("warmup_low.log:{}: seqlen 8192: a step of 5400 ms logged at 10.0 TFLOPS", line_of(log, "78.08")));
}

// A run's optimizer is part of what it ran: another one (its name, a hyperparameter) is named
// among the differences, and --strict refuses it.
TEST(SilentlyWrong, AnotherOptimizerIsNamed) {
  const std::string sweep = kFx + "/suite_h200_2l/sweep.jsonl";
  std::string other;
  {
    std::istringstream in(measured_again(slurp(sweep), 1.01));
    for (std::string line; std::getline(in, line);) {
      nlohmann::json r = nlohmann::json::parse(line);
      if (r["type"] == "context") r["config"]["optimizer"]["name"] = "SGD";
      other += r.dump() + "\n";
    }
  }
  const std::string path = write_file("sweep_sgd.jsonl", other);
  const Result r = run("compare " + sweep + " " + path);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("optimizer.name"), std::string::npos) << r.out;
  expect_error("compare " + sweep + " " + path + " --strict", 1, "optimizer.name");
}

// An option a command has no use for with its inputs is refused, not dropped: decide --model with
// two measured GPUs, decide --from with a suite, predict --layers against records of a depth.
TEST(Messages, OptionsTheInputsAnswerAreRefused) {
  expect_error(fmt::format("decide {0}/sweep_h200.log {0}/sweep_b200.log --force --model llama-3.1-70b", kFx), 2,
               "--model goes with one GPU's folder or the catalog");
  expect_error(fmt::format("decide {0}/suite_h200_2l --to b200-sxm --from h100-sxm", kFx), 2,
               "--from does not go with a suite folder");
  // The GPU the folder measured, as --to: nothing to predict (its own rows would be PREDICTED).
  expect_error(fmt::format("decide {0}/suite_h200_2l --to h200", kFx), 2, "--to h200-sxm is the GPU");
  expect_error(fmt::format("predict {0}/suite_h200_2l/decompose-short.jsonl --to b200-sxm --layers 7", kFx), 2,
               "the decomposition ran 2 layers, --layers says 7");
}

// What a file says it is reaches every output: the CSV tables (each row's data column) and every
// kind of compare --json, not the text alone.
TEST(SilentlyWrong, ExampleDataSaysSoInEveryFormat) {
  const std::string ex = std::string(UB_DATA_DIR) + "/examples/";
  const Result csv = run("compare " + ex + "example_h200_handwritten.log " + ex + "example_b200_handwritten.log --csv");
  ASSERT_EQ(csv.code, 0) << csv.err;
  std::istringstream lines(csv.out);
  size_t rows = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line.rfind("seqlen,", 0) == 0) continue;
    ++rows;
    EXPECT_TRUE(line.size() >= 13 && line.substr(line.size() - 13) == ",EXAMPLE DATA") << line;
  }
  EXPECT_GT(rows, 0u) << csv.out;
  for (const std::string pair : {"attention_h200.log attention_b200.log", "decompose_h200.txt decompose_b200.txt"}) {
    const Result j = run("compare " + pair + " --json", kFx);
    ASSERT_EQ(j.code, 0) << pair << ": " << j.err;
    EXPECT_EQ(nlohmann::json::parse(j.out)["data"], "EXAMPLE DATA") << pair;
  }
  const Result predicted = run("predict --to b200 " + ex + "example_h200_handwritten.log --csv");
  ASSERT_EQ(predicted.code, 0) << predicted.err;
  EXPECT_NE(predicted.out.find(",PREDICTED FROM EXAMPLE DATA\n"), std::string::npos) << predicted.out;
}

// A predicted part's words name the ends of its own interval: an MoE step's small expert products
// (below HBM's low end) were said to run "from HBM's 2.27x" while the interval began at 1.98x.
TEST(SilentlyWrong, APredictedPartNamesTheEndsOfItsInterval) {
  const std::string records = temp_path("qwen3_decomposed.jsonl");
  fs::remove(records);
  ASSERT_EQ(run("decompose " + kFx + "/hf_qwen3_30b_a3b_4l_4096.pt.trace.json.gz --model qwen3-30b-a3b --layers 4 "
                "--seqlen 4096 --out " + records).code, 0);
  const Result r = run("predict --to b200 " + records + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  size_t checked = 0;
  const nlohmann::json predicted = nlohmann::json::parse(r.out);
  for (const auto& bucket : predicted[0]["buckets"]) {
    for (const auto& part : bucket["parts"]) {
      const std::string source = part["source"];
      const size_t from = source.rfind("; from ");
      if (from == std::string::npos) continue;
      ++checked;
      const std::string ends = source.substr(from);
      EXPECT_NE(ends.find(fmt::format("{:.2f}x", part["low"].get<double>())), std::string::npos) << source;
      EXPECT_NE(ends.find(fmt::format("{:.2f}x", part["high"].get<double>())), std::string::npos) << source;
    }
  }
  EXPECT_GT(checked, 0u) << r.out.substr(0, 400);
}

// decompose's --model, --layers and --seqlen describe the traced step: a depth or length the trace
// did not run puts a bucket past the GPU's peak, refused before anything is printed or recorded;
// and report holds a decomposition to the peak as compare, predict and history add do.
TEST(SilentlyWrong, ADecompositionPastThePeakIsNeitherWrittenNorDrawn) {
  const std::string trace = kFx + "/hf_llama_2l_4096.pt.trace.json.gz";
  const std::string wrong = temp_path("decomposed_as_4_layers.jsonl");
  fs::remove(wrong);
  const Result deeper = run("decompose " + trace + " --model llama-3.1-8b --layers 4 --seqlen 4096 --out " + wrong);
  EXPECT_EQ(deeper.code, 2) << deeper.err;
  EXPECT_NE(deeper.err.find("--model llama-3.1-8b --layers 4 --seqlen 4096 --batch 1: " + trace + " (GPU 0): its bucket "
                            "\"gemm\" would run 1134.5 TFLOPS, past the h200-sxm's dense bf16 peak"), std::string::npos)
      << deeper.err;
  EXPECT_FALSE(fs::exists(wrong)) << "a record of it was written";
  // Nor are the records of the traces before it: the small trace at a length it can hold, then a
  // copy whose GEMMs ran in a third of the time, past the peak at that length.
  nlohmann::json fast = nlohmann::json::parse(slurp(kFx + "/trace_kineto_small.json"));
  for (auto& e : fast["traceEvents"]) {
    const std::string name = e.value("name", "");
    if (e.value("cat", "") == "kernel" && (name.find("gemm") != std::string::npos || name.find("nvjet") != std::string::npos)) {
      e["dur"] = e["dur"].get<double>() * 0.3;
    }
  }
  const std::string fast_trace = write_file("trace_kineto_small_fast_gemms.json", fast.dump());
  const std::string both = temp_path("decomposed_two_traces.jsonl");
  fs::remove(both);
  const Result two = run("decompose " + kFx + "/trace_kineto_small.json " + fast_trace +
                         " --model llama-3.1-8b --layers 1 --seqlen 32 --out " + both);
  EXPECT_EQ(two.code, 2) << two.err;
  EXPECT_NE(two.err.find(fast_trace + " (GPU 0): its bucket \"gemm\""), std::string::npos) << two.err;
  EXPECT_FALSE(fs::exists(both)) << "the first trace's records were written";
  const std::string right = temp_path("decomposed_as_2_layers.jsonl");
  fs::remove(right);
  ASSERT_EQ(run("decompose " + trace + " --model llama-3.1-8b --layers 2 --seqlen 4096 --out " + right).code, 0);
  std::string faster;
  std::istringstream in(slurp(right));
  for (std::string line; std::getline(in, line);) {
    nlohmann::json r = nlohmann::json::parse(line);
    if (r.contains("buckets")) {
      nlohmann::json& buckets = r["buckets"];
      for (auto& b : buckets) {
        if (b["name"] == "gemm") b["tflops"] = 1200.0, b["tflop"] = 1200.0 * b["ms"].get<double>() / 1e3;
      }
    }
    faster += r.dump() + "\n";
  }
  const std::string past = write_file("decomposition_past_peak.jsonl", faster);
  const Result page = run("report " + past + " -o " + fresh_folder("decomposition_past_peak_page"));
  EXPECT_EQ(page.code, 1) << page.err;
  EXPECT_NE(page.err.find("bucket \"gemm\": 1200.0 TFLOPS is past the h200-sxm's dense bf16 peak"), std::string::npos)
      << page.err;
}

// A GPU activity whose args leave out its device and stream is placed by Kineto's pid and tid, as
// the trace draws it (they were folded onto one "stream -1" and called overlapping).
TEST(ValidInput, AKernelWithoutArgsStreamIsPlacedByItsTid) {
  nlohmann::json trace = nlohmann::json::parse(slurp(kFx + "/trace_kineto_small.json"));
  size_t stripped = 0;
  for (auto& e : trace["traceEvents"]) {
    if (!e.contains("args") || !e["args"].is_object()) continue;
    stripped += e["args"].erase("device") + e["args"].erase("stream");
  }
  ASSERT_GT(stripped, 0u);
  const std::string bare = write_file("trace_without_args_stream.json", trace.dump());
  const Result r = run("decompose " + bare + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const Result whole = run("decompose " + kFx + "/trace_kineto_small.json --json");
  ASSERT_EQ(whole.code, 0) << whole.err;
  nlohmann::json a = nlohmann::json::parse(r.out), b = nlohmann::json::parse(whole.out);
  for (auto* j : {&a, &b}) {
    for (auto& d : *j) d.erase("file");
  }
  EXPECT_EQ(a, b);
  // The tid is the kernel's stream: two kernels of one tid that overlap are refused as a stream's
  // kernels are (a stream runs one at a time), naming that stream.
  nlohmann::json* first = nullptr;
  int64_t tid = -1;
  for (auto& e : trace["traceEvents"]) {
    if (e.value("cat", "") != "kernel" || !e.contains("tid") || !e["tid"].is_number_integer()) continue;
    if (!first) {
      first = &e, tid = e["tid"].get<int64_t>();
    } else if (e["tid"].get<int64_t>() == tid) {
      e["ts"] = (*first)["ts"];
      break;
    }
  }
  ASSERT_NE(first, nullptr);
  const std::string overlapping = write_file("trace_without_args_overlapping.json", trace.dump());
  const Result refused = run("decompose " + overlapping);
  EXPECT_EQ(refused.code, 1) << refused.err;
  EXPECT_NE(refused.err.find(fmt::format("ends on stream {}: one stream runs one kernel at a time", tid)), std::string::npos)
      << refused.err;
}

// An --out that holds other records is refused naming what it holds and what the command appends:
// a hand-written sweep file says `sweep`, which is not what sweep writes (train's records).
TEST(Clobbering, AnOutputOfOtherRecordsSaysWhatItHolds) {
  const std::string copy = write_file("sweep_by_hand.jsonl", slurp(kFx + "/records_h200.jsonl"));
  expect_error("sweep --resume --out " + copy + " --seqlens 4k --layers 4", 2,
               "it holds records whose context says `sweep` (hand-written, or of another command), not records of `train` "
               "(what this command appends to): give another file");
  expect_error("predict --to b200 " + kFx + "/decompose_h200.txt --out " + copy, 2, "not records of `predict`");
  EXPECT_EQ(slurp(copy), slurp(kFx + "/records_h200.jsonl")) << "the refused file was written";
}

// A run on a GPU the catalog does not know has no capacity to read its memory fit at: its report
// says so, never a longest sequence made of the length it ran out of memory at.
TEST(SilentlyWrong, AnUnknownGpusLongestSequenceIsNotMadeUp) {
  const std::string acme = write_file("acme_x1.jsonl", replaced(slurp(kFx + "/records_h200.jsonl"), "\"NVIDIA H200\"", "\"Acme X1\""));
  const std::string page = fresh_folder("acme_x1_page");
  const Result r = run("report " + acme + " -o " + page);
  if (report_tools_missing(r)) GTEST_SKIP() << r.err;
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string md = slurp(page + "/report.md");
  EXPECT_EQ(md.find("the fit holds"), std::string::npos) << md;
  EXPECT_NE(md.find("65536 ran out of memory; the catalog does not know the Acme X1: no capacity to read the memory "
                    "fit at (memfit --capacity-gib)"), std::string::npos) << md;
  // On the GPU it names, the fit is read and capped as ever.
  const std::string h200 = fresh_folder("h200_page");
  ASSERT_EQ(run("report " + kFx + "/records_h200.jsonl -o " + h200).code, 0);
  EXPECT_NE(slurp(h200 + "/report.md").find("on one h200-sxm the fit holds"), std::string::npos);
}

// A length the team needs that neither GPU reaches alone is said, not passed over.
TEST(SilentlyWrong, ANeededLengthNeitherGpuReachesIsSaid) {
  const Result r = run(fmt::format("decide {0}/sweep_h200.log {0}/sweep_b200.log --force --need-seqlen 1M", kFx));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("1048576 tokens per sequence fit neither GPU on its own"), std::string::npos) << r.out;
}
