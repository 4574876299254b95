// Writing a file in a folder a user (or someone else) may have prepared, without writing through
// what is there: the text goes to a new file beside the place, created with O_EXCL | O_NOFOLLOW
// (a planted link or a leftover of the same name is removed, never followed), then renamed over
// the place. A symlink, or anything but a plain file, where the file goes is refused: a report's
// page, a suite's manifest, never land in what a link points to.
#pragma once

#include <filesystem>
#include <string>

namespace ub {

// WorkError when `place` is a symlink or exists and is not a plain file; `what` names the file in
// the message ("a file of the report", "the suite's manifest").
void refuse_link_at(const std::filesystem::path& place, const std::string& what);

// Writes `text` to `place` as above; WorkError naming `place` when it cannot.
void write_file_replacing(const std::filesystem::path& place, const std::string& text, const std::string& what);

// Opens `place` for writing, truncated, refusing to follow a symlink there (O_NOFOLLOW); the file
// descriptor, or WorkError naming `place` and `what`.
int open_for_writing_no_follow(const std::filesystem::path& place, const std::string& what);

}  // namespace ub
