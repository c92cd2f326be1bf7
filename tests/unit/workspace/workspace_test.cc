#include "runner/workspace/workspace.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>

#include "runner/util/files.h"
#include "runner/util/process.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

using testing::TempDir;
using testing::write_file;
namespace fs = std::filesystem;

void git(const fs::path& dir, const std::string& args) {
  Command c;
  c.shell = "git -c user.name=t -c user.email=t@example.com -c init.defaultBranch=main " + args;
  c.cwd = dir.string();
  ASSERT_TRUE(run(c).ok()) << args;
}

TEST(Workspace, PlainDirectorySkipsExcludedTopLevelEntries) {
  TempDir dir;
  write_file(dir / "repo/src/a.cc", "int a;");
  write_file(dir / "repo/build/junk.o", "x");
  SourceSnapshot s = capture_source(dir / "repo", dir / "snap", {"build"});
  EXPECT_FALSE(s.git);
  EXPECT_TRUE(fs::exists(dir / "snap/src/a.cc"));
  EXPECT_FALSE(fs::exists(dir / "snap/build"));
  EXPECT_EQ(s.manifest.size(), 1u);
}

TEST(Workspace, GitRepositoryTakesTrackedAndUnignoredFilesAsTheyAreNow) {
  TempDir dir;
  const fs::path repo = dir / "repo";
  write_file(repo / "src/a.cc", "int a = 1;");
  write_file(repo / ".gitignore", "build/\n");
  git(repo, "init -q");
  git(repo, "add -A");
  git(repo, "commit -qm init");
  write_file(repo / "src/a.cc", "int a = 2;");  // uncommitted edit: included
  write_file(repo / "src/new.cc", "int n;");    // untracked, not ignored: included
  write_file(repo / "build/out.o", "binary");   // ignored: left behind
  SourceSnapshot s = capture_source(repo, dir / "snap", {});
  EXPECT_TRUE(s.git);
  EXPECT_EQ(s.commit.size(), 40u);
  EXPECT_EQ(read_text(dir / "snap/src/a.cc"), "int a = 2;");
  EXPECT_TRUE(fs::exists(dir / "snap/src/new.cc"));
  EXPECT_FALSE(fs::exists(dir / "snap/build"));
  EXPECT_FALSE(fs::exists(dir / "snap/.git"));
  EXPECT_NE(std::find(s.local_changes.begin(), s.local_changes.end(), "src/a.cc"), s.local_changes.end());
}

TEST(Workspace, SubdirectoryOfAGitRepositoryKeepsItsPrefix) {
  TempDir dir;
  const fs::path repo = dir / "repo";
  write_file(repo / "examples/x/src/a.cc", "int a;");
  write_file(repo / "other.txt", "not ours");
  git(repo, "init -q");
  git(repo, "add -A");
  git(repo, "commit -qm init");
  SourceSnapshot s = capture_source(repo / "examples/x", dir / "snap", {});
  EXPECT_EQ(s.git_prefix, "examples/x/");
  EXPECT_TRUE(fs::exists(dir / "snap/src/a.cc"));
  EXPECT_FALSE(fs::exists(dir / "snap/other.txt"));
}

TEST(Workspace, TamperedFilesAreFoundAndOverridesExpected) {
  TempDir dir;
  write_file(dir / "repo/src/a.cc", "int a;");
  write_file(dir / "repo/tests/t.cc", "int t;");
  write_file(dir / "repo/bench/b.cc", "int b;");
  SourceSnapshot s = capture_source(dir / "repo", dir / "snap", {});
  create_workspace(s, dir / "ws", {{"src/a.cc", "int a2;"}});
  EXPECT_EQ(read_text(dir / "ws/src/a.cc"), "int a2;");
  EXPECT_TRUE(tampered_files(s, dir / "ws", {{"src/a.cc", "int a2;"}}).empty());
  write_file(dir / "ws/tests/t.cc", "int t = 0;");
  fs::remove(dir / "ws/bench/b.cc");
  write_file(dir / "ws/build/new.o", "build outputs are fine");
  EXPECT_EQ(tampered_files(s, dir / "ws", {{"src/a.cc", "int a2;"}}),
            (std::vector<std::string>{"bench/b.cc", "tests/t.cc"}));
  // The override itself must hold: restoring the original target counts as tampering.
  EXPECT_EQ(tampered_files(s, dir / "ws", {{"src/a.cc", "other"}}).front(), "bench/b.cc");
}

