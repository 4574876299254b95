// Lines written as mamf-finder.py and bench_decompose.py write them read back to exactly what was
// written. The fuzzers only ask that a reader reads or refuses; a reader that refuses a valid line
// (an MFU figure once made every bucket line an "other line") passes them and fails here. The lines
// are drawn at random (fixed seed) over what the formats allow: widths, paddings, decimals, sizes
// up to 13 digits, bucket names holding the format's own words.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "base/line_source.hpp"
#include "records/readers/decomposition_log.hpp"
#include "records/readers/log_kind.hpp"
#include "records/readers/mamf_log.hpp"

namespace ub {
namespace {

// A number as a printf-style writer prints it, and the value a reader must get from that text.
struct Written {
  std::string text;
  double value = 0;
};

// `v` printed with `places` decimals, and the value that text holds.
Written written(double v, int places) {
  Written w;
  w.text = fmt::format("{:.{}f}", v, places);
  w.value = std::strtod(w.text.c_str(), nullptr);
  return w;
}

class Draw {
 public:
  explicit Draw(uint64_t seed) : rng_(seed) {}
  int64_t integer(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  bool coin() { return integer(0, 1) == 1; }
  std::string spaces(int lo, int hi) { return std::string(static_cast<size_t>(integer(lo, hi)), ' '); }
  // 0 to 4 decimals (none: no point), magnitudes from 0 to 10^6.
  Written decimal() {
    const double v = std::uniform_real_distribution<double>(0, 1)(rng_) * std::pow(10.0, static_cast<double>(integer(0, 6)));
    Written w;
    w.text = fmt::format("{:.{}f}", v, integer(0, 4));
    w.value = std::strtod(w.text.c_str(), nullptr);
    return w;
  }
  // A matrix side of 1 to 5 digits, no leading zero: every count of digits a shape line holds, within what a GPU
  // holds (the reader leaves out a side past 2^20 as impossible).
  int64_t size() {
    int64_t hi = 9;
    for (int64_t d = integer(1, 5); d > 1; --d) hi = hi * 10 + 9;
    return integer(1, hi);
  }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(integer(0, static_cast<int64_t>(v.size()) - 1))];
  }

