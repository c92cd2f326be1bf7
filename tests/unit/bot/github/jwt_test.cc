// GitHub App authentication: the JWT's claims and RS256 signature, checked with OpenSSL
// against the public key, and installation tokens exchanged at the local GitHub API
// (which verifies the JWT too) and cached until 5 minutes before they expire.
#include <gtest/gtest.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <chrono>

#include "bot/github/app_auth.h"
#include "bot/github/github_client.h"
#include "bot/github/jwt.h"
#include "support/github_api.h"

namespace maxcode::bot {
namespace {

using nlohmann::json;

struct KeyPair {
  std::string private_pem, public_pem;
};

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(n));
}

// An RSA key in the PKCS#1 PEM form GitHub hands out ("BEGIN RSA PRIVATE KEY").
KeyPair rsa_key() {
  EVP_PKEY* key = EVP_RSA_gen(2048);
  BIO* priv = BIO_new(BIO_s_mem());
  BIO* pub = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey_traditional(priv, key, nullptr, nullptr, 0, nullptr, nullptr);
  PEM_write_bio_PUBKEY(pub, key);
  KeyPair pair{bio_text(priv), bio_text(pub)};
  BIO_free(priv);
  BIO_free(pub);
  EVP_PKEY_free(key);
  return pair;
}

const KeyPair& app_key() {
  static const KeyPair key = rsa_key();
  return key;
}

bool verify_rs256(const std::string& jwt, const std::string& public_pem) {
  const std::size_t dot = jwt.rfind('.');
  const std::string input = jwt.substr(0, dot);
  const std::string signature = base64url_decode(jwt.substr(dot + 1));
  BIO* bio = BIO_new_mem_buf(public_pem.data(), static_cast<int>(public_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  const bool ok = EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key) == 1 &&
                  EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
                                   reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1;
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(key);
  BIO_free(bio);
  return ok;
}

std::int64_t now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

TEST(Jwt, Base64UrlRoundTrips) {
  for (const std::string text : {"", "f", "fo", "foo", "\xff\xfe\x00\x01?>"})
    EXPECT_EQ(base64url_decode(base64url_encode(text)), text);
  EXPECT_EQ(base64url_encode("\xfb\xff"), "-_8");  // url alphabet, no padding
  EXPECT_THROW(base64url_decode("a+b"), JwtError);
}

TEST(Jwt, ClaimsAndSignatureVerifyWithThePublicKey) {
  const std::int64_t t = 1700000000;
  const std::string jwt = make_app_jwt("12345", app_key().private_pem, t);
  const std::size_t a = jwt.find('.'), b = jwt.rfind('.');
  const json header = json::parse(base64url_decode(jwt.substr(0, a)));
  const json claims = json::parse(base64url_decode(jwt.substr(a + 1, b - a - 1)));
  EXPECT_EQ(header["alg"], "RS256");
  EXPECT_EQ(header["typ"], "JWT");
  EXPECT_EQ(claims["iss"], "12345");
  EXPECT_EQ(claims["iat"], t - 60);              // 60 s in the past, for clock drift
  EXPECT_LE(claims["exp"].get<std::int64_t>(), t + 600);  // GitHub's 10-minute maximum
  EXPECT_LE(claims["exp"].get<std::int64_t>() - claims["iat"].get<std::int64_t>(), 600);
  EXPECT_GT(claims["exp"].get<std::int64_t>(), t);
  EXPECT_TRUE(verify_rs256(jwt, app_key().public_pem));
  EXPECT_FALSE(verify_rs256(jwt, rsa_key().public_pem));  // another key does not verify it
  std::string tampered = jwt;
  tampered[a + 3] = tampered[a + 3] == 'A' ? 'B' : 'A';
  EXPECT_FALSE(verify_rs256(tampered, app_key().public_pem));
}

TEST(Jwt, BadKeysAreNamed) {
  try {
    make_app_jwt("1", "not a key", 0);
    FAIL();
  } catch (const JwtError& e) {
    EXPECT_NE(std::string(e.what()).find("not a PEM private key"), std::string::npos) << e.what();
  }
  EVP_PKEY* ec = EVP_EC_gen("P-256");
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, ec, nullptr, nullptr, 0, nullptr, nullptr);
  const std::string ec_pem = bio_text(bio);
  BIO_free(bio);
  EVP_PKEY_free(ec);
  try {
    make_app_jwt("1", ec_pem, 0);
    FAIL();
  } catch (const JwtError& e) {
    EXPECT_NE(std::string(e.what()).find("not an RSA key"), std::string::npos) << e.what();
  }
}

