// Reading safetensors files; see safetensors.hpp.
#include "model/safetensors.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>

#include "base/error.hpp"
#include "base/text.hpp"
#include "base/json_text.hpp"
#include "model/cpu_adamw.hpp"

namespace ub {

namespace {

// IEEE half precision to fp32: sign, 5 exponent bits (bias 15), 10 mantissa bits; subnormals,
// infinities and NaN kept.
float half_value(uint16_t h) {
  const float sign = (h & 0x8000u) ? -1.0f : 1.0f;
  const int exponent = (h >> 10) & 0x1F;
  const int mantissa = h & 0x3FF;
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -24);
  if (exponent == 31) return mantissa ? std::numeric_limits<float>::quiet_NaN() : sign * std::numeric_limits<float>::infinity();
  return sign * std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
}

uint64_t le_u64(const unsigned char* b) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | b[i];
  return v;
}

// The bytes [at, at + n) of the open file, all of them, or WorkError naming `what`.
void pread_all(int fd, uint64_t at, size_t n, unsigned char* out, const std::string& what) {
  while (n > 0) {
    const ssize_t got = ::pread(fd, out, n, static_cast<off_t>(at));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) throw WorkError(fmt::format("{}: {}", what, got < 0 ? std::strerror(errno) : "the file ends early"));
    out += got, at += static_cast<uint64_t>(got), n -= static_cast<size_t>(got);
  }
}

SafetensorsEntry parse_entry(const std::string& name, const nlohmann::json& v, const std::string& where) {
  const std::string at = fmt::format("{}: tensor {}", where, name_in_quotes(name));
  if (!v.is_object()) throw WorkError(at + ": not an object of dtype, shape and data_offsets");
  for (const auto& [key, _] : v.items()) {
    if (key != "dtype" && key != "shape" && key != "data_offsets") {
      throw WorkError(fmt::format("{}: unknown field {}", at, name_in_quotes(key)));
    }
  }
  SafetensorsEntry e;
  e.name = name;
  const auto dtype = v.find("dtype");
  if (dtype == v.end() || !dtype->is_string()) throw WorkError(at + ": dtype missing or not a string");
  e.dtype = dtype->get<std::string>();
  if (safetensors_dtype_bytes(e.dtype) == 0) throw WorkError(fmt::format("{}: unknown dtype {}", at, name_in_quotes(e.dtype)));
  const auto shape = v.find("shape");
  if (shape == v.end() || !shape->is_array() || shape->size() > 8) throw WorkError(at + ": shape missing or not a list of at most 8 sizes");
  int64_t elements = 1;
  for (const auto& d : *shape) {
    if (!d.is_number_unsigned()) throw WorkError(at + ": shape has a size that is not a whole number >= 0");
    const uint64_t n = d.get<uint64_t>();
    if (n > (uint64_t{1} << 40) || (n > 0 && static_cast<uint64_t>(elements) > (uint64_t{1} << 40) / n)) {
      throw WorkError(at + ": shape has more than 2^40 elements");
    }
    e.shape.push_back(static_cast<int64_t>(n));
    elements *= static_cast<int64_t>(n);
  }
  const auto offsets = v.find("data_offsets");
  if (offsets == v.end() || !offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
      !(*offsets)[1].is_number_unsigned()) {
    throw WorkError(at + ": data_offsets missing or not [begin, end] in bytes");
  }
  e.begin = (*offsets)[0].get<uint64_t>(), e.end = (*offsets)[1].get<uint64_t>();
  const uint64_t bytes = static_cast<uint64_t>(elements) * safetensors_dtype_bytes(e.dtype);
  if (e.end < e.begin || e.end - e.begin != bytes) {
    throw WorkError(fmt::format("{}: data_offsets [{}, {}] hold {} bytes, its {} x {} needs {}", at, e.begin, e.end,
                                e.end < e.begin ? 0 : e.end - e.begin, e.dtype, elements, bytes));
  }
  return e;
}

}  // namespace

int64_t SafetensorsEntry::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

size_t safetensors_dtype_bytes(const std::string& dtype) {
  if (dtype == "F64" || dtype == "I64" || dtype == "U64") return 8;
  if (dtype == "F32" || dtype == "I32" || dtype == "U32") return 4;
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16" || dtype == "U16") return 2;
  if (dtype == "I8" || dtype == "U8" || dtype == "BOOL" || dtype == "F8_E4M3" || dtype == "F8_E5M2") return 1;
  return 0;
}

