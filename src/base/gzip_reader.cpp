#include "base/gzip_reader.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <fmt/format.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/error.hpp"

namespace ub {

struct GzipReader::Inflate {
  z_stream z{};
  Inflate() {
    // 15 + 16: a window of 32 KiB, gzip's header and trailer (CRC and length checked).
    if (inflateInit2(&z, 15 + 16) != Z_OK) throw WorkError("zlib could not start decompressing (out of memory?)");
  }
  ~Inflate() { inflateEnd(&z); }
};

namespace {

// A named pipe is opened without waiting for its writer (an open that waits has no end when no
// program ever writes), then given kPipeWaitS for one to: a process substitution's is there
// already; a pipe nobody writes to is refused instead of hanging.
constexpr int kPipeWaitS = 20;

int open_for_reading(const std::string& path, const std::string& name) {
  struct stat st {};
  const bool fifo = ::stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (fifo ? O_NONBLOCK : 0));
  if (fd < 0 || !fifo) return fd;
  pollfd p{fd, POLLIN, 0};
  int ready = 0;
  do {
    ready = ::poll(&p, 1, kPipeWaitS * 1000);
  } while (ready < 0 && errno == EINTR);
  if (ready == 0) {
    ::close(fd);
    throw UsageError(fmt::format("{}: a named pipe no program wrote to in {} s: start its writer first, or give a file",
                                 name, kPipeWaitS));
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // then read as any pipe, waiting for its lines
  return fd;
}

}  // namespace

GzipReader::GzipReader(const std::string& path, std::string name, size_t buffer)
    : fd_(open_for_reading(path, name)), name_(std::move(name)), in_(std::max<size_t>(buffer, 64)) {
  if (!fd_) throw UsageError(fmt::format("{}: cannot be read: {}", name_, std::strerror(errno)));
}

GzipReader::~GzipReader() = default;

size_t GzipReader::read_raw(unsigned char* out, size_t n) {
  for (;;) {
    const ssize_t got = ::read(fd_.get(), out, n);
    if (got >= 0) {
      raw_read_ += static_cast<uint64_t>(got);
      return static_cast<size_t>(got);
    }
    if (errno != EINTR) throw WorkError(fmt::format("{}: cannot be read: {}", name_, std::strerror(errno)));
  }
}

bool GzipReader::fill() {
  const size_t keep = in_end_ - in_at_;
  std::memmove(in_.data(), in_.data() + in_at_, keep);
  in_at_ = 0;
  in_end_ = keep;
  const size_t got = read_raw(in_.data() + keep, in_.size() - keep);
  in_end_ += got;
  eof_ = got == 0;
  return got > 0;
}

void GzipReader::look() {
  looked_ = true;
  while (in_end_ - in_at_ < 2 && !eof_) fill();
  if (in_end_ - in_at_ >= 2 && in_[in_at_] == 0x1f && in_[in_at_ + 1] == 0x8b) {
    z_ = std::make_unique<Inflate>();
    in_member_ = true;
  }
}

bool GzipReader::direct() {
  if (!looked_) look();
  return !z_;
}

void GzipReader::refuse_trailing_bytes() {
  const uint64_t at = raw_read_ - (in_end_ - in_at_);
  for (;;) {
    if (std::any_of(in_.begin() + static_cast<std::ptrdiff_t>(in_at_), in_.begin() + static_cast<std::ptrdiff_t>(in_end_),
                    [](unsigned char c) { return c != 0; })) {
      throw WorkError(fmt::format("{}: the bytes from {} on, after the end of the gzip data, are not gzip (another file "
                                  "appended to it?): they would go unread; give each file on its own",
                                  name_, at));
    }
    in_at_ = in_end_;
    if (!fill()) return;
  }
}

size_t GzipReader::read(char* out, size_t n) {
  if (!looked_) look();
  if (n == 0) return 0;
  if (!z_) {  // as it is: what was read to look first, then straight from the file
    if (in_at_ < in_end_) {
      const size_t k = std::min(n, in_end_ - in_at_);
      std::memcpy(out, in_.data() + in_at_, k);
      in_at_ += k;
      return k;
    }
    return eof_ ? 0 : read_raw(reinterpret_cast<unsigned char*>(out), n);
  }
  z_stream& z = z_->z;
  for (;;) {
    if (!in_member_) {  // between members: another one, zeros to the end, or bytes that are refused
      while (in_end_ - in_at_ < 2 && !eof_) fill();
      if (in_at_ == in_end_) return 0;
      if (in_end_ - in_at_ < 2 || in_[in_at_] != 0x1f || in_[in_at_ + 1] != 0x8b) {
        refuse_trailing_bytes();
        return 0;
      }
      inflateReset(&z);
      in_member_ = true;
    }
    if (in_at_ == in_end_ && !eof_) fill();
    z.next_in = in_.data() + in_at_;
    z.avail_in = static_cast<uInt>(in_end_ - in_at_);
    z.next_out = reinterpret_cast<Bytef*>(out);
    z.avail_out = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    const uInt asked = z.avail_out;
    const int rc = inflate(&z, Z_NO_FLUSH);
    in_at_ = in_end_ - z.avail_in;
    const size_t got = asked - z.avail_out;
    if (rc == Z_STREAM_END) in_member_ = false;
    else if (rc == Z_BUF_ERROR && eof_ && in_at_ == in_end_) {
      throw WorkError(fmt::format("{}: the gzip stream stops short of its end (no trailer): the file was cut short; give "
                                  "the whole file", name_));
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      throw WorkError(fmt::format("{}: damaged gzip data at byte {}: {}", name_, raw_read_ - (in_end_ - in_at_),
                                  z.msg ? z.msg : "zlib could not decompress it"));
    }
    if ((given_ += got) > kBombBytes && given_ > kBombRatio * raw_read_) {
      throw WorkError(fmt::format("{}: {} MiB decompressed from {} KiB, more than {} times: not a log or a trace (a "
                                  "file made to expand); give the file decompressed if it is one", name_, given_ >> 20,
                                  raw_read_ >> 10, kBombRatio));
    }
    if (got > 0) return got;
  }
}

}  // namespace ub
