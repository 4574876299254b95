// Reading a binary's GPU architectures; see fatbin_architectures.hpp.
#include "cli/fatbin_architectures.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <vector>

#include "base/error.hpp"

namespace ub::cli {

namespace {

constexpr uint32_t kFatbinMagic = 0xBA55ED50;
constexpr uint16_t kPtx = 1, kElf = 2;

template <typename T>
T at(const std::vector<char>& b, size_t off) {
  T v{};
  if (off + sizeof(T) <= b.size()) std::memcpy(&v, b.data() + off, sizeof(T));
  return v;
}

// The bytes of the section named `want` of an ELF64 little-endian file; empty without it.
std::vector<char> elf_section(const std::filesystem::path& path, const std::string& want) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw WorkError(fmt::format("{}: cannot be read", path.string()));
  std::vector<char> head(64);
  if (!in.read(head.data(), 64) || std::memcmp(head.data(), "\x7f" "ELF", 4) != 0 || head[4] != 2 || head[5] != 1) {
    throw WorkError(fmt::format("{}: not a 64-bit little-endian ELF file", path.string()));
  }
  const auto shoff = at<uint64_t>(head, 0x28);
  const auto shentsize = at<uint16_t>(head, 0x3A), shnum = at<uint16_t>(head, 0x3C), shstrndx = at<uint16_t>(head, 0x3E);
  if (shentsize < 64 || shstrndx >= shnum) return {};
  std::vector<char> sh(static_cast<size_t>(shentsize) * shnum);
  in.seekg(static_cast<std::streamoff>(shoff));
  if (!in.read(sh.data(), static_cast<std::streamsize>(sh.size()))) return {};
  const auto read_at = [&](uint64_t off, uint64_t size) {
    std::vector<char> out(static_cast<size_t>(size));
    in.clear();
    in.seekg(static_cast<std::streamoff>(off));
    if (size > (uint64_t{1} << 31) || !in.read(out.data(), static_cast<std::streamsize>(size))) out.clear();
    return out;
  };
  const size_t str = static_cast<size_t>(shstrndx) * shentsize;
  const std::vector<char> names = read_at(at<uint64_t>(sh, str + 0x18), at<uint64_t>(sh, str + 0x20));
  for (size_t i = 0; i < shnum; ++i) {
    const size_t h = i * shentsize;
    const auto name = at<uint32_t>(sh, h);
    if (name >= names.size() || std::strncmp(names.data() + name, want.c_str(), names.size() - name) != 0) continue;
    return read_at(at<uint64_t>(sh, h + 0x18), at<uint64_t>(sh, h + 0x20));
  }
  return {};
}

}  // namespace

std::string FatbinArchitectures::text() const {
  std::string out;
  for (const int a : machine_code) out += fmt::format("{}sm_{}", out.empty() ? "" : ", ", a);
  std::string p;
  for (const int a : ptx) p += fmt::format("{}compute_{}", p.empty() ? "" : ", ", a);
  if (!p.empty()) out += (out.empty() ? "PTX " : "; PTX ") + p;
  return out.empty() ? "no GPU code" : out;
}

bool FatbinArchitectures::runs_on(int cc) const {
  for (const int a : machine_code) {
    if (a / 10 == cc / 10 && a <= cc) return true;
  }
  for (const int a : ptx) {
    if (a <= cc) return true;
  }
  return false;
}

const FatbinArchitectures& own_architectures() {
  static const FatbinArchitectures own = [] {
    try {
      return read_fatbin_architectures("/proc/self/exe");
    } catch (const WorkError&) {
      return FatbinArchitectures{};
    }
  }();
  return own;
}

void check_runs_on(const FatbinArchitectures& built, int cc, const std::string& gpu) {
  if (built.empty() || built.runs_on(cc)) return;
  std::string list;
  for (const int a : built.machine_code) list += fmt::format("{};", a);
  throw WorkError(fmt::format("{} is sm_{} and this build holds GPU code for {} only: rebuild with "
                              "-DCMAKE_CUDA_ARCHITECTURES=\"{}{}\" (or without the option: the default list covers "
                              "sm_80 to sm_120)", gpu, cc, built.text(), list, cc));
}

FatbinArchitectures read_fatbin_architectures(const std::filesystem::path& elf) {
  const std::vector<char> s = elf_section(elf, ".nv_fatbin");
  FatbinArchitectures out;
  size_t off = 0;
  while (off + 16 <= s.size()) {
    if (at<uint32_t>(s, off) != kFatbinMagic) {
      off += 8;  // containers are 8-byte aligned
      continue;
    }
    const size_t end = off + at<uint16_t>(s, off + 6) + static_cast<size_t>(at<uint64_t>(s, off + 8));
    size_t e = off + at<uint16_t>(s, off + 6);
    while (e + 32 <= s.size() && e < end) {
      const auto kind = at<uint16_t>(s, e);
      const auto header = static_cast<size_t>(at<uint32_t>(s, e + 4));
      const auto payload = static_cast<size_t>(at<uint64_t>(s, e + 8));
      const auto arch = static_cast<int>(at<uint32_t>(s, e + 28));
      if (header < 32) break;
      if (kind == kElf) out.machine_code.insert(arch);
      if (kind == kPtx) out.ptx.insert(arch);
      e += header + payload;
    }
    off = std::max(end, off + 16);
  }
  return out;
}

}  // namespace ub::cli
