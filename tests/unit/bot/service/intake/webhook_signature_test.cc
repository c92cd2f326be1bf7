// Webhook signatures: GitHub's documented example, and every way a signature can be
// wrong (missing, malformed, for another body, under another secret, one digit off).
#include "bot/service/intake/webhook_signature.h"

#include <gtest/gtest.h>

namespace maxcode::bot::service {
namespace {

// From GitHub's "Validating webhook deliveries".
constexpr const char* kSecret = "It's a Secret to Everybody";
constexpr const char* kBody = "Hello, World!";
constexpr const char* kExpected = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";

TEST(WebhookSignature, MatchesGithubsExample) {
  EXPECT_EQ(sign_webhook(kSecret, kBody), kExpected);
  EXPECT_EQ(verify_webhook_signature(kSecret, kBody, kExpected), SignatureCheck::kValid);
  // Upper-case hex is the same digest.
  std::string upper = kExpected;
  for (std::size_t i = 7; i < upper.size(); ++i) upper[i] = static_cast<char>(std::toupper(upper[i]));
  EXPECT_EQ(verify_webhook_signature(kSecret, kBody, upper), SignatureCheck::kValid);
}

TEST(WebhookSignature, RefusesWhatIsNotTheSignatureOfThisBody) {
  EXPECT_EQ(verify_webhook_signature(kSecret, kBody, ""), SignatureCheck::kMissing);
  EXPECT_EQ(verify_webhook_signature(kSecret, kBody, "sha1=757107ea0eb2509fc211221cce984b8a37570b6d"), SignatureCheck::kMalformed);
  EXPECT_EQ(verify_webhook_signature(kSecret, kBody, std::string(kExpected).substr(0, 70)), SignatureCheck::kMalformed);
  std::string not_hex = kExpected;
  not_hex[10] = 'g';
  EXPECT_EQ(verify_webhook_signature(kSecret, kBody, not_hex), SignatureCheck::kMalformed);
  std::string one_off = kExpected;
  one_off.back() = one_off.back() == '7' ? '8' : '7';
  EXPECT_EQ(verify_webhook_signature(kSecret, kBody, one_off), SignatureCheck::kWrong);
  EXPECT_EQ(verify_webhook_signature(kSecret, "Hello, World?", kExpected), SignatureCheck::kWrong);
  EXPECT_EQ(verify_webhook_signature("another secret", kBody, kExpected), SignatureCheck::kWrong);
  // An empty secret signs too, but not like the real one.
  EXPECT_EQ(verify_webhook_signature("", kBody, kExpected), SignatureCheck::kWrong);
}

TEST(WebhookSignature, ConstantTimeCompareIsEquality) {
  EXPECT_TRUE(constant_time_equal("abc", "abc"));
  EXPECT_FALSE(constant_time_equal("abc", "abd"));
  EXPECT_FALSE(constant_time_equal("abc", "ab"));
  EXPECT_TRUE(constant_time_equal("", ""));
  // Bytes after a NUL count.
  EXPECT_FALSE(constant_time_equal(std::string("a\0b", 3), std::string("a\0c", 3)));
}

}  // namespace
}  // namespace maxcode::bot::service
