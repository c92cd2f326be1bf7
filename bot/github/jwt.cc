#include "bot/github/jwt.h"
#include "runner/util/json_io.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <memory>

#include <nlohmann/json.hpp>

namespace maxcode::bot {

namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string openssl_error(const std::string& what) {
  std::string text = what;
  if (const unsigned long code = ERR_get_error()) {
    char buffer[256];
    ERR_error_string_n(code, buffer, sizeof buffer);
    text += ": ";
    text += buffer;
  }
  ERR_clear_error();
  return text;
}

}  // namespace

std::string base64url_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::uint32_t buffer = 0;
  int bits = 0;
  for (unsigned char c : bytes) {
    buffer = (buffer << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += kAlphabet[(buffer >> bits) & 0x3F];
    }
  }
  if (bits > 0) out += kAlphabet[(buffer << (6 - bits)) & 0x3F];
  return out;  // JWTs carry no '=' padding
}

std::string base64url_decode(std::string_view text) {
  std::string out;
  std::uint32_t buffer = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '=') break;
    const std::size_t value = kAlphabet.find(c);
    if (value == std::string_view::npos) throw JwtError("base64url: invalid character");
    buffer = (buffer << 6) | static_cast<std::uint32_t>(value);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xFF);
    }
  }
  return out;
}

std::string sign_rs256(const std::string& header_json, const std::string& payload_json,
                       const std::string& private_key_pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(private_key_pem.data(), static_cast<int>(private_key_pem.size())), BIO_free);
  if (!bio) throw JwtError(openssl_error("cannot read the App's private key"));
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr), EVP_PKEY_free);
  if (!key) throw JwtError(openssl_error("the App's private key is not a PEM private key"));
  if (!EVP_PKEY_is_a(key.get(), "RSA"))
    throw JwtError("the App's private key is not an RSA key (GitHub Apps sign with RS256)");

  const std::string signing_input = base64url_encode(header_json) + "." + base64url_encode(payload_json);
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  std::size_t length = 0;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &length,
                     reinterpret_cast<const unsigned char*>(signing_input.data()), signing_input.size()) != 1)
    throw JwtError(openssl_error("RS256 signing failed"));
  std::string signature(length, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &length,
                     reinterpret_cast<const unsigned char*>(signing_input.data()), signing_input.size()) != 1)
    throw JwtError(openssl_error("RS256 signing failed"));
  signature.resize(length);
  return signing_input + "." + base64url_encode(signature);
}

std::string make_app_jwt(const std::string& app_id, const std::string& private_key_pem,
                         std::int64_t now) {
  if (app_id.empty()) throw JwtError("no GitHub App id");
  const nlohmann::json header{{"alg", "RS256"}, {"typ", "JWT"}};
  // GitHub documents iss as the App id or client id, a string or an integer.
  const nlohmann::json payload{{"iat", now - 60}, {"exp", now + 540}, {"iss", app_id}};
  return sign_rs256(dump_json(header), dump_json(payload), private_key_pem);
}

}  // namespace maxcode::bot
