// Value parsing for the command line; see arguments.hpp.
#include "cli/arguments.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/line_source.hpp"
#include "base/text.hpp"

namespace ub::cli {

int64_t parse_size(const std::string& text_in, const std::string& what) {
  const std::string text = trim(text_in);
  if (text.empty()) throw UsageError(fmt::format("{}: empty value", what));
  int64_t mult = 1;
  std::string digits = text;
  const char suffix = text.back();
  if (suffix == 'k' || suffix == 'K') mult = 1024;
  if (suffix == 'm' || suffix == 'M') mult = 1024 * 1024;
  if (suffix == 'g' || suffix == 'G') mult = int64_t{1} << 30;
  if (mult != 1) digits.pop_back();
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
    throw UsageError(fmt::format("{}: '{}' is not a positive whole number", what, text));
  }
  errno = 0;
  const long long v = std::strtoll(digits.c_str(), nullptr, 10);
  // Sizes (tokens, sequences, bytes) stop at 2^40: their products with each other and with a
  // model's dimensions stay inside 64 bits.
  constexpr long long kMaxSize = 1LL << 40;
  if (errno == ERANGE || v > kMaxSize / mult) {
    throw UsageError(fmt::format("{}: '{}' is too large (at most 2^40 = 1024G)", what, text));
  }
  if (v <= 0) throw UsageError(fmt::format("{}: '{}' must be positive", what, text));
  return static_cast<int64_t>(v) * mult;
}

std::vector<int64_t> parse_size_list(const std::string& text, const std::string& what) {
  std::vector<int64_t> out;
  // An empty item (1k,,2k; a trailing comma) is a value left out, most likely a typo: said, not skipped.
  const std::vector<std::string> items = split(text, ',');
  if (!items.empty() && items.size() != static_cast<size_t>(std::count(text.begin(), text.end(), ',')) + 1) {
    throw UsageError(fmt::format("{}: '{}' has an empty item between its commas", what, text));
  }
  for (const std::string& item : items) out.push_back(parse_size(item, what));
  if (out.empty()) throw UsageError(fmt::format("{}: no value given", what));
  return out;
}

void refuse_repeated(const std::vector<int64_t>& values, const std::string& what) {
  for (auto it = values.begin(); it != values.end(); ++it) {
    if (std::find(values.begin(), it, *it) != it) throw UsageError(fmt::format("{}: {} is given twice", what, *it));
  }
}

std::vector<int64_t> seqlens_or_documents(const std::string& seqlens, bool seqlens_given,
                                          const std::vector<int64_t>& docs, const std::string& what) {
  if (docs.empty() || seqlens_given) return parse_size_list(seqlens, what);
  return {std::accumulate(docs.begin(), docs.end(), int64_t{0})};
}

std::vector<int64_t> expand_range(int64_t start, int64_t stop, int64_t step,
                                  const std::string& what) {
  if (step <= 0) throw UsageError(fmt::format("{}: step must be positive, got {}", what, step));
  if (start < 0) throw UsageError(fmt::format("{}: start must not be negative, got {}", what, start));
  if (start == 0) start = step;
  if (stop <= start) {
    throw UsageError(fmt::format("{}: empty range {}..{} (the stop is excluded)", what, start, stop));
  }
  if ((stop - start) / step > 100000) throw UsageError(fmt::format("{}: more than 100000 sizes", what));
  std::vector<int64_t> out;
  for (int64_t v = start; v < stop; v += step) out.push_back(v);
  return out;
}

std::vector<int64_t> sizes_from(const std::vector<std::string>& list,
                                const std::vector<int64_t>& range, const std::string& name) {
  if (!list.empty() && !range.empty()) {
    throw UsageError(fmt::format("give --{} or --{}-range, not both", name, name));
  }
  if (!range.empty()) return expand_range(range[0], range[1], range[2], "--" + name + "-range");
  std::vector<int64_t> out;
  for (const std::string& item : list) {
    for (int64_t v : parse_size_list(item, "--" + name)) out.push_back(v);
  }
  return out;
}

std::vector<int> parse_devices(const std::string& text, int available) {
  std::vector<int> out;
  if (trim(text) == "all") {
    for (int i = 0; i < available; ++i) out.push_back(i);
    return out;
  }
  for (const std::string& item : split(text, ',')) {
    if (item.find_first_not_of("0123456789") != std::string::npos) {
      throw UsageError(fmt::format("--devices: '{}' is not a GPU index (or 'all')", item));
    }
    if (item.empty() || item.size() > 6) throw UsageError(fmt::format("--devices: '{}' is not a GPU index", item));
    const int d = std::stoi(item);
    if (std::find(out.begin(), out.end(), d) != out.end()) {
      throw UsageError(fmt::format("--devices: GPU {} is named twice", d));
    }
    if (d >= available) {
      throw UsageError(fmt::format("--devices: GPU {} does not exist (this machine has {})", d,
                                   available));
    }
    out.push_back(d);
  }
  if (out.empty()) throw UsageError("--devices: no GPU given");
  return out;
}

