// libFuzzer target for the reader under every file reader (base/gzip_reader): any bytes, written
// to a file, are read as they are or decompressed, or refused with a WorkError. What it reads
// whole must be what zlib's own reader gives for the same file: it refuses more, never reads
// otherwise.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "base/error.hpp"
#include "base/gzip_reader.hpp"
#include "input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::optional<std::string> input = write_fuzz_input(data, size);
  if (!input) return 0;
  const std::string& path = *input;
  std::string ours;
  try {
    ub::GzipReader in(path, "fuzz", 64);  // a small buffer: every boundary is crossed
    char block[97];
    while (const size_t n = in.read(block, sizeof block)) {
      ours.append(block, n);
      if (ours.size() > (size_t{64} << 20)) return 0;  // a bomb: zlib's side is not read either
    }
  } catch (const ub::WorkError&) {
    return 0;
  }
  gzFile z = gzopen(path.c_str(), "rb");
  if (!z) std::abort();
  std::string theirs;
  char block[4096];
  int n = 0;
  while ((n = gzread(z, block, sizeof block)) > 0) theirs.append(block, static_cast<size_t>(n));
  gzclose(z);
  if (n < 0 || theirs != ours) std::abort();
  return 0;
}
