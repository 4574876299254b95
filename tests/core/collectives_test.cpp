// The arithmetic of the collective benchmark (sizes per rank, nccl-tests' bus bandwidth, the
// catalog's figure busbw is held against), its records read back, and the reading and comparing
// of real `nccl` runs and of the torch.distributed peer's lines.
#include <gtest/gtest.h>

#include <tuple>

#include "analysis/nccl_comparison.hpp"
#include "base/error.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "facts/collectives.hpp"
#include "records/nccl_records.hpp"
#include "records/readers/log_kind.hpp"
#include "records/readers/nccl_log.hpp"

namespace ub {
namespace {

const std::string kFixtures = UB_FIXTURES_DIR;

const Catalog& catalog() {
  static const Catalog c = Catalog::load(std::string(UB_DATA_DIR) + "/accelerators.json");
  return c;
}

TEST(Collectives, BusFactorsAreNcclTestsDefinitions) {
  EXPECT_DOUBLE_EQ(bus_factor(Collective::all_reduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::all_reduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::all_gather, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::reduce_scatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::alltoall, 2), 0.5);
  for (Collective c : {Collective::broadcast, Collective::reduce, Collective::sendrecv}) {
    EXPECT_DOUBLE_EQ(bus_factor(c, 8), 1.0) << to_string(c);
  }
  EXPECT_DOUBLE_EQ(bus_factor(Collective::all_reduce, 1), 0.0);  // one rank moves nothing
  // 1 GiB all_reduce in 3.2 ms on 8 ranks: algbw 335.5 GB/s, busbw 587.2 GB/s.
  const double algbw = gbps_from(double(1 << 30), 3.2);
  EXPECT_NEAR(algbw, 335.54, 0.01);
  EXPECT_NEAR(algbw * bus_factor(Collective::all_reduce, 8), 587.2, 0.1);
}

TEST(Collectives, CountsPerRankAreWholeElements) {
  // all_gather names the gathered output: each of 3 ranks sends a third, rounded to whole elements.
  const CollectiveCounts g = collective_counts(Collective::all_gather, 1000, 2, 3);
  EXPECT_EQ(g.send, 166u);
  EXPECT_EQ(g.recv, 498u);
  EXPECT_EQ(g.bytes, 996u);
  const CollectiveCounts rs = collective_counts(Collective::reduce_scatter, 1 << 20, 4, 8);
  EXPECT_EQ(rs.send, (1u << 18));
  EXPECT_EQ(rs.recv, (1u << 15));
  const CollectiveCounts ar = collective_counts(Collective::all_reduce, 1001, 2, 8);
  EXPECT_EQ(ar.send, 500u);
  EXPECT_EQ(ar.recv, 500u);
  EXPECT_EQ(ar.bytes, 1000u);
  const CollectiveCounts a2a = collective_counts(Collective::alltoall, 4096, 1, 4);
  EXPECT_EQ(a2a.send, 4096u);
  EXPECT_EQ(a2a.recv, 4096u);
}

TEST(Collectives, NamesListsAndSizes) {
  EXPECT_EQ(parse_collective_list("all", "--ops").size(), 7u);
  EXPECT_EQ(parse_collective_list("all_reduce, sendrecv", "--ops").back(), Collective::sendrecv);
  try {
    parse_collective_list("all_reduce,allreduce", "--ops");
    FAIL() << "an unknown collective was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--ops: unknown collective 'allreduce'"), std::string::npos);
  }
  EXPECT_EQ(binary_size_text(int64_t{4} << 30), "4G");
  EXPECT_EQ(binary_size_text(int64_t{1536} << 20), "1536M");
  EXPECT_EQ(binary_size_text(8192), "8K");
  EXPECT_EQ(binary_size_text(1000), "1000");
  EXPECT_EQ(calls_per_sample(1 << 20), 64);
  EXPECT_EQ(calls_per_sample(int64_t{1} << 30), 4);
  EXPECT_EQ(calls_per_sample(int64_t{8} << 30), 1);
}

TEST(Collectives, BusbwIsHeldAgainstOneDirectionOfTheInterconnect) {
  const Accelerator* h200 = catalog().try_find("h200");
  ASSERT_NE(h200, nullptr);
  ASSERT_TRUE(h200->interconnect_gbps.known());
  EXPECT_DOUBLE_EQ(*busbw_spec_gbps(*h200), h200->interconnect_gbps.value / 2);
  Accelerator unknown = *h200;
  unknown.interconnect_gbps = Figure{};
  EXPECT_FALSE(busbw_spec_gbps(unknown).has_value());
}