TEST(Workspace, ChangedModeOrALinkInPlaceOfASourceIsTampering) {
  TempDir dir;
  write_file(dir / "repo/src/a.cc", "int a;");
  write_file(dir / "repo/tests/run.sh", "exit 1\n");
  write_file(dir / "repo/tests/t.cc", "int t;");
  SourceSnapshot s = capture_source(dir / "repo", dir / "snap", {});
  create_workspace(s, dir / "ws");
  EXPECT_TRUE(tampered_files(s, dir / "ws", {}).empty());
  // Same content, other mode: a test script made executable (or unreadable) changed.
  fs::permissions(dir / "ws/tests/run.sh", fs::perms::owner_exec, fs::perm_options::add);
  // Same content behind a link: what the link points to can change at any time.
  write_file(dir / "ws/elsewhere.cc", "int t;");
  fs::remove(dir / "ws/tests/t.cc");
  fs::create_symlink(dir / "ws/elsewhere.cc", dir / "ws/tests/t.cc");
  EXPECT_EQ(tampered_files(s, dir / "ws", {}), (std::vector<std::string>{"tests/run.sh", "tests/t.cc"}));
}

// Issue 22, point 3: a source replaced by a link to a FIFO, or a source folder replaced
// by a link to a folder outside holding a FIFO or a file of the same name, is tampering,
// found at once: nothing is followed, nothing blocks.
TEST(Workspace, AFifoOrALinkedFolderInPlaceOfASourceIsTamperingAndNeverBlocks) {
  TempDir dir;
  write_file(dir / "repo/src/a.cc", "int a;");
  write_file(dir / "repo/tests/t.cc", "int t;");
  SourceSnapshot s = capture_source(dir / "repo", dir / "snap", {});
  create_workspace(s, dir / "ws");
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0644), 0);
  fs::remove(dir / "ws/src/a.cc");
  fs::create_symlink(dir / "fifo", dir / "ws/src/a.cc");
  // The same files, elsewhere: a folder link leads to them.
  fs::create_directories(dir / "outside/tests");
  write_file(dir / "outside/tests/t.cc", "int t;");
  fs::remove_all(dir / "ws/tests");
  fs::create_symlink(dir / "outside/tests", dir / "ws/tests");
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(tampered_files(s, dir / "ws", {}), (std::vector<std::string>{"src/a.cc", "tests/t.cc"}));
  // A FIFO in place, and one where the folder link leads.
  fs::remove(dir / "ws/src/a.cc");
  ASSERT_EQ(::mkfifo((dir / "ws/src/a.cc").c_str(), 0644), 0);
  fs::remove(dir / "outside/tests/t.cc");
  ASSERT_EQ(::mkfifo((dir / "outside/tests/t.cc").c_str(), 0644), 0);
  EXPECT_EQ(tampered_files(s, dir / "ws", {}), (std::vector<std::string>{"src/a.cc", "tests/t.cc"}));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // Removing the workspace removes the links, not what they point to.
  remove_workspace(dir / "ws");
  EXPECT_FALSE(fs::exists(dir / "ws"));
  EXPECT_TRUE(fs::exists(fs::symlink_status(dir / "outside/tests/t.cc")));
}

TEST(Workspace, MissingRepositoryIsAClearError) {
  TempDir dir;
  try {
    capture_source(dir / "nope", dir / "snap", {});
    FAIL();
  } catch (const WorkspaceError& e) {
    EXPECT_NE(std::string(e.what()).find("not a directory"), std::string::npos);
  }
}

}  // namespace
}  // namespace maxcode
