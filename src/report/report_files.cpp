// Writing a report's files into place; see report_files.hpp.
#include "report/report_files.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <system_error>

#include "base/error.hpp"

namespace fs = std::filesystem;

namespace ub::report {

void refuse_symlink(const fs::path& place) {
  std::error_code ec;
  const fs::file_status s = fs::symlink_status(place, ec);
  if (ec || !fs::exists(s)) return;
  if (fs::is_symlink(s)) {
    throw WorkError(fmt::format("{}: a symlink where a file of the report goes: refused (remove it, or write the "
                                "report into another folder)", place.string()));
  }
  if (!fs::is_regular_file(s)) throw WorkError(fmt::format("{}: not a plain file, where a file of the report goes", place.string()));
}

void prepare_report_folder(const fs::path& dir) {
  if (dir.empty()) throw UsageError("-o: the report's folder is an empty name: give a folder");
  for (const fs::path& d : {dir, dir / "charts"}) {
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(d, ec))) {
      throw WorkError(fmt::format("{}: a symlink where the report's folder goes: refused (give the folder itself)", d.string()));
    }
  }
  fs::create_directories(dir / "charts");
}

fs::path staging_name(const fs::path& place) {
  return place.parent_path() / fmt::format(".{}.{}.part", place.filename().string(), ::getpid());
}

void place_staged(const fs::path& place) {
  refuse_symlink(place);
  std::error_code ec;
  fs::rename(staging_name(place), place, ec);
  if (ec) {
    fs::remove(staging_name(place));
    throw WorkError(fmt::format("{}: cannot write: {}", place.string(), ec.message()));
  }
}

void place_file(const fs::path& place, const std::string& text) {
  refuse_symlink(place);
  const fs::path staged = staging_name(place);
  fs::remove(staged);  // a leftover of a killed run of this process id, or a planted link: never written through
  {
    std::ofstream out(staged, std::ios::binary);
    out << text;
    if (!out.flush()) {
      fs::remove(staged);
      throw WorkError(fmt::format("{}: cannot write", place.string()));
    }
  }
  place_staged(place);
}

}  // namespace ub::report