double parse_positive(const std::string& text_in, const std::string& what, std::optional<Range> range) {
  const std::string text = trim(text_in);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  // ERANGE also flags an underflow (1e-308 parses to a tiny number, which is a number): only
  // overflow is refused, through isfinite. A decimal number only: strtod also reads hexadecimal
  // ("0x10" would be a price of 16) and "nan"/"inf".
  const bool decimal = text.find_first_not_of("0123456789.eE+-") == std::string::npos;
  if (text.empty() || !decimal || end != text.c_str() + text.size() || !std::isfinite(v)) {
    throw UsageError(fmt::format("{}: '{}' is not a number", what, text));
  }
  if (!(v > 0)) throw UsageError(fmt::format("{}: must be positive, got '{}'", what, text));
  // A subnormal number divides into infinity (a price of 1e-320 makes the break-even "inf").
  if (v < std::numeric_limits<double>::min()) throw UsageError(fmt::format("{}: '{}' is too small to compute with", what, text));
  if (range && (v < range->lo || v > range->hi)) {
    throw UsageError(fmt::format("{}: '{}' is outside {:g} to {:g}", what, text, range->lo, range->hi));
  }
  return v;
}

void refuse_unkept_output(const std::string& out, const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // Not through a link (records/record_file.hpp's writer refuses one too): said as the option's.
  if (fs::is_symlink(fs::symlink_status(out, ec))) {
    throw UsageError(fmt::format("{} {}: a symbolic link: {} written to the file named, never through a link; give the "
                                 "file it points to", what, out, what == "--db" ? "the history is" : "records are"));
  }
  const fs::file_status st = fs::status(out, ec);
  if (ec || !fs::exists(st) || fs::is_regular_file(st)) return;
  throw UsageError(fmt::format("{} {}: {}, not a file: records are appended to a file that keeps them; give a file", what,
                               out, fs::is_directory(st) ? "a folder" : "a pipe or a device"));
}

void refuse_foreign_records(const std::string& out, const std::vector<std::string>& commands) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (out.empty() || !fs::is_regular_file(out, ec) || fs::file_size(out, ec) == 0) return;
  const auto refuse = [&](const std::string& holds) {
    return UsageError(fmt::format("--out {}: it holds {}, not records of `{}` (what this command appends to): give "
                                  "another file", out, holds, commands.front()));
  };
  unsigned char magic[2] = {0, 0};
  if (std::FILE* f = std::fopen(out.c_str(), "rb")) {
    const size_t n = std::fread(magic, 1, 2, f);
    std::fclose(f);
    if (n == 2 && magic[0] == 0x1f && magic[1] == 0x8b) throw refuse("gzip-compressed data");
  }
  std::string first;
  try {
    first = LineSource::file(out).first_nonblank();
  } catch (const std::exception&) {
    throw refuse("no lines of text");  // a binary file: a first line beyond any record
  }
  if (first.empty()) return;  // blank lines only
  const nlohmann::json j = nlohmann::json::parse(first, nullptr, false);
  const auto text_of = [&](const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
  };
  if (text_of("type") != "context") throw refuse("no upgradebench records");
  const std::string command = text_of("command");
  if (std::find(commands.begin(), commands.end(), command) == commands.end()) {
    throw refuse(fmt::format("records whose context says `{}` (hand-written, or of another command)", printable(command)));
  }
}

namespace {

// Where a path leads: through symlinks, a dangling one's target included (it is where writing
// goes), then to its canonical place as far as it exists.
std::filesystem::path place_of(std::filesystem::path p) {
  namespace fs = std::filesystem;
  std::error_code ec;
  p = fs::absolute(p, ec);
  for (int hops = 0; hops < 40 && fs::is_symlink(p, ec); ++hops) {
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) break;
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  return fs::weakly_canonical(p, ec);
}

// The file an SQLite database name opens: a `file:` URI's path (SQLite reads them), else the name.
std::string sqlite_file_of(const std::string& spec) {
  if (spec.rfind("file:", 0) != 0) return spec;
  std::string path = spec.substr(5);
  path = path.substr(0, path.find_first_of("?#"));
  if (path.rfind("//", 0) == 0) {  // file://host/path: the authority is dropped
    const size_t slash = path.find('/', 2);
    path = slash == std::string::npos ? "" : path.substr(slash);
  }
  return path;
}

}  // namespace

bool same_file(const std::string& a_spec, const std::string& b_spec) {
  namespace fs = std::filesystem;
  const std::string a = sqlite_file_of(a_spec), b = sqlite_file_of(b_spec);
  if (a.empty() || b.empty()) return false;
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  return place_of(a) == place_of(b);
}

