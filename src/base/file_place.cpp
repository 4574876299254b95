// Files written without following links; see file_place.hpp.
#include "base/file_place.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.hpp"
#include "base/unique_fd.hpp"

namespace ub {

namespace fs = std::filesystem;

// A link where a file goes is the user's to remove or avoid: a usage error (exit 2), as an output
// that is one of the inputs is.
UsageError link_refused(const fs::path& place, const std::string& what) {
  return UsageError(fmt::format("{}: a symlink where {} goes: refused (remove it, or write into another folder)",
                                place.string(), what));
}

void refuse_link_at(const fs::path& place, const std::string& what) {
  std::error_code ec;
  const fs::file_status s = fs::symlink_status(place, ec);
  if (ec || !fs::exists(s)) return;
  if (fs::is_symlink(s)) throw link_refused(place, what);
  if (!fs::is_regular_file(s)) throw UsageError(fmt::format("{}: not a plain file, where {} goes", place.string(), what));
}

void write_file_replacing(const fs::path& place, const std::string& text, const std::string& what) {
  refuse_link_at(place, what);
  const fs::path staged = place.parent_path() / fmt::format(".{}.{}.part", place.filename().string(), ::getpid());
  ::unlink(staged.c_str());  // a leftover of a killed run, or a planted link: removed, never followed
  {
    UniqueFd fd(::open(staged.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (fd.get() < 0) throw WorkError(fmt::format("{}: cannot write {}: {}", place.string(), what, std::strerror(errno)));
    for (size_t done = 0; done < text.size();) {
      const ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const std::string why = std::strerror(errno);
        ::unlink(staged.c_str());
        throw WorkError(fmt::format("{}: cannot write {}: {}", place.string(), what, why));
      }
      done += static_cast<size_t>(n);
    }
  }
  refuse_link_at(place, what);  // again: planted while the text was written
  if (::rename(staged.c_str(), place.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(staged.c_str());
    throw WorkError(fmt::format("{}: cannot write {}: {}", place.string(), what, why));
  }
}

int open_for_writing_no_follow(const fs::path& place, const std::string& what) {
  const int fd = ::open(place.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd >= 0) return fd;
  if (errno == ELOOP) throw link_refused(place, what);
  throw WorkError(fmt::format("{}: cannot write {}: {}", place.string(), what, std::strerror(errno)));
}

}  // namespace ub
