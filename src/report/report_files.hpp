// How a report's files reach their folder without clobbering anything else: each is written whole
// under a new name beside its place and renamed into it, so a symlink planted where a file of the
// report should be (report.html, charts/tflops.png, the charts folder itself) is refused, never
// followed, and a reader never sees half a file.
#pragma once

#include <filesystem>
#include <string>

namespace ub::report {

// UsageError for a name that is no report's folder: empty, reading like an option ("--json", "-"),
// or the filesystem's root.
void check_report_folder_name(const std::filesystem::path& dir);

// The folder and its charts/ folder, created; UsageError where either is a symlink, or where
// check_report_folder_name refuses `dir`.
void prepare_report_folder(const std::filesystem::path& dir);

// One report writing `dir` at a time: two at once would leave one's page beside the other's
// charts. The folder is created (and removed again if still empty when the lock is let go, so a
// report refused leaves nothing) and locked (flock) for the lock's life; UsageError when another
// process holds it. A symlink where the folder goes is left to prepare_report_folder to refuse.
class ReportFolderLock {
 public:
  explicit ReportFolderLock(const std::filesystem::path& dir);
  ~ReportFolderLock();
  ReportFolderLock(const ReportFolderLock&) = delete;
  ReportFolderLock& operator=(const ReportFolderLock&) = delete;

 private:
  std::filesystem::path dir_;
  int fd_ = -1;
  bool created_ = false;
};

// WorkError naming `place` where it is a symlink (or anything but a plain file).
void refuse_symlink(const std::filesystem::path& place);

// A name beside `place` for its new contents (same folder, so the rename stays on one file system).
std::filesystem::path staging_name(const std::filesystem::path& place);

// `text` into `place`: written under staging_name, then renamed over it.
void place_file(const std::filesystem::path& place, const std::string& text);

// A file written at staging_name(place), renamed over `place`.
void place_staged(const std::filesystem::path& place);

}  // namespace ub::report
