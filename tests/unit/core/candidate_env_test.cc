#include "runner/core/candidate_env.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;

std::string value_of(const EnvVars& env, const std::string& name) {
  std::string found = "(unset)";
  for (const auto& [n, v] : env)
    if (n == name) found = v;
  return found;
}

TEST(CandidateEnv, ConfiguredKeyVariablesNeverPassEvenWhenAllowed) {
  Config config;
  config.workspace.env_allow = {"MY_MODEL", "OMP_*"};
  config.llm = {{"propose", {{"provider", "openai"}, {"api_key_env", "MY_MODEL"}}},
                {"critique", {{"provider", "anthropic"}, {"api_key_env", "OTHER_MODEL"}}}};
  std::vector<std::string> names = secret_variable_names(config);
  for (const char* name : {"MY_MODEL", "OTHER_MODEL", "OPENAI_API_KEY", "GITHUB_TOKEN", "MAXCODE_APP_KEY_FILE"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;

  testing::TempDir dir;
  EnvVars from = {{"PATH", "/usr/bin"}, {"MY_MODEL", "sk-model"}, {"OMP_NUM_THREADS", "4"},
                  {"HOME", "/root"},    {"OPENAI_API_KEY", "sk-1"}, {"MAXCODE_SEED", "9"}};
  EnvVars env = candidate_env(config, from, dir / "home", {{"MAXCODE_SEED", "2"}, {"MAXCODE_WORKSPACE", "/w"}});
  EXPECT_EQ(value_of(env, "PATH"), "/usr/bin");
  EXPECT_EQ(value_of(env, "OMP_NUM_THREADS"), "4") << "allowed by the config's prefix";
  EXPECT_EQ(value_of(env, "MY_MODEL"), "(unset)");
  EXPECT_EQ(value_of(env, "OPENAI_API_KEY"), "(unset)");
  EXPECT_EQ(value_of(env, "HOME"), (dir / "home").string());
  EXPECT_TRUE(fs::is_directory(dir / "home"));
  EXPECT_EQ(value_of(env, "MAXCODE_SEED"), "2") << "the step's own variables win";
  EXPECT_EQ(value_of(env, "MAXCODE_WORKSPACE"), "/w");
  std::size_t seeds = 0;
  for (const auto& entry : env) seeds += entry.first == "MAXCODE_SEED";
  EXPECT_EQ(seeds, 1u);
}

}  // namespace
}  // namespace maxcode
