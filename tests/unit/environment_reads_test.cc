// The environment is configuration read at the CLI (docs/architecture.md "The
// environment: read at the CLI"): below cli/, a file reads it only where the table below
// says why. A new getenv or environ in runner/ or bot/ fails here until it is moved up
// to cli/ or given its reason; the check itself is tried on a planted tree.
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace maxcode::testing {
namespace {

namespace fs = std::filesystem;

// File (or folder, ending in '/') -> the variables it may read ("*": any, also one named
// at run time; "environ": the whole environment) and why that is not configuration.
struct Allowed {
  std::set<std::string> names;
  const char* why;
};
const std::map<std::string, Allowed>& allowed() {
  static const std::map<std::string, Allowed> table{
      {"runner/inject/", {{"*", "environ"}, "runs inside the user's program: its environment is the only way in"}},
      {"runner/util/child_env.cc", {{"environ"}, "a child's environment, built from maxcode's own"}},
      {"runner/util/process.cc", {{"PATH", "environ"}, "a program looked up as execvp would; a child inherits"}},
      {"runner/evaluate/build_and_test.cc", {{"PATH"}, "a program looked up as execvp would"}},
      {"runner/evaluate/gpu/cuda_tools.cc", {{"PATH", "CUDA_HOME"}, "nvcc and its tools found as nvcc would"}},
      {"runner/evaluate/step_runner.cc", {{"NVCC_APPEND_FLAGS"}, "the child's own flags, extended"}},
      {"runner/profile/profile_run.cc", {{"*", "LD_PRELOAD"}, "the child's own preloads and flags, extended"}},
  };
  return table;
}

const Allowed* allowance_for(const std::string& file) {
  for (const auto& [where, allowance] : allowed())
    if (where == file || (where.back() == '/' && file.rfind(where, 0) == 0)) return &allowance;
  return nullptr;
}

// Every read of the environment in `root`'s runner/ and bot/ that the table does not
// allow, as "file:line: reads NAME".
std::vector<std::string> unexplained_reads(const fs::path& root) {
  static const std::regex getenv_call(R"re(\b(?:secure_)?getenv\s*\(\s*("([A-Za-z0-9_]+)")?)re");
  static const std::regex environ_use(R"re(\benviron\b)re");
  std::vector<std::string> problems;
  for (const char* top : {"runner", "bot"}) {
    if (!fs::exists(root / top)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
      const std::string file = fs::relative(entry.path(), root).generic_string();
      const Allowed* allowance = allowance_for(file);
      std::ifstream in(entry.path());
      int number = 0;
      for (std::string line; std::getline(in, line);) {
        ++number;
        const std::string code = line.substr(0, line.find("//"));  // comments may name it
        std::vector<std::string> names;
        for (auto it = std::sregex_iterator(code.begin(), code.end(), getenv_call); it != std::sregex_iterator(); ++it)
          names.push_back((*it)[2].matched ? (*it)[2].str() : "*");
        if (std::regex_search(code, environ_use)) names.push_back("environ");
        for (const std::string& name : names)
          if (!allowance || !(allowance->names.count(name) || (name != "environ" && allowance->names.count("*"))))
            problems.push_back(file + ":" + std::to_string(number) + ": reads " + (name == "*" ? "a variable" : name));
      }
    }
  }
  return problems;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

TEST(EnvironmentReads, BelowTheCliOnlyWhereTheTableSaysWhy) {
  const auto problems = unexplained_reads(MAXCODE_SOURCE_DIR);
  EXPECT_TRUE(problems.empty()) << "read these at the CLI (cli/environment.cc) and hand the value down:\n"
                                << joined(problems);
}

TEST(EnvironmentReads, APlantedReadIsReported) {
  TempDir tree;
  write_file(tree / "runner/job/run_job.cc",
             "// getenv(\"IN_A_COMMENT\") is fine\nauto t = std::getenv(\"MAXCODE_TOKEN\");\n");
  write_file(tree / "bot/service/server.cc", "const char* v = secure_getenv(name.c_str());\n");
  write_file(tree / "runner/util/process.cc", "auto p = getenv(\"PATH\"); auto h = getenv(\"HOME\");\n");
  write_file(tree / "runner/inject/sampler.cc", "auto d = getenv(\"MAXCODE_PROFILE_DIR\");\n");
  const auto problems = unexplained_reads(tree.path());
  const std::string text = joined(problems);
  ASSERT_EQ(problems.size(), 3u) << text;
  EXPECT_NE(text.find("runner/job/run_job.cc:2: reads MAXCODE_TOKEN"), std::string::npos) << text;
  EXPECT_NE(text.find("bot/service/server.cc:1: reads a variable"), std::string::npos) << text;
  EXPECT_NE(text.find("runner/util/process.cc:1: reads HOME"), std::string::npos) << text;
}

}  // namespace
}  // namespace maxcode::testing