SafetensorsFile::SafetensorsFile(const std::filesystem::path& path) : path_(path) {
  const std::string where = path.string();
  fd_ = UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd_) throw UsageError(fmt::format("{}: cannot open: {}", where, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd_.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    throw UsageError(fmt::format("{}: not a regular file (a safetensors file is read at offsets)", where));
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  unsigned char head[8];
  if (size < 8) throw WorkError(fmt::format("{}: {} bytes, shorter than a safetensors header", where, size));
  pread_all(fd_.get(), 0, 8, head, where);
  const uint64_t header = le_u64(head);
  if (header > kMaxSafetensorsHeader || header > size - 8) {
    throw WorkError(fmt::format("{}: header of {} bytes in a file of {} (at most {} MiB): not a safetensors file", where,
                                header, size, kMaxSafetensorsHeader >> 20));
  }
  std::string text(header, '\0');
  pread_all(fd_.get(), 8, header, reinterpret_cast<unsigned char*>(text.data()), where);
  if (text.empty() || text[0] != '{') throw WorkError(fmt::format("{}: the header is not a JSON object: not a safetensors file", where));
  const nlohmann::json doc = parse_json_text(text, where + ": header");
  if (!doc.is_object()) throw WorkError(fmt::format("{}: the header is not a JSON object", where));
  data_start_ = 8 + header;
  data_bytes_ = size - data_start_;
  for (const auto& [name, v] : doc.items()) {
    if (name == "__metadata__") {
      if (!v.is_object()) throw WorkError(fmt::format("{}: __metadata__ is not an object of strings", where));
      continue;
    }
    SafetensorsEntry e = parse_entry(name, v, where);
    if (e.end > data_bytes_) {
      throw WorkError(fmt::format("{}: tensor {} ends at byte {} of {} after the header: the file is cut short", where,
                                  name_in_quotes(name), e.end, data_bytes_));
    }
    tensors_.emplace(name, std::move(e));
  }
  // The format's own rule: the tensors' bytes follow one another from the first byte after the
  // header to the last of the file, no gap, no overlap, nothing after. A header that lets two
  // tensors share bytes, or leaves bytes no tensor owns, was not written by a safetensors writer.
  std::vector<const SafetensorsEntry*> by_place;
  for (const auto& [name, e] : tensors_) by_place.push_back(&e);
  std::sort(by_place.begin(), by_place.end(), [](const auto* a, const auto* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t at = 0;
  for (const SafetensorsEntry* e : by_place) {
    if (e->begin != at) {
      throw WorkError(fmt::format("{}: tensor {} starts at byte {} after the header, where {}: the tensors' bytes must "
                                  "follow one another", where, name_in_quotes(e->name), e->begin,
                                  e->begin < at ? fmt::format("the one before it ends at {}", at)
                                                : fmt::format("{} bytes before it belong to no tensor", e->begin - at)));
    }
    at = e->end;
  }
  if (at != data_bytes_) {
    throw WorkError(fmt::format("{}: {} bytes after the last tensor belong to none: not a safetensors file as written",
                                where, data_bytes_ - at));
  }
}

const SafetensorsEntry* SafetensorsFile::find(const std::string& name) const {
  const auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

void SafetensorsFile::read_bytes(const SafetensorsEntry& t, uint64_t at, size_t n, unsigned char* out) const {
  pread_all(fd_.get(), data_start_ + t.begin + at, n, out, fmt::format("{}: tensor {}", path_.string(), t.name));
}

void SafetensorsFile::read_floats(const SafetensorsEntry& t, float* out) const {
  const size_t width = safetensors_dtype_bytes(t.dtype);
  if (t.dtype != "F32" && t.dtype != "F16" && t.dtype != "BF16") {
    throw WorkError(fmt::format("{}: tensor {} is {}: weights are read from F32, F16 or BF16", path_.string(),
                                name_in_quotes(t.name), t.dtype));
  }
  constexpr size_t kChunk = size_t{1} << 22;  // elements per read
  std::vector<unsigned char> buf(std::min<size_t>(kChunk, static_cast<size_t>(t.elements())) * width);
  const auto total = static_cast<size_t>(t.elements());
  for (size_t first = 0; first < total; first += kChunk) {
    const size_t n = std::min(kChunk, total - first);
    read_bytes(t, first * width, n * width, buf.data());
    const unsigned char* b = buf.data();
    for (size_t i = 0; i < n; ++i, b += width) {
      if (width == 4) {
        uint32_t u = static_cast<uint32_t>(b[0]) | static_cast<uint32_t>(b[1]) << 8 | static_cast<uint32_t>(b[2]) << 16 |
                     static_cast<uint32_t>(b[3]) << 24;
        std::memcpy(&out[first + i], &u, sizeof u);
      } else {
        const auto h = static_cast<uint16_t>(b[0] | b[1] << 8);
        out[first + i] = t.dtype == "BF16" ? bf16_value(h) : half_value(h);
      }
    }
  }
}

std::vector<int64_t> SafetensorsFile::read_ints(const SafetensorsEntry& t) const {
  if (t.dtype != "I32" && t.dtype != "I64") {
    throw WorkError(fmt::format("{}: tensor {} is {}: token ids are read from I32 or I64", path_.string(),
                                name_in_quotes(t.name), t.dtype));
  }
  const size_t width = safetensors_dtype_bytes(t.dtype);
  std::vector<unsigned char> bytes(static_cast<size_t>(t.elements()) * width);
  read_bytes(t, 0, bytes.size(), bytes.data());
  std::vector<int64_t> out(static_cast<size_t>(t.elements()));
  for (size_t i = 0; i < out.size(); ++i) {
    uint64_t u = 0;
    for (size_t k = width; k-- > 0;) u = (u << 8) | bytes[i * width + k];
    out[i] = width == 4 ? static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(u))) : static_cast<int64_t>(u);
  }
  return out;
}

}  // namespace ub
