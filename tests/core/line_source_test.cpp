// The readers' line stream on real files (plain, gzip, a pipe) and the bounded keeping of a
// point's steps: what makes a log of any size readable in memory that does not grow with it.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <zlib.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <fstream>
#include <thread>

#include "base/error.hpp"
#include "base/line_source.hpp"
#include "records/readers/log_kind.hpp"
#include "records/readers/read_run.hpp"
#include "records/run_log.hpp"

namespace ub {
namespace {

struct Seen {
  std::string text;
  size_t index;
  bool cut_short;
};

std::vector<Seen> all_of(const LineSource& s) {
  std::vector<Seen> out;
  s.for_each([&](const Line& l) { out.push_back({std::string(l.text), l.index, l.cut_short}); });
  return out;
}

// Lines of every shape a reader meets: CRLF, empty, one longer than the reading block (it spans
// several), and a last line without its newline.
const std::string kLong(200000, 'x');
const std::string kText = "first\r\n\nsecond " + kLong + "\nlast, cut short";

void expect_the_lines(const std::vector<Seen>& seen) {
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0].text, "first") << "the carriage return is not part of the line";
  EXPECT_EQ(seen[1].text, "");
  EXPECT_EQ(seen[2].text, "second " + kLong);
  EXPECT_EQ(seen[3].text, "last, cut short");
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].index, i);
    EXPECT_EQ(seen[i].cut_short, i == 3) << i;
  }
}

TEST(LineSource, AFileIsReadAfreshByEachPassAndMatchesTheTextInMemory) {
  const std::string path = ::testing::TempDir() + "/lines.txt";
  std::ofstream(path, std::ios::binary) << kText;
  const LineSource file = LineSource::file(path);
  expect_the_lines(all_of(file));
  expect_the_lines(all_of(file));  // a second pass reads the same
  expect_the_lines(all_of(LineSource::text(kText, "t")));
  EXPECT_EQ(file.where(2), path + ":3");
  EXPECT_TRUE(file.hold().cut_short);
  // A pass stops where its callback says.
  size_t visited = 0;
  file.scan([&](const Line& l) {
    ++visited;
    return l.index < 1;
  });
  EXPECT_EQ(visited, 2u);
  EXPECT_TRUE(file.any([](std::string_view l) { return l.rfind("second", 0) == 0; }));
  EXPECT_FALSE(file.any([](std::string_view l) { return l == "absent"; }));
  EXPECT_EQ(file.first_nonblank(), "first");
  // The file grows between passes (a run still being written): the next pass sees it.
  std::ofstream(path, std::ios::app) << "\nmore\n";
  EXPECT_EQ(all_of(file).size(), 5u);
  EXPECT_FALSE(file.hold().cut_short);
}

TEST(LineSource, GzipReadsDecompressed) {
  const std::string path = ::testing::TempDir() + "/lines.txt.gz";
  gzFile out = gzopen(path.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(gzwrite(out, kText.data(), static_cast<unsigned>(kText.size())), static_cast<int>(kText.size()));
  gzclose(out);
  expect_the_lines(all_of(LineSource::file(path)));
}

// A pipe's start is kept for the passes after the first (a reader tells the kind of a log first).
TEST(LineSource, APipesStartIsKeptForTheNextPass) {
  const std::string path = ::testing::TempDir() + "/lines.fifo";
  std::remove(path.c_str());
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(path, std::ios::binary) << kText; });
  const LineSource pipe = LineSource::file(path);
  EXPECT_EQ(pipe.first_nonblank(), "first") << "a pass that stops early";
  expect_the_lines(all_of(pipe));
  expect_the_lines(all_of(pipe));
  writer.join();
  std::remove(path.c_str());
}

