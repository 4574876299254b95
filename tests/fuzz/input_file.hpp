// The file-reading fuzz targets' input: the bytes written to one temporary file of the process
// (made once, rewritten for each input), since the readers under test open a path; and the data
// folder the targets read the catalog and the kernel classes from.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

// The path holding `data`, or nothing when the file could not be written.
inline std::optional<std::string> write_fuzz_input(const uint8_t* data, size_t size) {
  static const std::string path = [] {
    char name[] = "/tmp/upgradebench-fuzz-input-XXXXXX";
    const int fd = mkstemp(name);
    if (fd >= 0) close(fd);
    return std::string(name);
  }();
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return std::nullopt;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  return path;
}

// The source tree's data/ (UB_DATA_DIR, given to the compiler as a bare path).
#define UB_FUZZ_STRING(x) #x
#define UB_FUZZ_EXPANDED_STRING(x) UB_FUZZ_STRING(x)
inline std::string fuzz_data_dir() { return UB_FUZZ_EXPANDED_STRING(UB_DATA_DIR); }
