// PNG and SVG charts through gnuplot (Debian's gnuplot-nox); see chart.hpp. The data goes inline
// in the script ($data heredocs), one block per series.
//
// Text from the logs (GPU and model names, paths) reaches gnuplot's script, and gnuplot runs
// backtick commands inside double-quoted strings: every string goes in single quotes (no
// substitution, a quote written twice), control characters become spaces (a newline would start
// a command), the terminals are `noenhanced` (no markup either). gnuplot is started without a
// shell, its errors go to a file in a private folder made for the run.
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/error.hpp"
#include "report/chart.hpp"
#include "report/report_files.hpp"

namespace ub::report {

namespace {

// A gnuplot string literal that is only text.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char ch : s) {
    if (ch == '\'') out += "''";
    else if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) out += ' ';
    else out += ch;
  }
  return out + "'";
}

// One stacked bar per category: a row of the data block per category (its segments' values), the
// category names as tic labels (single-quoted: data, not script).
std::string stacked_bars(const Chart& c, std::string s) {
  s += "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.85 border -1\n"
       "set boxwidth 0.6\nset key outside right\nset yrange [0:*]\n";
  std::vector<std::string> tics;
  for (size_t k = 0; k < c.categories.size(); ++k) tics.push_back(fmt::format("{} {}", quoted(c.categories[k]), k));
  s += "set xtics (" + fmt::format("{}", fmt::join(tics, ", ")) + ")\n";
  s += "$bars << EOD\n";
  for (size_t k = 0; k < c.categories.size(); ++k) {
    std::string row = std::to_string(k);
    for (const Series& x : c.series) {
      double v = 0;
      for (const auto& [cat, y] : x.points) {
        if (static_cast<size_t>(cat) == k) v = y;
      }
      row += fmt::format(" {}", v);
    }
    s += row + "\n";
  }
  s += "EOD\n";
  std::vector<std::string> plots;
  for (size_t i = 0; i < c.series.size(); ++i) {
    plots.push_back(fmt::format("$bars using {} title {}", i + 2, quoted(c.series[i].name)));
  }
  if (plots.empty()) plots.push_back("NaN notitle");
  s += "plot " + fmt::format("{}", fmt::join(plots, ", \\\n     ")) + "\n";
  return s;
}

std::string script(const Chart& c, const std::string& terminal, const std::string& path) {
  std::string s = fmt::format("set terminal {}\nset output {}\n", terminal, quoted(path));
  // The key below the plot: its names never cover the data or each other.
  s += fmt::format("set title {}\nset xlabel {}\nset ylabel {}\nset grid\nset key below\n",
                   quoted(c.title), quoted(c.x_label), quoted(c.y_label));
  if (!c.categories.empty()) return stacked_bars(c, s);
  bool any_point = false;
  for (const Series& x : c.series) any_point = any_point || !x.points.empty();
  if (!any_point) {
    // Nothing measured to draw (a GPU the catalog does not know has no MFU): an empty frame.
    s += "set xrange [0:1]\nset label 'no data' at graph 0.5, graph 0.5 center\n";
    if (c.lines.empty()) s += "set yrange [0:1]\n";
  } else if (c.log2_x) {
    s += "set logscale x 2\n";
  }
  if (any_point && c.x_min && c.x_max) s += fmt::format("set xrange [{}:{}]\n", *c.x_min, *c.x_max);
  for (size_t i = 0; i < c.series.size(); ++i) {
    s += fmt::format("$s{} << EOD\n", i);
    for (const auto& [x, y] : c.series[i].points) s += fmt::format("{} {}\n", x, y);
    s += fmt::format("EOD\n$b{} << EOD\n", i);
    for (const auto& [x, low, high] : c.series[i].band) s += fmt::format("{} {} {}\n", x, low, high);
    s += "EOD\n";
  }
  // Series i in line type i+1 (its band too); reference lines in grey, each its own dash, named
  // in the key (vertical ones drawn as arrows, keyed by a NaN line of the same style).
  std::vector<std::string> plots;
  for (size_t i = 0; i < c.series.size(); ++i) {
    if (!c.series[i].band.empty()) {
      plots.push_back(fmt::format("$b{} using 1:2:3 with filledcurves fs transparent solid 0.2 noborder lt {} notitle", i, i + 1));
    }
  }
  for (size_t i = 0; i < c.series.size(); ++i) {
    if (c.series[i].points.empty()) continue;
    plots.push_back(fmt::format("$s{} using 1:2 with {} lt {} title {}", i,
                                c.series[i].style == SeriesStyle::markers ? "points pt 2 ps 2 lw 2"
                                : c.series[i].style == SeriesStyle::line  ? "lines lw 1.5"
                                                                          : "linespoints lw 2",
                                i + 1,
                                quoted(c.series[i].name)));
  }
  static const char* kLineColours[] = {"#7f7f7f", "#bcbd22", "#17becf", "#d62728", "#9467bd", "#8c564b"};
  for (size_t i = 0; i < c.lines.size(); ++i) {
    const std::string style = fmt::format("dashtype {} lw 1.5 lc rgb '{}'", 2 + i % 4, kLineColours[i % 6]);
    if (c.lines[i].vertical) {
      s += fmt::format("set arrow from {}, graph 0 to {}, graph 1 nohead {}\n", c.lines[i].at, c.lines[i].at, style);
      plots.push_back(fmt::format("NaN with lines {} title {}", style, quoted(c.lines[i].name)));
    } else {
      plots.push_back(fmt::format("{} with lines {} title {}", c.lines[i].at, style, quoted(c.lines[i].name)));
    }
  }
  if (plots.empty()) plots.push_back("NaN notitle");
  s += "plot " + fmt::format("{}", fmt::join(plots, ", \\\n     ")) + "\n";
  return s;
}

