// The job secret's proofs: HMAC-SHA256 as RFC 4231 states it, fresh challenges, hex both ways, and
// a comparison that takes a proof of the wrong length for none.
#include "dist/job_proof.hpp"

#include <gtest/gtest.h>

namespace ub::dist {
namespace {

TEST(JobProof, IsHmacSha256) {
  // RFC 4231, test case 2.
  EXPECT_EQ(proof("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_NE(proof("Jefe!", "what do ya want for nothing?"), proof("Jefe", "what do ya want for nothing?"));
}

TEST(JobProof, ChallengesAreFreshHex) {
  const std::string a = new_challenge(), b = new_challenge();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_NE(a, b);
  ASSERT_TRUE(from_hex(a));
  EXPECT_EQ(to_hex(*from_hex(a)), a);
}

TEST(JobProof, HexIsReadStrictly) {
  EXPECT_EQ(from_hex("00ff7A"), std::string("\x00\xff\x7a", 3));
  EXPECT_FALSE(from_hex("0"));
  EXPECT_FALSE(from_hex("0g"));
  EXPECT_FALSE(from_hex(" 1"));
  EXPECT_EQ(from_hex(""), std::string());
}

TEST(JobProof, SameProofNeedsTheWholeProof) {
  const std::string p = proof("secret-of-the-job", "text");
  EXPECT_TRUE(same_proof(p, p));
  EXPECT_FALSE(same_proof(p.substr(0, 63), p));
  EXPECT_FALSE(same_proof("", p));
  std::string flipped = p;
  flipped[10] = flipped[10] == 'a' ? 'b' : 'a';
  EXPECT_FALSE(same_proof(flipped, p));
}

}  // namespace
}  // namespace ub::dist
