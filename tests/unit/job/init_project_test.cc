#include "runner/job/init_project.h"

#include <gtest/gtest.h>

#include "runner/core/config.h"
#include "runner/util/files.h"
#include "support/git_server.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;

fs::path fixture(const testing::TempDir& dir) {
  copy_tree(testing::source_path("tests/fixtures/gbench-prefix"), dir / "repo");
  return dir / "repo";
}

// The original failing its tests is a failed check with the reason, not an exception:
// the config stays for the person to fix, and fixing is the first thing to decide.
TEST(InitProject, AFailingOriginalIsAFailedCheckAndTheConfigStays) {
  testing::TempDir dir;
  const fs::path repo = fixture(dir);
  testing::write_file(repo / "tests/prefix_test.cc", "#include <cstdio>\nint main() { std::puts(\"broken\"); return 1; }\n");
  Progress progress(stderr, true);
  InitReport report = init_project({repo, {}, false, true}, progress);
  EXPECT_FALSE(report.ok());
  EXPECT_TRUE(report.checked);
  ASSERT_GE(report.checks.size(), 2u);
  EXPECT_TRUE(report.checks[0].ok) << report.checks[0].what;
  EXPECT_EQ(report.checks[1].what, "tests pass (ctest --test-dir build --output-on-failure)");
  EXPECT_FALSE(report.checks[1].ok);
  EXPECT_NE(report.checks[1].detail.find("tests failed"), std::string::npos) << report.checks[1].detail;
  ASSERT_FALSE(report.decisions.empty());
  EXPECT_NE(report.decisions[0].find("The original fails its checks"), std::string::npos);
  EXPECT_NO_THROW(load_config(repo / ".maxcode.json"));
}

// Issue 24: after a failed check the advice was "fix it, then `maxcode init --force`",
// which replaced the fix. `--recheck` checks the config as the person left it.
TEST(InitProject, ARecheckChecksTheFixedConfigAndWritesNothing) {
  testing::TempDir dir;
  const fs::path repo = fixture(dir);
  testing::write_file(repo / "tests/prefix_test.cc", "#include <cstdio>\nint main() { std::puts(\"broken\"); return 1; }\n");
  Progress progress(stderr, true);
  InitOptions first{repo, {}, false, true};
  InitReport failed = init_project(first, progress);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.decisions.at(0).find("maxcode init --recheck"), std::string::npos) << failed.decisions.at(0);
  EXPECT_EQ(failed.decisions.at(0).find("init --force"), std::string::npos) << failed.decisions.at(0);
  // The person's fix: the tests that fail are left out of the test command.
  std::string text = read_text(repo / ".maxcode.json");
  const std::string command = "ctest --test-dir build --output-on-failure";
  ASSERT_NE(text.find(command), std::string::npos) << text;
  text.replace(text.find(command), command.size(), "true");
  testing::write_file(repo / ".maxcode.json", text);

  InitOptions again{repo, {}, false, true, true};
  InitReport report = init_project(again, progress);
  EXPECT_TRUE(report.rechecked);
  EXPECT_TRUE(report.ok()) << (report.checks.empty() ? "" : report.checks.back().detail);
  EXPECT_EQ(read_text(repo / ".maxcode.json"), text);  // the fix is kept, byte for byte

  InitOptions nothing{repo, dir / "none.json", false, true, true};
  EXPECT_THROW(init_project(nothing, progress), std::runtime_error);
}

// A .gitignore that hides the config loses it for `maxcode run` and the App: said first.
TEST(InitProject, AConfigThatGitIgnoresIsSaidFirst) {
  testing::TempDir dir;
  const fs::path repo = fixture(dir);
  testing::git("init -q", repo);
  testing::write_file(repo / ".gitignore", "build/\n.maxcode.json\n");
  Progress progress(stderr, true);
  InitReport report = init_project({repo, {}, false, false}, progress);
  ASSERT_FALSE(report.decisions.empty());
  EXPECT_NE(report.decisions[0].find(".maxcode.json is ignored by git"), std::string::npos) << report.decisions[0];
  EXPECT_NE(report.decisions[0].find("git add -f .maxcode.json"), std::string::npos);

  testing::write_file(repo / ".gitignore", "build/\n");
  InitReport clean = init_project({repo, {}, true, false}, progress);
  for (const std::string& d : clean.decisions) EXPECT_EQ(d.find("ignored by git"), std::string::npos) << d;
}

// Issue 24: a library's own -Werror failed its build under a newer compiler. The advice
// names the warning and the flag that builds it anyway.
TEST(InitProject, ABuildFailingOnItsOwnWerrorSaysWhichFlagToDrop) {
  testing::TempDir dir;
  const fs::path repo = fixture(dir);
  std::string cmake = read_text(repo / "CMakeLists.txt");
  cmake.replace(cmake.find("find_package"), 0, "add_compile_options(-Wall -Werror)\n");
  testing::write_file(repo / "CMakeLists.txt", cmake);
  testing::write_file(repo / "src/extra.cc", "int unused_here() { int never_read = 3; return 0; }\n");
  cmake.replace(cmake.find("src/prefix.cc"), 13, "src/prefix.cc src/extra.cc");
  testing::write_file(repo / "CMakeLists.txt", cmake);
  Progress progress(stderr, true);
  InitReport report = init_project({repo, {}, false, true}, progress);
  ASSERT_FALSE(report.ok());
  EXPECT_FALSE(report.checks.at(0).ok);
  bool said = false;
  std::string all;
  for (const std::string& d : report.decisions) {
    said = said || (d.find("-Werror=unused-variable") != std::string::npos &&
                    d.find("-DCMAKE_CXX_FLAGS=-Wno-error=unused-variable") != std::string::npos);
    all += d + "\n";
  }
  EXPECT_TRUE(said) << all;
}

TEST(InitProject, WithoutTheCheckOnlyTheConfigIsWrittenAndAnExistingOneIsKept) {
  testing::TempDir dir;
  const fs::path repo = fixture(dir);
  Progress progress(stderr, true);
  InitReport report = init_project({repo, dir / "elsewhere.json", false, false}, progress);
  EXPECT_FALSE(report.checked);
  EXPECT_TRUE(report.ok());
  EXPECT_EQ(report.config_file, dir / "elsewhere.json");
  EXPECT_FALSE(fs::exists(repo / ".maxcode.json"));
  EXPECT_EQ(load_config(dir / "elsewhere.json").benchmarks.at(0).name, "prefix_bench");
  testing::write_file(dir / "elsewhere.json", "// mine\n");
  EXPECT_THROW(init_project({repo, dir / "elsewhere.json", false, false}, progress), std::runtime_error);
  EXPECT_EQ(read_text(dir / "elsewhere.json"), "// mine\n");
  EXPECT_NO_THROW(init_project({repo, dir / "elsewhere.json", true, false}, progress));
  EXPECT_NE(read_text(dir / "elsewhere.json"), "// mine\n");
}

}  // namespace
}  // namespace maxcode
