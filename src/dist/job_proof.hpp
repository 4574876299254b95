// How a rank and rank 0 show each other that they hold the job's secret without sending it: each
// side answers the other's fresh random challenge with HMAC-SHA256(secret, what it says), so a
// process that merely holds MASTER_ADDR's port (or reads the job's traffic) learns no secret and
// cannot pass for rank 0 or for a rank. OpenSSL's libcrypto does the hashing and the randomness.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ub::dist {

// A fresh challenge: 16 random bytes, as 32 hex digits.
std::string new_challenge();

// HMAC-SHA256 of `text` keyed by `secret`, as 64 hex digits.
std::string proof(std::string_view secret, std::string_view text);

// Whether `shown` is `expected` (two proofs), compared in a time that does not depend on where
// they differ; a proof of another length is not one.
bool same_proof(std::string_view shown, std::string_view expected);

// Hex digits back to bytes; nullopt for an odd length or a character that is no hex digit.
std::optional<std::string> from_hex(std::string_view hex);
std::string to_hex(std::string_view bytes);

}  // namespace ub::dist
