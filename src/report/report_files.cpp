// Writing a report's files into place; see report_files.hpp.
#include "report/report_files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

#include <system_error>

#include "base/error.hpp"
#include "base/text.hpp"
#include "base/file_place.hpp"

namespace fs = std::filesystem;

namespace ub::report {

void refuse_symlink(const fs::path& place) { refuse_link_at(place, "a file of the report"); }

ReportFolderLock::ReportFolderLock(const fs::path& dir) : dir_(dir) {
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(dir, ec))) return;
  created_ = fs::create_directories(dir, ec);
  fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd_ < 0) return;  // what is wrong with the folder is said where the report is placed
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
    ::close(fd_);
    fd_ = -1;
    throw UsageError(fmt::format("-o {}: another upgradebench report is writing this folder now: wait for it to finish, "
                                 "or write into another folder", printable(dir.string())));
  }
}

ReportFolderLock::~ReportFolderLock() {
  std::error_code ec;
  if (created_ && fs::is_empty(dir_, ec)) fs::remove(dir_, ec);
  if (fd_ >= 0) ::close(fd_);
}

void check_report_folder_name(const fs::path& dir) {
  if (dir.empty()) throw UsageError("-o: the report's folder is an empty name: give a folder");
  // "-o --json" or "-o -": an option or stdout, taken for a folder's name.
  if (dir.string()[0] == '-') {
    throw UsageError(fmt::format("-o {}: a folder's name that reads like an option; give a folder (./{} for one of "
                                 "that name)", dir.string(), dir.string()));
  }
  std::error_code ec;
  if (fs::weakly_canonical(fs::absolute(dir, ec), ec) == fs::path("/")) {
    throw UsageError("-o /: the filesystem's root is no report's folder; give a folder of its own");
  }
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) {
    throw UsageError(fmt::format("-o {}: a file, not a folder: the report is a folder of pages and charts; give a "
                                 "folder", printable(dir.string())));
  }
}

void prepare_report_folder(const fs::path& dir) {
  check_report_folder_name(dir);
  // "link/" names what the link points to: the link itself is what is checked.
  fs::path named = dir;
  while (!named.has_filename() && named.has_parent_path() && named != named.parent_path()) named = named.parent_path();
  for (const fs::path& d : {named, dir / "charts"}) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(d, ec))) continue;
    if (d == named) {
      throw UsageError(fmt::format("{}: a symlink where the report's folder goes: refused (give the folder itself)",
                                   printable(d.string())));
    }
    throw UsageError(fmt::format("{}: a symlink where the report's charts folder goes: refused, as nothing of a report is "
                                 "written through a link (remove it, or write into another folder)", printable(d.string())));
  }
  std::error_code ec;
  // Where a folder of the report goes, something else (a file, a pipe): said by name.
  for (const fs::path& d : {dir, dir / "charts"}) {
    const fs::file_type t = fs::symlink_status(d, ec).type();
    if (t != fs::file_type::not_found && t != fs::file_type::directory && t != fs::file_type::none) {
      throw UsageError(fmt::format("-o {}: {} is there and is not a folder (a file, a pipe or a device): the report "
                                   "writes its pages and charts into folders; write it into a new folder",
                                   printable(dir.string()), printable(d.string())));
    }
  }
  fs::create_directories(dir / "charts", ec);
  if (ec) {
    throw UsageError(fmt::format("-o {}: cannot create the folder {}: {}", printable(dir.string()),
                                 printable((dir / "charts").string()), ec.message()));
  }
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

void place_file(const fs::path& place, const std::string& text) { write_file_replacing(place, text, "a file of the report"); }

}  // namespace ub::report
