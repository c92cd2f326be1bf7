#include "runner/job/init_project.h"

#include <gtest/gtest.h>

#include "runner/core/config.h"
#include "runner/util/files.h"
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
