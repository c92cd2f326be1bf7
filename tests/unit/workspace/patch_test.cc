#include "runner/workspace/patch.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>

#include "support/test_support.h"

namespace maxcode {
namespace {

const std::string kBefore = "int f() {\n  return 1;\n}\n";
const std::string kAfter = "int f() {\n  return 2;\n}\n";

TEST(Patch, UnifiedDiffRoundTripsThroughApply) {
  const std::string diff = unified_diff("src/f.cc", kBefore, kAfter);
  EXPECT_NE(diff.find("--- a/src/f.cc"), std::string::npos) << diff;
  EXPECT_NE(diff.find("+++ b/src/f.cc"), std::string::npos) << diff;
  auto files = files_in_diff(diff);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].new_path, "src/f.cc");
  auto applied = apply_diff(diff, {{"src/f.cc", kBefore}});
  EXPECT_EQ(applied.at("src/f.cc"), kAfter);
}

TEST(Patch, DiffThatDoesNotApplySaysSo) {
  const std::string diff = unified_diff("src/f.cc", kBefore, kAfter);
  try {
    apply_diff(diff, {{"src/f.cc", "something else\n"}});
    FAIL();
  } catch (const PatchError& e) {
    EXPECT_NE(std::string(e.what()).find("does not apply"), std::string::npos) << e.what();
  }
}

TEST(Patch, PlainDiffUOutputIsAccepted) {
  const std::string diff =
      "--- src/f.cc\t2026-01-01 10:00:00\n+++ src/f.cc\t2026-01-02 10:00:00\n@@ -1,3 +1,3 @@\n"
      " int f() {\n-  return 1;\n+  return 2;\n }\n";
  EXPECT_EQ(files_in_diff(diff).at(0).new_path, "src/f.cc");
  EXPECT_EQ(apply_diff(diff, {{"src/f.cc", kBefore}}).at("src/f.cc"), kAfter);
}

// Issue 22, points 2 and 3: a candidate's diff that turns the file into a symbolic link
// (to a host file, to a FIFO) is refused; the link is never followed, nothing blocks,
// and the error quotes none of what it points to.
TEST(Patch, ADiffThatMakesTheFileALinkIsRefused) {
  testing::TempDir dir;
  testing::write_file(dir / "secret", "SECRET-BYTES\n");
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0644), 0);
  for (const std::filesystem::path& target : {dir / "secret", dir / "fifo"}) {
    const std::string link = target.string();
    const std::string diff = "diff --git a/src/f.cc b/src/f.cc\ndeleted file mode 100644\n--- a/src/f.cc\n+++ /dev/null\n"
                             "@@ -1,3 +0,0 @@\n-int f() {\n-  return 1;\n-}\n"
                             "diff --git a/src/f.cc b/src/f.cc\nnew file mode 120000\n--- /dev/null\n+++ b/src/f.cc\n"
                             "@@ -0,0 +1 @@\n+" + link + "\n\\ No newline at end of file\n";
    const auto start = std::chrono::steady_clock::now();
    try {
      apply_diff(diff, {{"src/f.cc", kBefore}});
      ADD_FAILURE() << "applied: " << link;
    } catch (const PatchError& e) {
      EXPECT_EQ(std::string(e.what()).find("SECRET"), std::string::npos) << e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  }
}

TEST(Patch, NotADiffIsAnError) {
  EXPECT_THROW(files_in_diff("int main() {}\n"), PatchError);
}

TEST(Patch, PathsOutsideTheRepositoryAreRefused) {
  const std::string diff = "--- a/../x.cc\n+++ b/../x.cc\n@@ -1 +1 @@\n-a\n+b\n";
  EXPECT_THROW(apply_diff(diff, {}), PatchError);
}

TEST(Patch, DeletionAndNewFileAreReported) {
  const std::string diff =
      "diff --git a/old.cc b/old.cc\ndeleted file mode 100644\n--- a/old.cc\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
      "diff --git a/new.cc b/new.cc\nnew file mode 100644\n--- /dev/null\n+++ b/new.cc\n@@ -0,0 +1 @@\n+y\n";
  auto files = files_in_diff(diff);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].old_path, "old.cc");
  EXPECT_TRUE(files[0].new_path.empty());
  EXPECT_TRUE(files[1].old_path.empty());
  EXPECT_EQ(files[1].new_path, "new.cc");
}

}  // namespace
}  // namespace maxcode