TEST(NcclRecords, ReadBackWhatWasWritten) {
  NcclRecord r;
  r.world_size = 2;
  r.collective = Collective::reduce_scatter;
  r.dtype = "fp16";
  r.bytes = 3 << 20;
  r.send_count = 3 << 19;
  r.recv_count = 3 << 18;
  r.in_place = true;
  r.ok = true;
  r.calls_per_sample = 64;
  r.time = TimeStats{summarize({0.02, 0.021, 0.0205, 0.0202}), "noise"};
  r.slowest_rank = 1;
  r.algbw_gbps = 150;
  r.busbw_gbps = 75;
  const nlohmann::json j = r;
  const NcclRecord back = read_nccl_record(Fields(j, "t:1"));
  EXPECT_EQ(back.collective, Collective::reduce_scatter);
  EXPECT_EQ(back.dtype, "fp16");
  EXPECT_EQ(back.bytes, 3 << 20);
  EXPECT_EQ(back.recv_count, 3 << 18);
  EXPECT_TRUE(back.in_place);
  EXPECT_EQ(back.slowest_rank, 1);
  ASSERT_TRUE(back.time.has_value());
  EXPECT_DOUBLE_EQ(back.time->ms.median, r.time->ms.median);
  EXPECT_DOUBLE_EQ(back.time_us(), r.time_us());
  EXPECT_DOUBLE_EQ(back.busbw_gbps, 75);
  // A point that failed its check keeps the count of wrong elements and says why, without a time.
  NcclRecord bad = r;
  bad.ok = false;
  bad.wrong = 17;
  bad.error = "17 elements wrong";
  const nlohmann::json jb = bad;
  EXPECT_FALSE(jb.contains("time_ms"));
  const NcclRecord bad_back = read_nccl_record(Fields(jb, "t:2"));
  EXPECT_FALSE(bad_back.ok);
  EXPECT_EQ(bad_back.wrong, 17u);
  EXPECT_EQ(bad_back.error, "17 elements wrong");
  nlohmann::json unknown = j;
  unknown["collective"] = "allreduce";
  EXPECT_THROW(read_nccl_record(Fields(unknown, "t:3")), WorkError);
}

LineSource fixture(const std::string& name) { return LineSource::file(kFixtures + "/" + name); }

TEST(NcclLogs, OurRecordsAndThePeersLines) {
  EXPECT_EQ(detect_log_kind(fixture("nccl_records_h200x2_plain.jsonl")), LogKind::nccl);
  EXPECT_EQ(detect_log_kind(fixture("nccl_peer_h200x2.jsonl")), LogKind::nccl);
  const NcclLog ours = read_nccl_log(fixture("nccl_records_h200x2_graph.jsonl"));
  EXPECT_EQ(ours.gpu, "NVIDIA H200");
  EXPECT_EQ(ours.source, "upgradebench");
  EXPECT_EQ(ours.world_size, 2);
  EXPECT_EQ(ours.details.at("topology"), "NVLink (18 links active)");
  EXPECT_EQ(ours.details.at("calls"), "replayed from a CUDA graph");
  ASSERT_EQ(ours.points.size(), 8u);
  EXPECT_EQ(ours.points.front().record.collective, Collective::all_reduce);
  EXPECT_EQ(ours.points.front().record.bytes, 1 << 20);
  EXPECT_TRUE(ours.points.front().has_samples());
  EXPECT_NEAR(ours.points.front().time_us, 13.59, 0.01);
  const NcclLog peer = read_nccl_log(fixture("nccl_peer_h200x2.jsonl"));
  EXPECT_EQ(peer.source, "torch.distributed");
  EXPECT_EQ(peer.details.at("nccl"), "2.28.9");
  ASSERT_EQ(peer.points.size(), 8u);
  EXPECT_FALSE(peer.points.front().has_samples());
  EXPECT_GT(peer.points.back().record.busbw_gbps, 200);
}