 private:
  std::mt19937_64 rng_;
};

struct Shape {
  int64_t m, n, k;
  Written mean, median, max;
};

// "     1 |  354.0(mean)  356.7(median)  377.0(max) @ 256x4096x4096        | best: ... TFLOPS"
std::string shape_line(Draw& d, int64_t id, const Shape& s) {
  std::string line = fmt::format("{:>{}} |{}{}(mean){}{}(median){}{}(max){}@{}{}x{}x{}", id, d.integer(1, 8),
                                 d.spaces(1, 3), s.mean.text, d.spaces(1, 3), s.median.text, d.spaces(1, 3),
                                 s.max.text, d.spaces(1, 2), d.spaces(0, 1), s.m, s.n, s.k);
  if (d.coin()) line += d.spaces(1, 12) + "| best: " + s.max.text + "(mean) TFLOPS";
  return line;
}

TEST(ReadersRoundTrip, MamfFinderLinesReadBackAsWritten) {
  Draw d(20261202);
  for (int file = 0; file < 300; ++file) {
    std::string text = "\nBenchmark started on 2026-12-02 10:00:00\n\n** Dtype: torch.bfloat16\n\n";
    std::vector<Shape> shapes;
    for (int64_t id = 1, n = d.integer(1, 40); id <= n; ++id) {
      // Timings as a real run has them: the max bounds the mean and the median.
      // Timings of a product that ran: above 0 TFLOPS (a 0 is left out as no timing).
      const auto positive = [&] {
        Written w = d.decimal();
        while (!(w.value > 0)) w = d.decimal();
        return w;
      };
      std::array<Written, 3> t{positive(), positive(), positive()};
      std::sort(t.begin(), t.end(), [](const Written& a, const Written& b) { return a.value < b.value; });
      // Each shape once: a file that measures one twice is read as its later measurement.
      Shape shape{d.size(), d.size(), d.size(), t[0], t[1], t[2]};
      while (std::any_of(shapes.begin(), shapes.end(),
                         [&](const Shape& x) { return x.m == shape.m && x.n == shape.n && x.k == shape.k; })) {
        shape.m = d.size();
      }
      shapes.push_back(shape);
      text += shape_line(d, id, shapes.back()) + "\n";
    }
    // The footer says again what the lines say (the reader checks that it does): the best shape
    // by each figure, the means of the shapes' means.
    const auto best_by = [&](Written Shape::*figure) -> const Shape& {
      return *std::max_element(shapes.begin(), shapes.end(),
                               [&](const Shape& a, const Shape& b) { return (a.*figure).value < (b.*figure).value; });
    };
    const Shape& best = best_by(&Shape::median);
    text += fmt::format("\nTried {} shapes => the best outcomes were:\n", shapes.size());
    for (const auto& [which, figure] : {std::pair{"mean:", &Shape::mean}, {"median:", &Shape::median}, {"max:", &Shape::max}}) {
      const Shape& b = best_by(figure);
      text += fmt::format("{:<8}{} TFLOPS @ {}x{}x{} (MxNxK)\n", which, (b.*figure).text, b.m, b.n, b.k);
    }
    double sum = 0, log_sum = 0;
    int positive = 0;
    for (const Shape& x : shapes) {
      sum += x.mean.value;
      if (x.mean.value > 0) log_sum += std::log(x.mean.value), ++positive;
    }
    const auto written = [](double v) {
      Written w;
      w.text = fmt::format("{:.4f}", v);
      w.value = std::strtod(w.text.c_str(), nullptr);
      return w;
    };
    const Written arithmetic = written(sum / static_cast<double>(shapes.size()));
    const Written geometric = written(positive ? std::exp(log_sum / positive) : 0.0);
    text += fmt::format("\nAcross {} shapes in range: m=[0, 20480, 256] | n=[4096] | k=[4096] in this run:\n", shapes.size());
    text += fmt::format("arithmetic mean: {} TFLOPS\ngeometric mean:{}{} TFLOPS\n", arithmetic.text, d.spaces(1, 3),
                        geometric.text);

    const LineSource t = LineSource::text(text, "mamf.txt");
    SCOPED_TRACE(text);
    ASSERT_EQ(detect_log_kind(t), LogKind::mamf);
    const MamfLog log = read_mamf_log(t);
    EXPECT_EQ(log.dtype, "bf16");
    ASSERT_EQ(log.outcome.shapes.size(), shapes.size());
    for (size_t i = 0; i < shapes.size(); ++i) {
      const MamfShape& got = log.outcome.shapes[i];
      EXPECT_EQ(got.m, shapes[i].m);
      EXPECT_EQ(got.n, shapes[i].n);
      EXPECT_EQ(got.k, shapes[i].k);
      EXPECT_EQ(got.mean_tflops, shapes[i].mean.value);
      EXPECT_EQ(got.median_tflops, shapes[i].median.value);
      EXPECT_EQ(got.max_tflops, shapes[i].max.value);
    }
    ASSERT_TRUE(log.footer_mean && log.footer_median && log.footer_max);
    EXPECT_EQ(log.footer_mean->mean_tflops, best_by(&Shape::mean).mean.value);
    EXPECT_EQ(log.footer_median->median_tflops, best.median.value);
    EXPECT_EQ(log.footer_max->max_tflops, best_by(&Shape::max).max.value);
    EXPECT_EQ(log.footer_median->m, best.m);
    EXPECT_EQ(log.footer_median->k, best.k);
    EXPECT_EQ(log.arithmetic_mean, arithmetic.value);
    EXPECT_EQ(log.geometric_mean, geometric.value);
    EXPECT_EQ(log.ranges, "m=[0, 20480, 256] | n=[4096] | k=[4096]");
  }
}

struct Bucket {
  std::string name;
  Written tflop, ms, tflops;
  std::optional<Written> mfu;
};

// "attention(FA)      <TFLOP> TFLOP  <ms> ms  <TFLOPS> TFLOPS  MFU <pct>%"
TEST(ReadersRoundTrip, BenchDecomposeBucketLinesReadBackAsWritten) {
  Draw d(42);
  // Names hold the format's own words and numbers: a bucket line is read from its end.
  const std::vector<std::string> words = {"attention(FA)", "everything", "else", "TOTAL", "aten::mm", "MFU", "1.5",
                                          "TFLOP", "ms", "TFLOPS", "12%", "x", "nccl:all_gather"};
  for (int file = 0; file < 300; ++file) {
    std::string text;
    std::vector<Bucket> buckets;
    for (int64_t i = 0, n = d.integer(1, 12); i < n; ++i) {
      Bucket b;
      b.name = d.pick(words);
      for (int64_t w = d.integer(0, 3); w > 0; --w) b.name += " " + d.pick(words);
      b.name += fmt::format(" {}", i);  // names are not repeated (a repeated one is the later line)
      // Figures a measurement can have: the rate is the work over the time, MFU a percentage.
      b.tflops = d.decimal();
      b.ms = d.decimal();
      b.tflop = written(b.tflops.value * b.ms.value / 1e3, 9);
      if (d.coin()) b.mfu = written(std::fmod(d.decimal().value, 100.0), 2);
      text += fmt::format("{}{}{} TFLOP{}{} ms{}{} TFLOPS", b.name, d.spaces(1, 10), b.tflop.text, d.spaces(1, 3),
                          b.ms.text, d.spaces(1, 3), b.tflops.text);
      if (b.mfu) text += fmt::format("{}MFU {}%", d.spaces(1, 3), b.mfu->text);
      text += d.coin() ? "\n" : "  \n";
      buckets.push_back(b);
    }
    // The wall step the buckets split (without a TOTAL line the reader holds it to their sum).
    double sum = 0;
    for (const Bucket& b : buckets) sum += b.ms.value;
    const Written step = written(sum, 3);
    text = "# gpu=NVIDIA H200 backend=flash_attention_3 zero=2 gc=0 offload=0 liger=0 seq=8192 time_steps=10\n" +
           fmt::format("# wall step={} ms   peak_mem=16.3 GiB\n", step.text) + text;

    const LineSource t = LineSource::text(text, "decomposition.txt");
    SCOPED_TRACE(text);
    ASSERT_EQ(detect_log_kind(t), LogKind::decomposition);
    const DecompositionLog log = read_decomposition_log(t);
    EXPECT_EQ(log.gpu, "NVIDIA H200");
    EXPECT_EQ(log.summary.at("step"), step.text);
    ASSERT_EQ(log.buckets.size(), buckets.size());
    for (size_t i = 0; i < buckets.size(); ++i) {
      const DecompositionBucket& got = log.buckets[i];
      EXPECT_EQ(got.name, buckets[i].name);
      EXPECT_EQ(got.tflop, buckets[i].tflop.value);
      EXPECT_EQ(got.ms, buckets[i].ms.value);
      EXPECT_EQ(got.tflops, buckets[i].tflops.value);
      EXPECT_EQ(got.mfu_percent.has_value(), buckets[i].mfu.has_value());
      if (got.mfu_percent && buckets[i].mfu) {
        EXPECT_EQ(*got.mfu_percent, buckets[i].mfu->value);
      }
    }
  }
}

}  // namespace
}  // namespace ub
