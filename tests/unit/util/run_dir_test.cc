#include "runner/util/run_dir.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;

// Issue 22: a killed run left its maxcode-run-* folder behind, every time. The next run
// removes the folders whose owner is gone, and no other.
TEST(RunDir, TheFoldersOfGoneRunsAreRemovedAndLiveOnesKept) {
  testing::TempDir parent;
  const fs::path mine = make_run_dir(parent.path(), "maxcode-run-");
  EXPECT_TRUE(fs::exists(mine / "owner"));
  EXPECT_EQ(fs::status(mine).permissions() & fs::perms::all, fs::perms::owner_all);

  // A run whose process is gone: a pid that is not running (or reused: another start time).
  const fs::path gone = parent / "maxcode-run-gone01";
  fs::create_directories(gone / "ws-1-baseline" / "build");
  testing::write_file(gone / "ws-1-baseline" / "build" / "big.o", "object");
  std::ofstream(gone / "owner") << getpid() << " 1\n";  // this pid, but another start time
  // Another tool's folder with the same prefix and no owner file, and a link.
  fs::create_directories(parent / "maxcode-run-foreign");
  fs::create_directory_symlink(mine, parent / "maxcode-run-link");
  // Not ours at all.
  fs::create_directories(parent / "other-gone");
  std::ofstream(parent / "other-gone" / "owner") << "999999999 1\n";

  EXPECT_EQ(remove_abandoned_run_dirs(parent.path(), "maxcode-run-"), 1);
  EXPECT_FALSE(fs::exists(gone));
  EXPECT_TRUE(fs::exists(mine / "owner"));
  EXPECT_TRUE(fs::exists(parent / "maxcode-run-foreign"));
  EXPECT_TRUE(fs::is_symlink(parent / "maxcode-run-link"));
  EXPECT_TRUE(fs::exists(parent / "other-gone"));
}

}  // namespace
}  // namespace maxcode
