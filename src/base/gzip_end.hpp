// The end of a file read through zlib: a gzip stream that stops before its trailer is a file cut
// short (a copy interrupted, a download not finished), not a log still being written, and is
// refused rather than read as far as it goes (its last length would silently go missing).
#pragma once

#include <fmt/format.h>
#include <zlib.h>

#include <string>

#include "base/error.hpp"

namespace ub {

// After gzread returned 0: WorkError when `in` ended in the middle of a gzip stream.
inline void refuse_cut_gzip(gzFile in, const std::string& name) {
  int code = Z_OK;
  gzerror(in, &code);
  if (code == Z_BUF_ERROR) {
    throw WorkError(fmt::format("{}: the gzip stream stops short of its end (no trailer): the file was cut short; give "
                                "the whole file", name));
  }
}

}  // namespace ub
