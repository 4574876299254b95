// Tensors from a safetensors file, the format Hugging Face's save_pretrained writes: 8 bytes
// (little-endian u64: the header's length), a JSON header naming each tensor's dtype, shape and
// byte range [begin, end) after the header (plus an optional "__metadata__" object of strings),
// then the bytes. The header is checked whole when the file is opened: every dtype known, every
// shape's elements matching its byte range, every range inside the file; a tensor is then read
// with pread a chunk at a time, so a checkpoint of many GiB is never held twice.
//
// Floating-point tensors (F32, F16, BF16) are read widened to fp32, integer ones (I32, I64) as
// int64; other dtypes (F8, booleans, unsigned) are listed in the header but refused when read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "base/unique_fd.hpp"

namespace ub {

struct SafetensorsEntry {
  std::string name;
  std::string dtype;             // as the header spells it: "BF16", "F32", ...
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;   // bytes after the header
  int64_t elements() const;      // the product of shape (1 for a scalar)
};

// The header's length is bounded (the format's own limit is 100 MB): a checkpoint's header
// names each tensor in about 100 bytes.
inline constexpr uint64_t kMaxSafetensorsHeader = uint64_t{100} << 20;

class SafetensorsFile {
 public:
  // Opens and checks `path`; WorkError "<path>: ..." naming what is wrong (the tensor, its field).
  explicit SafetensorsFile(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }
  const std::map<std::string, SafetensorsEntry>& tensors() const { return tensors_; }
  const SafetensorsEntry* find(const std::string& name) const;

  // All of a floating-point tensor's elements widened to fp32, written to out[0 .. elements());
  // WorkError naming the tensor for another dtype or a read that falls short.
  void read_floats(const SafetensorsEntry& t, float* out) const;
  // All of an integer tensor's elements.
  std::vector<int64_t> read_ints(const SafetensorsEntry& t) const;

 private:
  void read_bytes(const SafetensorsEntry& t, uint64_t at, size_t n, unsigned char* out) const;

  std::filesystem::path path_;
  UniqueFd fd_;
  uint64_t data_start_ = 0, data_bytes_ = 0;
  std::map<std::string, SafetensorsEntry> tensors_;
};

// Bytes per element of a dtype the header names, 0 for a name the format does not have.
size_t safetensors_dtype_bytes(const std::string& dtype);

}  // namespace ub
