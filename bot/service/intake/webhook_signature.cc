#include "bot/service/intake/webhook_signature.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cctype>
#include <stdexcept>

namespace maxcode::bot::service {

namespace {

constexpr std::string_view kPrefix = "sha256=";

std::string raw_hmac(std::string_view secret, std::string_view body) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (!HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
            reinterpret_cast<const unsigned char*>(body.data()), body.size(), digest, &length))
    throw std::runtime_error("HMAC-SHA256 failed (OpenSSL)");
  return std::string(reinterpret_cast<const char*>(digest), length);
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string sign_webhook(std::string_view secret, std::string_view body) {
  static const char* digits = "0123456789abcdef";
  std::string out(kPrefix);
  for (unsigned char c : raw_hmac(secret, body)) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

const char* signature_check_name(SignatureCheck check) {
  switch (check) {
    case SignatureCheck::kValid: return "valid";
    case SignatureCheck::kMissing: return "missing";
    case SignatureCheck::kMalformed: return "malformed";
    case SignatureCheck::kWrong: return "wrong";
  }
  return "?";
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

SignatureCheck verify_webhook_signature(std::string_view secret, std::string_view body, std::string_view header) {
  if (header.empty()) return SignatureCheck::kMissing;
  if (header.substr(0, kPrefix.size()) != kPrefix || header.size() != kPrefix.size() + 64)
    return SignatureCheck::kMalformed;
  // Decode the claimed digest, then compare bytes in constant time: decoding depends
  // only on the header, never on the secret.
  std::string claimed(32, '\0');
  for (std::size_t i = 0; i < 32; ++i) {
    const int hi = hex_value(header[kPrefix.size() + 2 * i]), lo = hex_value(header[kPrefix.size() + 2 * i + 1]);
    if (hi < 0 || lo < 0) return SignatureCheck::kMalformed;
    claimed[i] = static_cast<char>(hi * 16 + lo);
  }
  return constant_time_equal(raw_hmac(secret, body), claimed) ? SignatureCheck::kValid : SignatureCheck::kWrong;
}

}  // namespace maxcode::bot::service