void refuse_output_among_inputs(const std::string& out, const std::vector<std::string>& inputs, const std::string& what,
                                const std::string& written) {
  namespace fs = std::filesystem;
  if (out.empty()) return;
  refuse_unkept_output(out, what);
  std::error_code ec;
  const fs::path out_dir = fs::weakly_canonical(fs::absolute(out, ec), ec).parent_path();
  for (const std::string& in : inputs) {
    if (same_file(out, in)) {
      throw UsageError(fmt::format("{} {}: that is an input ({}): {}, which would change what is read; give another "
                                   "file", what, out, in, written));
    }
    if (fs::is_directory(in, ec) && fs::weakly_canonical(in, ec) == out_dir) {
      throw UsageError(fmt::format("{} {}: that is in the folder {} read as an input: the next run would read it as "
                                   "one of the folder's files; give a file elsewhere", what, out, in));
    }
  }
}

namespace {

// Two regular files of the same bytes (a copy): compared block by block, only where the sizes agree.
bool same_bytes(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_regular_file(a, ec) || !fs::is_regular_file(b, ec) || fs::file_size(a, ec) != fs::file_size(b, ec) || ec) {
    return false;
  }
  std::ifstream x(a, std::ios::binary), y(b, std::ios::binary);
  std::vector<char> p(size_t{1} << 16), q(p.size());
  while (x && y) {
    x.read(p.data(), static_cast<std::streamsize>(p.size()));
    y.read(q.data(), static_cast<std::streamsize>(q.size()));
    if (x.gcount() != y.gcount() || !std::equal(p.begin(), p.begin() + x.gcount(), q.begin())) return false;
  }
  return !x.bad() && !y.bad();
}

}  // namespace

void refuse_repeated_inputs(const std::vector<std::string>& inputs, const std::string& command, const std::string& why) {
  namespace fs = std::filesystem;
  // run:06 is run:6: a stored run's id as a number.
  const auto run_id = [](const std::string& s) -> std::string {
    if (s.rfind("run:", 0) != 0 || s.size() == 4 || s.find_first_not_of("0123456789", 4) != std::string::npos) return s;
    const size_t digits = s.find_first_not_of('0', 4);
    return "run:" + (digits == std::string::npos ? "0" : s.substr(digits));
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (size_t j = i + 1; j < inputs.size(); ++j) {
      std::error_code ec;
      const bool same = run_id(inputs[i]) == run_id(inputs[j]) ||
                        (fs::exists(inputs[i], ec) && fs::equivalent(inputs[i], inputs[j], ec)) ||
                        same_bytes(inputs[i], inputs[j]);  // a copy: one measurement, whatever its kind
      if (same) {
        throw UsageError(fmt::format("{}: {} and {} are the same measurement: {}", command, inputs[i], inputs[j], why));
      }
    }
  }
}

void refuse_page_over_inputs(const std::string& dir, const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  if (dir.empty()) return;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) {
    throw UsageError(fmt::format("-o {}: not a folder (something else is there): a report is a folder of files; give a "
                                 "folder, new or of an earlier report", printable(dir)));
  }
  const fs::path charts = fs::weakly_canonical(fs::path(dir) / "charts", ec);
  const auto refuse_if_page = [&](const fs::path& file, const std::string& given) {
    for (const char* page : {"report.html", "report.md"}) {
      const fs::path p = fs::path(dir) / page;
      if (fs::exists(p, ec) && fs::equivalent(p, file, ec)) {
        throw UsageError(fmt::format("-o {}: its {} is an input ({}): the page would overwrite it; write the page "
                                     "into another folder", dir, page, given));
      }
    }
    const fs::path parent = fs::weakly_canonical(file, ec).parent_path();
    if (!ec && parent == charts) {
      throw UsageError(fmt::format("-o {}: {} is in its charts folder, which the page rewrites; write the page into "
                                   "another folder", dir, given));
    }
  };
  for (const std::string& in : inputs) {
    // A folder that is an input (a suite's results) keeps what was measured, and nothing else: the
    // page goes to a folder of its own.
    if (fs::is_directory(in, ec)) {
      const fs::path folder = fs::weakly_canonical(in, ec), page = fs::weakly_canonical(dir, ec);
      const bool inside = !ec && std::mismatch(folder.begin(), folder.end(), page.begin(), page.end()).first == folder.end();
      if (inside) {
        throw UsageError(fmt::format("-o {}: the folder is an input, or in one ({}): write the page into another folder",
                                     printable(dir), printable(in)));
      }
      for (const fs::directory_entry& e : fs::directory_iterator(in, ec)) {
        if (e.is_regular_file(ec)) refuse_if_page(e.path(), e.path().string());
      }
    } else if (fs::exists(in, ec)) {
      refuse_if_page(in, in);
    }
  }
  // A suite's folder keeps what was measured and what `decide` and `suite --resume` read: a page
  // written there, or in a folder under it (its logs/), is a file of neither. A suite's manifest
  // sits beside its env.json.
  const fs::path target = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  for (fs::path p = target; !ec && !p.empty(); p = p.parent_path()) {
    if (fs::exists(p / "manifest.json", ec) && fs::exists(p / "env.json", ec)) {
      throw UsageError(fmt::format("-o {}: {} (it holds manifest.json): write the page into another folder",
                                   printable(dir), p == target ? std::string("a suite's folder")
                                                               : fmt::format("inside a suite's folder, {}", printable(p.string()))));
    }
    if (p == p.parent_path()) break;
  }
}

