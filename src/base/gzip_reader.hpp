// The bytes of a file as its readers need them: as they are, or decompressed when the file starts
// with gzip's magic (one member or several, as `cat a.gz b.gz` makes). zlib's own file reader
// ends quietly in two places where lines would go missing: a stream cut short before its trailer
// (a copy interrupted) and bytes after the last member that are not gzip (a plain file appended
// to a compressed one). Both are refused here, naming the file; zero bytes after the end (the
// padding of a block device or a tape) are ignored, as gzip itself ignores them. A file that
// expands past 256 MiB at more than 200 times its size is refused as made to expand.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/unique_fd.hpp"

namespace ub {

class GzipReader {
 public:
  // Opens `path` (a file, a pipe or a device); UsageError naming `name` when it cannot be opened.
  // `buffer` bytes of compressed input are read at a time.
  GzipReader(const std::string& path, std::string name, size_t buffer = size_t{1} << 16);
  ~GzipReader();
  GzipReader(const GzipReader&) = delete;
  GzipReader& operator=(const GzipReader&) = delete;

  // Up to `n` bytes into `out` (decompressed when gzip); 0 at the end. WorkError naming the file
  // on a read error, damaged gzip data, a stream cut short or bytes after it that are not gzip.
  size_t read(char* out, size_t n);
  // Whether the file is read as it is (not gzip); known once the first read returned.
  bool direct();

 private:
  void look();                  // tell gzip from plain by the first bytes
  bool fill();                  // more raw input after the unread bytes; false at the end
  size_t read_raw(unsigned char* out, size_t n);
  void refuse_trailing_bytes();  // at a member's end: what follows must be gzip or zeros

  struct Inflate;
  UniqueFd fd_;
  std::string name_;
  std::vector<unsigned char> in_;
  size_t in_at_ = 0, in_end_ = 0;  // unread raw bytes: in_[in_at_, in_end_)
  uint64_t raw_read_ = 0;          // bytes read from the file so far
  uint64_t given_ = 0;             // bytes handed out (decompressed)
  // A log or a trace compresses 5 to 30 times; past kBombBytes handed out, more than kBombRatio
  // times the bytes read is a file made to expand (deflate reaches about 1000x on repeated bytes).
  static constexpr uint64_t kBombBytes = uint64_t{256} << 20, kBombRatio = 200;
  bool looked_ = false, eof_ = false, in_member_ = false;
  std::unique_ptr<Inflate> z_;  // gzip only
};

}  // namespace ub
