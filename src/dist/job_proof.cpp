// The job's secret proved, never sent; see job_proof.hpp.
#include "dist/job_proof.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <stdexcept>

namespace ub::dist {

std::string to_hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const unsigned char c : bytes) out += kDigits[c >> 4], out += kDigits[c & 15];
  return out;
}

std::optional<std::string> from_hex(std::string_view hex) {
  if (hex.size() % 2) return std::nullopt;
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = digit(hex[i]), lo = digit(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
  }
  return out;
}

std::string new_challenge() {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) throw std::runtime_error("rendezvous: no random bytes for a challenge");
  return to_hex(std::string_view(reinterpret_cast<const char*>(bytes), sizeof bytes));
}

std::string proof(std::string_view secret, std::string_view text) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (!HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()), reinterpret_cast<const unsigned char*>(text.data()),
            text.size(), mac, &length)) {
    throw std::runtime_error("rendezvous: HMAC-SHA256 failed");
  }
  return to_hex(std::string_view(reinterpret_cast<const char*>(mac), length));
}

bool same_proof(std::string_view shown, std::string_view expected) {
  return shown.size() == expected.size() && CRYPTO_memcmp(shown.data(), expected.data(), shown.size()) == 0;
}

}  // namespace ub::dist