// Peak resident memory of this process so far.
long peak_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// A pipe fed far more than is kept is read a line at a time: memory does not grow with it, and a
// pass that needs its lines again past the kept start is refused, saying to give a file.
TEST(LineSource, APipeIsReadALineAtATimeNotHeldWhole) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "under AddressSanitizer a process's memory holds its quarantine of freed blocks";
#endif
  const std::string path = ::testing::TempDir() + "/endless.fifo";
  std::remove(path.c_str());
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  constexpr size_t kLines = 1 << 20;  // 1M lines of 100 bytes: 100 MB through the pipe
  std::thread writer([&] {
    std::ofstream out(path, std::ios::binary);
    const std::string line(99, 'z');
    for (size_t i = 0; i < kLines; ++i) out << line << '\n';
  });
  const long before = peak_kib();
  const LineSource pipe = LineSource::file(path);
  size_t seen = 0;
  pipe.for_each([&](const Line& l) { seen += l.text.size() == 99; });
  writer.join();
  EXPECT_EQ(seen, kLines);
  EXPECT_LT(peak_kib() - before, 40 * 1024) << "KiB more at the peak, for 100 MB through the pipe";
  EXPECT_EQ(pipe.first_nonblank(), std::string(99, 'z')) << "the kept start is read again";
  try {
    pipe.for_each([](const Line&) {});
    FAIL() << "a second whole pass of what was not kept";
  } catch (const WorkError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": a pipe is read once"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

// A pipe that never ends and holds no log is told "not a log" after its kept start: the kind of a
// log is not looked for in an endless stream. The writer stops when the reader has gone.
TEST(LineSource, AnEndlessPipeOfNoLogIsToldByItsStart) {
  const std::string path = ::testing::TempDir() + "/yes.fifo";
  std::remove(path.c_str());
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  std::atomic<bool> done{false};
  std::thread writer([&] {
    std::signal(SIGPIPE, SIG_IGN);
    const int fd = ::open(path.c_str(), O_WRONLY);
    const std::string block = [] {
      std::string b;
      for (int i = 0; i < 4096; ++i) b += "y\n";
      return b;
    }();
    while (!done.load() && ::write(fd, block.data(), block.size()) > 0) {
    }
    ::close(fd);
  });
  const auto start = std::chrono::steady_clock::now();
  {
    const LineSource pipe = LineSource::file(path);
    EXPECT_EQ(detect_log_kind(pipe), LogKind::unknown);
  }  // the pipe closed: the writer's next write fails
  done = true;
  writer.join();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 30);
  std::remove(path.c_str());
}

// What is held whole is bounded by what it costs in memory (a line's text and its string), not by
// the file's size: a file of short lines reaches the bound sooner.
TEST(LineSource, HoldingStopsAtItsBoundNamingTheLine) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "y\n";
  const std::string path = ::testing::TempDir() + "/short_lines.txt";
  std::ofstream(path) << text;
  EXPECT_EQ(LineSource::file(path).hold(1000 * (1 + sizeof(std::string))).lines.size(), 1000u);
  try {
    LineSource::file(path).hold(100 * (1 + sizeof(std::string)));
    FAIL() << "held past the bound";
  } catch (const WorkError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": more than " + std::to_string(100 * (1 + sizeof(std::string))) + " bytes of lines at line 101"), std::string::npos) << e.what();
  }
}

TEST(LineSource, AByteOrderMarkIsNotPartOfTheFirstLine) {
  const std::string path = ::testing::TempDir() + "/bom.txt";
  std::ofstream(path, std::ios::binary) << "\xEF\xBB\xBF{\"type\": \"context\"}\nsecond \xEF\xBB\xBF\n";
  const std::vector<Seen> seen = all_of(LineSource::file(path));
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].text, "{\"type\": \"context\"}");
  EXPECT_EQ(seen[1].text, "second \xEF\xBB\xBF") << "only at the start of the file";
  EXPECT_EQ(all_of(LineSource::text("\xEF\xBB\xBF" "cut", "t")).front().text, "cut");
}