// A folder only this process can use, removed with everything in it when it goes.
class PrivateDir {
 public:
  PrivateDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "upgradebench-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) {
      throw WorkError(fmt::format("cannot make a private temporary folder in {}: {}",
                                  std::filesystem::temp_directory_path().string(), std::strerror(errno)));
    }
    path_ = pattern;
  }
  ~PrivateDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  PrivateDir(const PrivateDir&) = delete;
  PrivateDir& operator=(const PrivateDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Runs `gnuplot` (found on PATH, no shell) with `text` on its standard input.
void run_gnuplot(const std::string& text, const std::string& what) {
  const PrivateDir dir;
  const std::string err_path = (dir.path() / "gnuplot.err").string();
  int in[2];
  if (::pipe2(in, O_CLOEXEC) != 0) throw WorkError(fmt::format("cannot start gnuplot: {}", std::strerror(errno)));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
  // gnuplot draws to its standard output when it cannot open its output file: never onto ours.
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  char arg0[] = "gnuplot";
  char* argv[] = {arg0, nullptr};
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, "gnuplot", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  if (rc != 0) {
    ::close(in[1]);
    if (rc == ENOENT) throw WorkError("gnuplot is not installed (Debian package gnuplot-nox): cannot draw the PNG/SVG charts");
    throw WorkError(fmt::format("cannot start gnuplot: {}", std::strerror(rc)));
  }
  // gnuplot may stop reading early on an error: a broken pipe is then its error, not ours, and
  // SIGPIPE is held back while writing (and taken off if it came).
  sigset_t pipe_signal, before;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, &before);
  bool broken = false;
  for (size_t done = 0; done < text.size();) {
    const ssize_t k = ::write(in[1], text.data() + done, text.size() - done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      broken = true;
      break;
    }
    done += static_cast<size_t>(k);
  }
  ::close(in[1]);
  if (broken) {
    const timespec now{0, 0};
    sigtimedwait(&pipe_signal, nullptr, &now);
  }
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream err(err_path);
    std::string line, last;
    while (std::getline(err, line)) {
      if (!line.empty()) last = line;
    }
    throw WorkError(fmt::format("gnuplot failed drawing {}: {}", what, last.empty() ? "no message" : last));
  }
}

}  // namespace

void render_with_gnuplot(const Chart& c, const std::string& dir) {
  // gnuplot draws into a private folder of its own, whose name it can be told whatever the
  // report's folder is called (a newline in that name cannot be said in gnuplot's script); the
  // file is copied beside its place and renamed into it (report_files.hpp).
  const PrivateDir drawn;
  for (const auto& [ext, terminal] : {std::pair{".png", "pngcairo noenhanced size 900,540 font 'sans,10'"},
                                      std::pair{".svg", "svg noenhanced size 900,540 dynamic font 'sans,10'"}}) {
    const std::filesystem::path place = std::filesystem::path(dir) / (c.id + ext);
    refuse_symlink(place);
    const std::filesystem::path out = drawn.path() / (std::string("chart") + ext);
    run_gnuplot(script(c, terminal, out.string()), place.string());
    const std::string staged = staging_name(place).string();
    std::filesystem::remove(staged);
    std::filesystem::copy_file(out, staged);  // a copy: the temporary folder may be on another file system
    place_staged(place);
  }
}

}  // namespace ub::report
