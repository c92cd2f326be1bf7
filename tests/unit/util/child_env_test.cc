#include "runner/util/child_env.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace maxcode {
namespace {

TEST(ChildEnv, PassesWhatBuildsNeedAndNothingElse) {
  EnvVars from = {{"PATH", "/usr/bin"},          {"LANG", "C.UTF-8"},        {"LC_ALL", "C"},
                  {"CUDA_VISIBLE_DEVICES", "0"}, {"NVCC_APPEND_FLAGS", "-g"}, {"CXXFLAGS", "-O2"},
                  {"CMAKE_BUILD_TYPE", "Release"}, {"CCACHE_DIR", "/c"},     {"MAXCODE_SEED", "3"},
                  {"OPENAI_API_KEY", "sk-1"},    {"GITHUB_TOKEN", "ghp_1"},   {"USER", "me"},
                  {"SSH_AUTH_SOCK", "/run/agent"}, {"CUDA_AUTH_TOKEN", "x"}, {"HOME", "/root"}};
  EnvVars kept = filter_env(from, default_env_allow_list());
  EnvVars expected = {{"PATH", "/usr/bin"},          {"LANG", "C.UTF-8"},        {"LC_ALL", "C"},
                      {"CUDA_VISIBLE_DEVICES", "0"}, {"NVCC_APPEND_FLAGS", "-g"}, {"CXXFLAGS", "-O2"},
                      {"CMAKE_BUILD_TYPE", "Release"}, {"CCACHE_DIR", "/c"},     {"MAXCODE_SEED", "3"}};
  EXPECT_EQ(kept, expected);
}

TEST(ChildEnv, SecretNamesAreRefusedEvenWhenAllowed) {
  EnvAllowList allow;
  allow.names = {"OPENAI_API_KEY", "MY_*"};
  allow.secret_names = {"MY_MODEL"};
  EXPECT_FALSE(env_allowed("OPENAI_API_KEY", allow));
  EXPECT_FALSE(env_allowed("MY_MODEL", allow));
  EXPECT_TRUE(env_allowed("MY_OTHER", allow));
  EXPECT_FALSE(env_allowed("MY", allow)) << "a prefix pattern needs its prefix";
  EXPECT_FALSE(env_allowed("OTHER", allow));
}

TEST(ChildEnv, ProcessEnvironmentIsThisProcesses) {
  setenv("MAXCODE_TEST_CHILD_ENV", "a=b", 1);
  EnvVars env = process_environment();
  EXPECT_NE(std::find(env.begin(), env.end(), std::pair<std::string, std::string>{"MAXCODE_TEST_CHILD_ENV", "a=b"}),
            env.end());
  unsetenv("MAXCODE_TEST_CHILD_ENV");
}

}  // namespace
}  // namespace maxcode