TEST(NcclLogs, BadLinesAreErrorsNamingTheLine) {
  const std::string point = R"({"collective": "all_reduce", "dtype": "bf16", "bytes": 1024, "world_size": 2, )"
                            R"("time_us": 10, "algbw_gbps": 0.1, "busbw_gbps": 0.1})";
  const std::string rates = R"("algbw_gbps": 0.1, "busbw_gbps": 0.1)";
  std::string later = point;
  later.replace(later.find("\"time_us\": 10"), 13, "\"time_us\": 20");
  later.replace(later.find(rates), rates.size(), "\"algbw_gbps\": 0.0512, \"busbw_gbps\": 0.0512");
  const NcclLog twice = read_nccl_log(LineSource::text(point + "\n" + later + "\n", "t.jsonl"));
  ASSERT_EQ(twice.points.size(), 1u) << "a point measured twice: the later one is kept";
  EXPECT_DOUBLE_EQ(twice.points[0].time_us, 20);
  ASSERT_FALSE(twice.warnings.empty());
  EXPECT_NE(twice.warnings.back().find("t.jsonl:2: all_reduce bf16 1024 B (out of place) measured again"), std::string::npos)
      << twice.warnings.back();
  std::string other = point;
  other.replace(other.find("\"world_size\": 2"), 15, "\"world_size\": 4");
  other.replace(other.find("1024"), 4, "2048");
  other.replace(other.find(rates), rates.size(), "\"algbw_gbps\": 0.2048, \"busbw_gbps\": 0.3072");
  EXPECT_THROW(read_nccl_log(LineSource::text(point + "\n" + other + "\n", "t.jsonl")), WorkError);  // two jobs
  std::string slow = point;
  slow.replace(slow.find("\"time_us\": 10"), 13, "\"time_us\": -1");
  EXPECT_THROW(read_nccl_log(LineSource::text(slow + "\n", "t.jsonl")), WorkError);
  EXPECT_THROW(read_nccl_log(LineSource::text("# nothing\n", "t.jsonl")), WorkError);
  // Rates are bytes over time, the bus's that times the collective's factor: figures that
  // disagree are refused naming the line (a 30000 GB/s busbw beside an unchanged time).
  for (const auto& [from, to, said] :
       {std::tuple{"\"algbw_gbps\": 0.1,", "\"algbw_gbps\": 30000,", "t.jsonl:1: all_reduce of 1024 B: algbw 30000.0 GB/s beside a time of 10 us"},
        std::tuple{"\"busbw_gbps\": 0.1}", "\"busbw_gbps\": 0.3}", "t.jsonl:1: all_reduce of 1024 B on 2 ranks: busbw 0.3 GB/s, where its algbw gives 0.1"}}) {
    std::string bad = point;
    bad.replace(bad.find(from), std::string(from).size(), to);
    try {
      read_nccl_log(LineSource::text(bad + "\n", "t.jsonl"));
      ADD_FAILURE() << bad;
    } catch (const WorkError& e) {
      EXPECT_NE(std::string(e.what()).find(said), std::string::npos) << e.what();
    }
  }
}

TEST(NcclComparisons, OurTwoRunsHaveIntervalsThePeerOneFigure) {
  const NcclLog plain = read_nccl_log(fixture("nccl_records_h200x2_plain.jsonl"));
  const NcclLog graph = read_nccl_log(fixture("nccl_records_h200x2_graph.jsonl"));
  const NcclComparison c = compare_nccl(plain, graph, catalog());
  ASSERT_EQ(c.rows.size(), 8u);
  ASSERT_TRUE(c.interconnect_ratio.has_value());
  EXPECT_DOUBLE_EQ(*c.interconnect_ratio, 1.0);
  for (const NcclComparisonRow& r : c.rows) {
    ASSERT_TRUE(r.speedup.has_value()) << binary_size_text(r.key.bytes);
    EXPECT_LE(r.speedup->low, r.speedup->ratio);
    EXPECT_GE(r.speedup->high, r.speedup->ratio);
    EXPECT_DOUBLE_EQ(*r.ratio, *r.old_side.time_us / *r.new_side.time_us);
    ASSERT_TRUE(r.new_side.of_spec.has_value());
    EXPECT_GT(*r.new_side.of_spec, 0.1);
    EXPECT_LT(*r.new_side.of_spec, 1.0);
  }
  // The graph's replay takes the launches out of 1 MiB all_reduce: faster, the interval above 1.
  EXPECT_EQ(c.rows.front().speedup->verdict, Verdict::faster);
  const NcclComparison p = compare_nccl(read_nccl_log(fixture("nccl_peer_h200x2.jsonl")), graph, catalog());
  for (const NcclComparisonRow& r : p.rows) {
    EXPECT_TRUE(r.ratio.has_value());
    EXPECT_FALSE(r.speedup.has_value());  // the peer's one figure has no interval
  }
  EXPECT_FALSE(p.interconnect_ratio.has_value());  // the peer's lines do not name the GPU
  // A point only one run has is a row with one side.
  NcclLog fewer = graph;
  fewer.points.pop_back();
  const NcclComparison f = compare_nccl(graph, fewer, catalog());
  ASSERT_EQ(f.rows.size(), 8u);
  EXPECT_FALSE(f.rows.back().ratio.has_value());
  EXPECT_FALSE(f.rows.back().new_side.time_us.has_value());
}

}  // namespace
}  // namespace ub
