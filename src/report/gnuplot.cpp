// PNG and SVG charts through gnuplot (Debian's gnuplot-nox); see chart.hpp. The data goes inline
// in the script ($data heredocs), one block per series.
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "core/error.hpp"
#include "report/chart.hpp"

namespace ub::report {

namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

std::string script(const Chart& c, const std::string& terminal, const std::string& path) {
  std::string s = fmt::format("set terminal {}\nset output {}\n", terminal, quoted(path));
  s += fmt::format("set title {}\nset xlabel {}\nset ylabel {}\nset grid\nset key top left\n",
                   quoted(c.title), quoted(c.x_label), quoted(c.y_label));
  if (c.log2_x) s += "set logscale x 2\n";
  for (size_t i = 0; i < c.series.size(); ++i) {
    s += fmt::format("$s{} << EOD\n", i);
    for (const auto& [x, y] : c.series[i].points) s += fmt::format("{} {}\n", x, y);
    s += "EOD\n";
  }
  std::vector<std::string> plots;
  for (size_t i = 0; i < c.series.size(); ++i) {
    plots.push_back(fmt::format("$s{} using 1:2 with linespoints lw 2 title {}", i, quoted(c.series[i].name)));
  }
  static const char* kLineColours[] = {"#7f7f7f", "#bcbd22", "#17becf", "#d62728", "#9467bd"};
  for (size_t i = 0; i < c.lines.size(); ++i) {
    plots.push_back(fmt::format("{} with lines dashtype {} lw 1.5 lc rgb '{}' title {}", c.lines[i].y, 2 + i % 3,
                                kLineColours[i % 5], quoted(c.lines[i].name)));
  }
  if (plots.empty()) plots.push_back("NaN notitle");
  s += "plot " + fmt::format("{}", fmt::join(plots, ", \\\n     ")) + "\n";
  return s;
}

void run_gnuplot(const std::string& text, const std::string& what) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    throw WorkError("gnuplot is not installed (Debian package gnuplot-nox): cannot draw the PNG/SVG charts");
  }
  const std::string err = std::filesystem::temp_directory_path() / "upgradebench-gnuplot.err";
  FILE* p = popen(fmt::format("gnuplot 2>{}", err).c_str(), "w");
  if (!p) throw WorkError("cannot start gnuplot");
  std::fwrite(text.data(), 1, text.size(), p);
  const int rc = pclose(p);
  if (rc != 0) throw WorkError(fmt::format("gnuplot failed drawing {} (see {})", what, err));
}

}  // namespace

void render_with_gnuplot(const Chart& c, const std::string& dir) {
  const std::string png = (std::filesystem::path(dir) / (c.id + ".png")).string();
  const std::string svg = (std::filesystem::path(dir) / (c.id + ".svg")).string();
  run_gnuplot(script(c, "pngcairo size 900,540 font 'sans,10'", png), png);
  run_gnuplot(script(c, "svg size 900,540 dynamic font 'sans,10'", svg), svg);
}

}  // namespace ub::report
