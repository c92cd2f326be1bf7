// RS256 JSON Web Tokens for GitHub App authentication, signed with OpenSSL.
//
// GitHub accepts an App JWT whose `iat` is in the past and whose `exp` is at most ten
// minutes after it. Clocks drift, so the token claims an `iat` 60 s in the past and an
// `exp` 9 minutes after now (10 minutes after `iat`, never more).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "runner/util/error.h"

namespace maxcode::bot {

class JwtError : public Error {
 public:
  using Error::Error;
};

std::string base64url_encode(std::string_view bytes);
// Throws JwtError on characters outside the base64url alphabet.
std::string base64url_decode(std::string_view text);

// Signs `header.payload` (each a JSON text) with an RSA private key in PEM (PKCS#1
// "RSA PRIVATE KEY", as GitHub hands it out, or PKCS#8). Throws JwtError naming the
// problem when the key cannot be read or is not RSA.
std::string sign_rs256(const std::string& header_json, const std::string& payload_json,
                       const std::string& private_key_pem);

// The App's JWT at time `now` (seconds since the epoch): iss = app id, iat = now - 60,
// exp = now + 540.
std::string make_app_jwt(const std::string& app_id, const std::string& private_key_pem,
                         std::int64_t now);

}  // namespace maxcode::bot