class AppTokens : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    github = testing::FakeGithub::get(&why);
    if (!github) GTEST_SKIP() << why;
    github->reset();
    const json permissions{{"pull_requests", "write"}, {"contents", "write"}, {"checks", "write"}, {"metadata", "read"}};
    const json installation{{"id", 7}, {"permissions", permissions}};
    const json app{{"id", "42"}, {"public_key", app_key().public_pem}, {"installations", json::array({installation})}};
    const json repo{{"owner", "acme"}, {"name", "histo"}};
    github->setup({{"repos", json::array({repo})}, {"apps", json::array({app})}});
    options.api_url = github->url();
    options.sleep = [](double) {};
  }
  void TearDown() override {
    if (github) github->check_clean();
  }
  testing::FakeGithub* github = nullptr;
  ClientOptions options;
};

TEST_F(AppTokens, ExchangedOnceAndCachedUntilFiveMinutesBeforeExpiry) {
  // Tokens that live 310 s: usable for 10 s before the 5-minute margin. (GitHub's live an
  // hour; the JWT's iat must stay in the server's past, so the clock cannot jump far.)
  github->setup({{"token_ttl_s", 310}});
  const std::int64_t start = now();
  std::int64_t clock = start;
  options.now = [&] { return clock; };
  auto tokens = std::make_shared<AppInstallationTokens>(AppCredentials{"42", app_key().private_pem, "7"}, options,
                                                        std::vector<std::string>{"histo"});
  GithubClient client(options, tokens);
  EXPECT_EQ(client.get("/repos/acme/histo")["full_name"], "acme/histo");
  EXPECT_EQ(client.get("/repos/acme/histo")["name"], "histo");
  const std::string first = tokens->token();
  EXPECT_EQ(first.rfind("ghs_", 0), 0u);
  EXPECT_EQ(tokens->exchanges(), 1);
  EXPECT_NEAR(static_cast<double>(tokens->expires_at()), static_cast<double>(start + 310), 5);

  clock = tokens->expires_at() - 301;  // still more than 5 minutes left
  EXPECT_EQ(tokens->token(), first);
  clock = tokens->expires_at() - 299;  // inside the margin: a new token
  EXPECT_NE(tokens->token(), first);
  EXPECT_EQ(tokens->exchanges(), 2);
  EXPECT_EQ(github->state()["tokens_issued"], 2);
}

TEST_F(AppTokens, ARevokedTokenIsReplacedOnce) {
  auto tokens = std::make_shared<AppInstallationTokens>(AppCredentials{"42", app_key().private_pem, "7"}, options);
  GithubClient client(options, tokens);
  client.get("/repos/acme/histo");
  github->fail({{"kind", "401"}, {"path", "^/repos/acme/histo$"}});
  EXPECT_EQ(client.get("/repos/acme/histo")["name"], "histo");
  EXPECT_EQ(tokens->exchanges(), 2);
}

TEST_F(AppTokens, AWrongKeyOrInstallationIsRefusedWithGithubsReason) {
  auto wrong = std::make_shared<AppInstallationTokens>(AppCredentials{"42", rsa_key().private_pem, "7"}, options);
  try {
    wrong->token();
    FAIL();
  } catch (const GithubError& e) {
    EXPECT_EQ(e.status, 401);
    EXPECT_NE(std::string(e.what()).find("JSON web token could not be decoded"), std::string::npos) << e.what();
  }
  auto missing = std::make_shared<AppInstallationTokens>(AppCredentials{"42", app_key().private_pem, "999"}, options);
  try {
    missing->token();
    FAIL();
  } catch (const GithubError& e) {
    EXPECT_EQ(e.status, 404) << e.what();
  }
}

}  // namespace
}  // namespace maxcode::bot