std::optional<double> parse_optional_positive(const std::string& text, const std::string& what,
                                              std::optional<Range> range) {
  if (text.empty()) return std::nullopt;
  return parse_positive(text, what, range);
}

Prices parse_prices(const std::string& price_old, const std::string& price_new) {
  Prices p{parse_optional_positive(price_old, "--price-old", kPriceRange),
           parse_optional_positive(price_new, "--price-new", kPriceRange)};
  if (p.old_gpu.has_value() != p.new_gpu.has_value()) {
    throw UsageError("give both --price-old and --price-new (USD per GPU-hour of each GPU; --price-from and --price-to, "
                     "their older names), or neither");
  }
  if (const double apart = p.old_gpu ? std::max(*p.new_gpu / *p.old_gpu, *p.old_gpu / *p.new_gpu) : 1;
      apart > kMaxPriceRatio) {
    throw UsageError(fmt::format("--price-old {} and --price-new {}: {:.3g} times apart, where no two GPUs' hourly "
                                 "prices are {:g} times apart: give both in USD per GPU-hour", price_old, price_new,
                                 apart, kMaxPriceRatio));
  }
  return p;
}

double parse_duration_seconds(const std::string& text_in, const std::string& what) {
  const std::string text = trim(text_in);
  const auto bad = [&] {
    return UsageError(fmt::format("{}: '{}' is not a duration (30m, 1h30m, 90s, or seconds)", what, text));
  };
  constexpr double kWeek = 7 * 86400;
  const auto too_long = [&] {
    return UsageError(fmt::format("{}: '{}' is longer than a week (7 days: 168h)", what, text));
  };
  if (text.empty()) throw bad();
  if (text.find_first_not_of("0123456789.") == std::string::npos) {
    const double s = parse_positive(text, what);
    if (s > kWeek) throw too_long();
    if (s < 1) throw UsageError(fmt::format("{}: '{}' is under a second: no measurement fits in it", what, text));
    return s;
  }
  double total = 0;
  size_t i = 0;
  std::string units_left = "hms";  // each unit once, largest first: 1h30m, not 30m1h or 1h1h
  while (i < text.size()) {
    const size_t digits = text.find_first_not_of("0123456789.", i);
    if (digits == i || digits == std::string::npos) throw bad();
    const std::string number = text.substr(i, digits - i);
    // A part may be zero (2h0m); the whole may not.
    const double v = number.find_first_not_of("0.") == std::string::npos && number.find_first_of('0') != std::string::npos
                         ? 0.0
                         : parse_positive(number, what);
    const char unit = text[digits];
    const size_t at = units_left.find(unit);
    if (at == std::string::npos) {
      if (std::string("hms").find(unit) == std::string::npos) throw bad();
      throw UsageError(fmt::format("{}: '{}' gives its units out of order or twice (hours, then minutes, then seconds, "
                                   "each once: 1h30m)", what, text));
    }
    // After a larger unit, minutes and seconds stay under 60: 1h90m reads as a slip for 1h09m or 2h30m.
    if (i > 0 && v >= 60) {
      throw UsageError(fmt::format("{}: '{}' gives {:g}{} after a larger unit: write it in the larger one (2h30m, not "
                                   "1h90m)", what, text, v, unit));
    }
    units_left.erase(0, at + 1);
    total += v * (unit == 'h' ? 3600 : unit == 'm' ? 60 : 1);
    i = digits + 1;
  }
  if (!(total > 0)) throw UsageError(fmt::format("{}: must be positive, got '{}'", what, text));
  if (total > kWeek) throw too_long();
  if (total < 1) throw UsageError(fmt::format("{}: '{}' is under a second: no measurement fits in it", what, text));
  return total;
}

bool parse_master_weights(const std::string& precision) {
  if (precision == "master") return true;
  if (precision == "bf16") return false;
  throw UsageError(fmt::format("--precision must be master or bf16, got \"{}\"", precision));
}

}  // namespace ub::cli
