#include "runner/util/secrets.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "support/test_support.h"

namespace maxcode {
namespace {

TEST(Secrets, NamesThatLookSecret) {
  for (const char* name : {"OPENAI_API_KEY", "GITHUB_TOKEN", "gh_token", "MAXCODE_APP_KEY_FILE",
                           "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "GOOGLE_APPLICATION_CREDENTIALS",
                           "SSH_PRIVATE", "HTTP_AUTH"})
    EXPECT_TRUE(looks_secret(name)) << name;
  for (const char* name : {"PATH", "HOME", "CUDA_VISIBLE_DEVICES", "CXXFLAGS", "MAXCODE_SEED"})
    EXPECT_FALSE(looks_secret(name)) << name;
}

TEST(Secrets, ValuesOfSecretVariablesAndTheContentOfKeyFiles) {
  testing::TempDir dir;
  const std::string body = "MIIEowIBAAKCAQEAzq3Fh1dZk8xQkN0Y2tLmZbV1cX9aRgH4";
  testing::write_file(dir / "app.pem",
                      "-----BEGIN RSA PRIVATE KEY-----\n" + body + "\nshort\n-----END RSA PRIVATE KEY-----\n");
  std::vector<std::string> found = secrets_in({{"PATH", "/usr/bin:/bin"},
                                               {"OPENAI_API_KEY", "sk-live-1234567890"},
                                               {"GITHUB_TOKEN", "short"},  // under kShortestSecret
                                               {"MAXCODE_APP_KEY_FILE", (dir / "app.pem").string()},
                                               {"MY_MODEL_VAR", "named-by-config-42"}},
                                              {"MY_MODEL_VAR"});
  auto has = [&](const std::string& v) { return std::find(found.begin(), found.end(), v) != found.end(); };
  EXPECT_TRUE(has("sk-live-1234567890"));
  EXPECT_TRUE(has("named-by-config-42"));
  EXPECT_TRUE(has(body)) << "each distinctive line of a key file";
  EXPECT_FALSE(has("short"));
  EXPECT_FALSE(has("/usr/bin:/bin"));
  EXPECT_FALSE(has((dir / "app.pem").string())) << "a path is no secret";
  EXPECT_FALSE(has("-----BEGIN RSA PRIVATE KEY-----"));
}

TEST(Secrets, RedactionReplacesEveryOccurrenceLongestFirst) {
  add_secret("abcdefgh-secret");
  add_secret("abcdefgh-secret-and-more");
  add_secret("tiny");  // too short: never redacted
  EXPECT_EQ(redact_secrets("x abcdefgh-secret y abcdefgh-secret-and-more z tiny"),
            "x [redacted] y [redacted] z tiny");
  EXPECT_EQ(redact_secrets("nothing here"), "nothing here");
}

TEST(Secrets, TheProcessEnvironmentIsReadOnFirstUseAndNamedVariablesLater) {
  // Set before the registry's first use in this process? Not guaranteed across tests, so
  // name it explicitly: add_secret_variables reads the variable now.
  setenv("MAXCODE_TEST_MODEL_VARIABLE", "value-of-a-configured-key", 1);
  EXPECT_EQ(redact_secrets("k=value-of-a-configured-key"), "k=value-of-a-configured-key");
  add_secret_variables({"MAXCODE_TEST_MODEL_VARIABLE"});
  EXPECT_EQ(redact_secrets("k=value-of-a-configured-key"), "k=[redacted]");
  unsetenv("MAXCODE_TEST_MODEL_VARIABLE");
}

}  // namespace
}  // namespace maxcode
