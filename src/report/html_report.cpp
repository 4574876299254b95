// Report writing; see html_report.hpp.
#include "report/html_report.hpp"

#include "base/text.hpp"

#include <fmt/format.h>

#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "base/error.hpp"
#include "report/report_files.hpp"

namespace ub::report {

namespace {

namespace fs = std::filesystem;

constexpr const char* kScripts[] = {"vega/build/vega.min.js", "vega-lite/build/vega-lite.min.js",
                                    "vega-embed/build/vega-embed.min.js"};

// Text for HTML; control characters from the data (a terminal's escape sequences in a log's
// provenance line) are written as \xNN, as on the terminal, never raw into the page.
std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\n':
      case '\t': out += c; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        else out += c;
    }
  }
  return out;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw WorkError(fmt::format("{}: cannot read", p.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool has_modules(const fs::path& dir) {
  for (const char* s : kScripts) {
    if (!fs::exists(dir / s)) return false;
  }
  return true;
}

constexpr const char* kStyle = R"(
body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.5em} h2{font-size:1.15em;margin-top:1.6em}
table{border-collapse:collapse;font-size:.85em;margin:.6em 0}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:right} th{background:#f3f3f3}
td.l,th.l{text-align:left}
.banner{background:#fff3cd;border:1px solid #e0c36a;padding:.6em 1em;font-weight:600}
.alert{background:#fde2e1;border:1px solid #c0392b;color:#8b1a10;padding:.6em 1em;font-weight:600}
.charts{display:flex;flex-wrap:wrap;gap:1em} .chart{min-width:560px}
)";

}  // namespace

fs::path find_web_modules(const fs::path& hint, const std::vector<fs::path>& candidates) {
  if (!hint.empty()) {
    if (!has_modules(hint)) {
      throw UsageError(fmt::format("{}: no node_modules/vega, vega-lite, vega-embed builds there", hint.string()));
    }
    return hint;
  }
  for (const fs::path& c : candidates) {
    if (has_modules(c)) return c;
  }
  throw WorkError("the HTML report needs the Vega libraries from the npm registry: run "
                  "`npm ci --prefix web` in the source tree (or give --web-dir DIR/node_modules)");
}

std::string render_html(const Document& doc) {
  std::string out;
  for (const Block& b : doc.blocks) {
    if (!b.title.empty()) out += "<h2>" + escape(b.title) + "</h2>\n";
    const Table& t = b.table;
    if (!t.columns.empty()) {
      out += "<table>\n<tr>";
      for (const Column& c : t.columns) {
        out += fmt::format("<th class=\"{}\">{}</th>", c.align == Align::left ? "l" : "r", escape(c.name));
      }
      out += "</tr>\n";
      for (const auto& row : t.rows) {
        out += "<tr>";
        for (size_t i = 0; i < row.size(); ++i) {
          out += fmt::format("<td class=\"{}\">{}</td>", t.columns[i].align == Align::left ? "l" : "r", escape(row[i]));
        }
        out += "</tr>\n";
      }
      out += "</table>\n";
    }
    if (!b.notes.empty()) {
      out += "<ul>\n";
      for (const std::string& n : b.notes) out += "<li>" + escape(n) + "</li>\n";
      out += "</ul>\n";
    }
  }
  return out;
}

namespace {

constexpr std::string_view kHtmlMark = R"(<meta name="generator" content="upgradebench report">)";
constexpr std::string_view kMarkdownMark = "<!-- written by upgradebench report -->";
constexpr size_t kMarkLookBytes = 64 << 10;  // where in a page its mark stands
// A page's last line: the digest of every byte before it, so that a page edited since it was
// written is told from one as written.
constexpr std::string_view kDigestMark = "<!-- upgradebench report digest ";

std::string sealed(std::string page) { return page + std::string(kDigestMark) + fnv1a_hex(page) + " -->\n"; }

// Each chart file a page drew, with the digest of its bytes as drawn, in a comment of the page
// (sealed with it): a chart edited since is told from one as drawn, as a page is.
constexpr std::string_view kChartMark = "<!-- upgradebench chart ";

std::string chart_digest_lines(const fs::path& dir, const std::vector<Chart>& charts) {
  std::string out;
  for (const Chart& c : charts) {
    for (const char* ext : {".png", ".svg"}) {
      const std::string name = "charts/" + c.id + ext;
      out += fmt::format("{}{} {} -->\n", kChartMark, name, fnv1a_hex(slurp(dir / name)));
    }
  }
  return out;
}

// "charts/ID.ext" -> digest, as the pages in `pages` record them.
std::map<std::string, std::string> recorded_charts(const std::vector<fs::path>& pages) {
  static const std::regex line(R"(<!-- upgradebench chart (charts/[A-Za-z0-9_.-]+\.(png|svg)) ([0-9a-f]+) -->)");
  std::map<std::string, std::string> out;
  for (const fs::path& page : pages) {
    const std::string text = slurp(page);
    for (auto m = std::sregex_iterator(text.begin(), text.end(), line); m != std::sregex_iterator(); ++m) {
      out[(*m)[1].str()] = (*m)[3].str();
    }
  }
  return out;
}

}  // namespace

bool edited_since_written(const fs::path& page) {
  // A page is the charts' libraries and a few tables: megabytes. One far larger was not written
  // as it is by a report, and is not read whole to find that out.
  constexpr uintmax_t kMostPageBytes = 256 << 20;
  std::error_code ec;
  if (const uintmax_t bytes = fs::file_size(page, ec); ec || bytes > kMostPageBytes) return true;
  std::ifstream in(page, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t mark = text.rfind(kDigestMark);
  if (mark == std::string::npos) return true;
  return text.substr(mark) != std::string(kDigestMark) + fnv1a_hex(std::string_view(text).substr(0, mark)) + " -->\n";
}

bool written_by_report(const fs::path& page) {
  std::ifstream in(page, std::ios::binary);
  std::string head(kMarkLookBytes, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  if (page.extension() == ".md") {
    // The mark ends the page: read its tail.
    std::error_code ec;
    const auto size = fs::file_size(page, ec);
    if (ec) return false;
    std::ifstream tail_in(page, std::ios::binary);
    tail_in.seekg(static_cast<std::streamoff>(size > kMarkLookBytes ? size - kMarkLookBytes : 0));
    std::string tail(kMarkLookBytes, '\0');
    tail_in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
    tail.resize(static_cast<size_t>(tail_in.gcount()));
    return tail.find(kMarkdownMark) != std::string::npos;
  }
  return head.find(kHtmlMark) != std::string::npos;
}

void write_report(const ReportContent& r_in, const fs::path& dir, const fs::path& web_modules) {
  check_report_folder_name(dir);
  const ReportFolderLock lock(dir);
  ReportContent r = r_in;
  // Charts leave the page too (as PNG and SVG files): each carries what its numbers are itself.
  if (!r.chart_tag.empty()) {
    for (Chart& c : r.charts) c.title += " [" + r.chart_tag + "]";
  }
  // Each page there must be an earlier report's as it wrote it (its mark, and its last line the
  // digest of the rest); a symlink there is refused when the page is placed.
  std::error_code ec;
  const fs::path html_page = dir / "report.html", md_page = dir / "report.md";
  bool any_page = false;
  for (const fs::path& page : {html_page, md_page}) {
    if (fs::symlink_status(page, ec).type() != fs::file_type::regular) continue;
    any_page = true;
    if (!written_by_report(page)) {
      throw UsageError(fmt::format("-o {}: its {} is not a page upgradebench wrote: the report would overwrite it; "
                                   "write the report into a new folder", printable(dir.string()), page.filename().string()));
    }
    if (edited_since_written(page)) {
      throw UsageError(fmt::format("-o {}: its {} is not as upgradebench wrote it (its last line is no digest of the rest: "
                                   "edited, cut short, or written before pages carried one): the report would overwrite "
                                   "it; write the report into a new folder, or move the page away",
                                   printable(dir.string()), page.filename().string()));
    }
  }
  // Charts are ours where a page of ours is: without one, files in charts/ are someone else's.
  const fs::path charts = dir / "charts";
  if (!any_page && fs::is_directory(charts, ec) && !fs::is_empty(charts, ec)) {
    throw UsageError(fmt::format("-o {}: its charts/ holds files no upgradebench report wrote (no page of one beside "
                                 "it): the report would overwrite them; write the report into a new folder",
                                 printable(dir.string())));
  }
  // Every file the report will place, checked before the first is written: a link where the last
  // goes must not leave the others written by a run that fails.
  refuse_symlink(html_page);
  refuse_symlink(md_page);
  for (const Chart& c : r.charts) {
    for (const char* ext : {".png", ".svg"}) refuse_symlink(charts / (c.id + ext));
  }
  // The earlier report's charts: each as its pages recorded it (the digest of its bytes), or it is
  // not overwritten nor removed. A chart file there that no page records is someone else's: kept
  // beside the report, and refused where this report would draw over it.
  const std::map<std::string, std::string> earlier =
      any_page ? recorded_charts({html_page, md_page}) : std::map<std::string, std::string>{};
  constexpr uintmax_t kMostChartBytes = 64 << 20;  // gnuplot's charts are kilobytes: read no more than this
  for (const auto& [name, digest] : earlier) {
    if (!fs::is_regular_file(fs::symlink_status(dir / name, ec))) continue;
    if (const uintmax_t bytes = fs::file_size(dir / name, ec); !ec && bytes > kMostChartBytes) {
      throw UsageError(fmt::format("-o {}: its {} holds {} MiB, no chart upgradebench draws: the report would overwrite "
                                   "or remove it; write the report into a new folder, or move the file away",
                                   printable(dir.string()), name, bytes >> 20));
    }
    if (fnv1a_hex(slurp(dir / name)) != digest) {
      throw UsageError(fmt::format("-o {}: its {} is not as upgradebench drew it (edited since its report recorded its "
                                   "digest): the report would overwrite or remove it; write the report into a new "
                                   "folder, or move the chart away", printable(dir.string()), name));
    }
  }
  for (const Chart& c : r.charts) {
    for (const char* ext : {".png", ".svg"}) {
      const std::string name = "charts/" + c.id + ext;
      if (fs::exists(fs::symlink_status(dir / name, ec)) && !earlier.contains(name)) {
        throw UsageError(fmt::format("-o {}: its {} is no chart its report recorded (a file of someone else's, or of a "
                                     "report written before pages recorded their charts): the report would overwrite "
                                     "it; write the report into a new folder, or move the file away",
                                     printable(dir.string()), name));
      }
    }
  }
  prepare_report_folder(dir);
  // An earlier report's charts that this one does not draw would stay beside it as if its own.
  std::set<std::string> drawn;
  for (const Chart& c : r.charts) {
    for (const char* ext : {".png", ".svg"}) drawn.insert("charts/" + c.id + ext);
  }
  for (const auto& [name, digest] : earlier) {
    if (!drawn.contains(name) && fs::is_regular_file(fs::symlink_status(dir / name, ec))) fs::remove(dir / name, ec);
  }
  // Charts as files first: a missing gnuplot stops here, before anything half-written.
  for (const Chart& c : r.charts) render_with_gnuplot(c, (dir / "charts").string());

  std::string md = "# " + md_text(printable(r.title)) + "\n\n";
  if (!r.banner.empty()) md += "> **" + md_text(printable(r.banner)) + "**\n\n";
  if (!r.alert.empty()) md += "> **" + md_text(printable(r.alert)) + "**\n\n";
  Document md_rest = r.body;
  if (r.lead_block && !md_rest.blocks.empty()) {
    Document head;
    head.blocks.push_back(md_rest.blocks.front());
    md_rest.blocks.erase(md_rest.blocks.begin());
    md += render_markdown(head) + "\n";
  }
  for (const Chart& c : r.charts) md += fmt::format("![{}](charts/{}.png)\n", md_text(printable(c.title)), c.id);
  const std::string chart_digests = chart_digest_lines(dir, r.charts);
  md += "\n" + render_markdown(md_rest) + "\n" + chart_digests + std::string(kMarkdownMark) + "\n";
  place_file(dir / "report.md", sealed(md));

  std::string html = "<!doctype html>\n<html><head><meta charset=\"utf-8\">\n" + std::string(kHtmlMark) + "\n<title>" + escape(r.title) +
                     "</title>\n<style>" + kStyle + "</style>\n";
  for (const char* s : kScripts) html += "<script>\n" + slurp(web_modules / s) + "\n</script>\n";
  html += "</head><body>\n<h1>" + escape(r.title) + "</h1>\n";
  if (!r.banner.empty()) html += "<p class=\"banner\">" + escape(r.banner) + "</p>\n";
  if (!r.alert.empty()) html += "<p class=\"alert\" id=\"stack-alert\">" + escape(r.alert) + "</p>\n";
  // The answer first: the report's first block (the decision at a glance), above the charts.
  Document head, rest = r.body;
  if (r.lead_block && !rest.blocks.empty()) {
    head.blocks.push_back(rest.blocks.front());
    rest.blocks.erase(rest.blocks.begin());
    html += "<div id=\"decision\">\n" + render_html(head) + "</div>\n";
  }
  html += "<div class=\"charts\">\n";
  for (const Chart& c : r.charts) html += fmt::format("<div class=\"chart\" id=\"chart-{}\"></div>\n", c.id);
  html += "</div>\n" + render_html(rest);
  html += "<script>\nconst specs = {\n";
  for (const Chart& c : r.charts) {
    // Names from a peer's log (not JSON, so not checked as UTF-8) keep the page valid: bad bytes become U+FFFD.
    std::string spec = vega_lite_spec(c).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    // A spec is data inside a script element: keep "</" from closing it.
    for (size_t pos = 0; (pos = spec.find("</", pos)) != std::string::npos; pos += 3) spec.replace(pos, 2, "<\\/");
    html += fmt::format("  \"chart-{}\": {},\n", c.id, spec);
  }
  html += "};\nfor (const [id, spec] of Object.entries(specs)) {\n"
          "  vegaEmbed('#' + id, spec, {renderer: 'svg', actions: false})\n"
          "    .then(() => document.getElementById(id).setAttribute('data-rendered', 'yes'))\n"
          "    .catch(e => { document.getElementById(id).textContent = 'chart failed: ' + e; });\n"
          "}\n</script>\n" + chart_digests + "</body></html>\n";
  place_file(dir / "report.html", sealed(html));
}

}  // namespace ub::report