TEST(LineSource, AnOverlongLineIsRefusedByNumberWhenThePassReachesIt) {
  const std::string path = ::testing::TempDir() + "/long.txt";
  std::ofstream(path, std::ios::binary) << "a\nb\n" << std::string(kMaxLineBytes + 1, 'y') << "\n";
  const LineSource file = LineSource::file(path);
  EXPECT_EQ(file.first_nonblank(), "a") << "a pass that stops before it reads fine";
  try {
    file.for_each([](const Line&) {});
    FAIL() << "an over-long line was read";
  } catch (const WorkError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":3: a line longer than 1 MiB"), std::string::npos) << e.what();
  }
  EXPECT_THROW(LineSource::file(::testing::TempDir() + "/absent.txt"), UsageError);
  EXPECT_THROW(LineSource::file(::testing::TempDir()), UsageError);
}

TrainStep step(double ms, bool warmup = false) {
  TrainStep s;
  s.exec_time_ms = ms;
  s.warmup = warmup;
  s.tflops = 1000.0 / ms;
  return s;
}

TEST(PointSteps, EveryStepIsKeptUpToTheBoundAndAUniformSampleBeyondIt) {
  PointSteps few;
  few.add(step(50, true));
  for (int i = 0; i < 10; ++i) few.add(step(100 + i));
  EXPECT_EQ(few.count(), 11u);
  EXPECT_EQ(few.steady_count(), 10u);
  EXPECT_FALSE(few.sampled());
  ASSERT_EQ(few.steady().size(), 10u);
  EXPECT_DOUBLE_EQ(few.steady()[3].exec_time_ms, 103);

  // Four times the bound: step i takes i + 1 ms, so a kept time tells which step it was.
  const size_t n = 4 * kStepsKept;
  const auto fill = [&] {
    PointSteps many;
    for (size_t i = 0; i < n; ++i) {
      TrainStep s = step(1 + static_cast<double>(i));
      s.peak_mem_gib = i == n - 1 ? 80.0 : 40.0;  // the largest is the last step's: it is not lost
      many.add(s);
    }
    return many;
  };
  const PointSteps many = fill();
  EXPECT_EQ(many.steady_count(), n);
  EXPECT_TRUE(many.sampled());
  EXPECT_EQ(many.steady().size(), kStepsKept);
  EXPECT_DOUBLE_EQ(*many.peak_mem_gib(), 80.0);
  EXPECT_TRUE(many.all_have_tflops());
  std::vector<double> ms;
  for (const StepSample& s : many.steady()) ms.push_back(s.exec_time_ms);
  EXPECT_NEAR(summarize(ms).median, (static_cast<double>(n) + 1) / 2, 0.02 * static_cast<double>(n))
      << "the sample's median is the whole set's";
  // Uniform: three quarters of the sample come from the steps past the first kStepsKept.
  const auto late = std::count_if(ms.begin(), ms.end(), [](double v) { return v > static_cast<double>(kStepsKept); });
  EXPECT_NEAR(static_cast<double>(late), 0.75 * kStepsKept, 0.03 * kStepsKept);
  EXPECT_EQ(fill().steady()[123].exec_time_ms, many.steady()[123].exec_time_ms) << "the same log, the same sample";
}

TEST(PointSteps, ALogWithMoreStepsThanTheBoundSaysItsStatisticsAreOfASample) {
  std::string log = "===== seq_len=8192 =====\n# gpu=NVIDIA H200 model_size=8b batch_size=1\n";
  for (size_t i = 0; i < kStepsKept + 100; ++i) {
    log += fmt::format("{{\"step\": {}, \"warmup\": false, \"exec_time_ms\": {}, \"peak_mem_gib\": 16.3}}\n", i, 2000 + i % 7);
  }
  const RunLog run = read_run_log(LineSource::text(log, "long.log"));
  ASSERT_EQ(run.points.size(), 1u);
  const PointStats st = point_stats(run, run.points[0]);
  EXPECT_EQ(st.steady_steps, kStepsKept + 100);
  EXPECT_EQ(st.time_ms.n, kStepsKept);
  EXPECT_TRUE(std::any_of(run.warnings.begin(), run.warnings.end(), [](const std::string& w) {
    return w.find("long.log:1: seq_len=8192 has 16484 steady steps: its statistics are of a uniform sample of 16384") !=
           std::string::npos;
  }));
}

}  // namespace
}  // namespace ub
