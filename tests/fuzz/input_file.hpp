// The file-reading fuzz targets' input: the bytes written to one temporary file of the process
// (made once, rewritten for each input), since the readers under test open a path.
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
