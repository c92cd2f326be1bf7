// libgit2 against a real git server on loopback (git http-backend behind basic auth):
// fetch with the token, the maxcode commit made without a checkout, push, who wrote the
// commits on a branch, and refusals (wrong token, protected branch) with their reasons.
// The git command line checks what arrived.
#include <gtest/gtest.h>

#include "bot/github/git_remote.h"
#include "runner/util/files.h"
#include "runner/workspace/patch.h"
#include "support/git_server.h"
#include "support/test_support.h"

namespace maxcode::bot {
namespace {

namespace fs = std::filesystem;
using testing::git;

class Git : public ::testing::Test {
 protected:
  void SetUp() override {
    base = server.create_repo("acme/histo.git", testing::source_path("examples/cpu-histogram"));
    bare = server.root() / "acme/histo.git";
    original = read_text(testing::source_path("examples/cpu-histogram/src/histogram.cpp"));
    std::string changed = original;
    changed.replace(changed.find("std::size_t i = 0;"), 18, "std::size_t i = 0;  // faster");
    patch = unified_diff("src/histogram.cpp", original, changed);
  }
  GitRemote remote(const std::string& token = "s3cret") {
    return GitRemote(dir.path() / ("clone-" + std::to_string(++clones)), server.url("acme/histo.git"), token);
  }
  std::string message(const std::string& run) {
    return "perf: speed up histogram\n\nMaxcode-Run: " + run + "\nMaxcode-Target: src/histogram.cpp:histogram\n";
  }

  testing::GitServer server{"s3cret"};
  testing::TempDir dir;
  fs::path bare;
  std::string base, original, patch;
  int clones = 0;
  GitIdentity bot;
};

TEST_F(Git, FetchesCommitsAndPushesTheBranch) {
  GitRemote r = remote();
  r.fetch();
  EXPECT_TRUE(r.has_commit(base));
  EXPECT_EQ(r.remote_branch("main"), base);
  EXPECT_EQ(r.read_file(base, "src/histogram.cpp"), original);
  EXPECT_FALSE(r.read_file(base, "no/such/file"));

  const std::string sha = r.commit_patch(base, patch, bot, message("run1"), 1700000000);
  EXPECT_EQ(r.commit_patch(base, patch, bot, message("run1"), 1700000000), sha);  // deterministic
  EXPECT_EQ(r.parents_of(sha), std::vector<std::string>{base});
  r.push(sha, "maxcode/src-histogram-cpp/histogram", false);

  // What arrived, seen by git itself.
  const std::string branch = "refs/heads/maxcode/src-histogram-cpp/histogram";
  EXPECT_EQ(git("--git-dir " + bare.string() + " rev-parse " + branch), sha + "\n");
  const std::string log = git("--git-dir " + bare.string() + " log -1 --format=%an%n%ae%n%at%n%B " + branch);
  EXPECT_EQ(log.rfind("maxcode[bot]\nmaxcode[bot]@users.noreply.github.com\n1700000000\nperf: speed up histogram", 0), 0u) << log;
  EXPECT_NE(log.find("Maxcode-Run: run1"), std::string::npos);
  EXPECT_NE(git("--git-dir " + bare.string() + " show " + branch + ":src/histogram.cpp").find("// faster"), std::string::npos);
  EXPECT_EQ(git("--git-dir " + bare.string() + " diff --stat " + base + " " + branch),
            " src/histogram.cpp | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n");
  git("--git-dir " + bare.string() + " fsck --strict");
  EXPECT_GT(server.requests(), 0);
}

TEST_F(Git, AWrongTokenIsRefusedClearly) {
  GitRemote r = remote("wrong");
  try {
    r.fetch();
    FAIL() << "fetched with a wrong token";
  } catch (const GitError& e) {
    EXPECT_NE(std::string(e.what()).find("refused the token"), std::string::npos) << e.what();
  }
  EXPECT_GT(server.refused(), 0);
}

TEST_F(Git, APatchThatDoesNotApplyIsAnError) {
  GitRemote r = remote();
  r.fetch();
  const std::string other = unified_diff("src/histogram.cpp", "something else\n", "entirely\n");
  try {
    r.commit_patch(base, other, bot, message("x"), 0);
    FAIL();
  } catch (const GitError& e) {
    EXPECT_NE(std::string(e.what()).find("does not apply"), std::string::npos) << e.what();
  }
}

TEST_F(Git, OwnCommitsNameWhoWroteThem) {
  const std::string branch = "maxcode/src-histogram-cpp/histogram";
  {
    GitRemote r = remote();
    r.fetch();
    r.push(r.commit_patch(base, patch, bot, message("run1"), 1700000000), branch, false);
  }
  // A person adds a commit on the branch, and another branch moves on.
  const fs::path work = dir.path() / "human";
  git("clone -q " + bare.string() + " " + work.string());
  git("checkout -q " + branch, work);
  testing::write_file(work / "NOTES", "mine\n");
  git("add NOTES", work);
  git("-c user.name=Alice -c user.email=alice@example.com commit -q -m 'my tweak'", work);
  git("push -q origin " + branch, work);
  git("checkout -q main", work);
  testing::write_file(work / "OTHER", "x\n");
  git("add OTHER", work);
  git("-c user.name=Bob -c user.email=bob@example.com commit -q -m 'main moves'", work);
  git("push -q origin main", work);

  GitRemote r = remote();
  r.fetch();
  const auto commits = r.own_commits(*r.remote_branch(branch), branch, base);
  ASSERT_EQ(commits.size(), 2u);  // Bob's commit is on main: not this branch's own
  EXPECT_EQ(commits[0].author_email, "alice@example.com");
  EXPECT_EQ(commits[1].author_email, bot.email);
  EXPECT_NE(commits[1].message.find("Maxcode-Run: run1"), std::string::npos);
}

TEST_F(Git, AProtectedBranchRefusalCarriesTheServersReason) {
  server.protect("acme/histo.git", "maxcode/p/f");
  GitRemote r = remote();
  r.fetch();
  const std::string sha = r.commit_patch(base, patch, bot, message("run1"), 1700000000);
  try {
    r.push(sha, "maxcode/p/f", true);
    FAIL() << "pushed to a protected branch";
  } catch (const GitError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("pre-receive hook declined"), std::string::npos) << what;
    EXPECT_NE(what.find("GH006: Protected branch update failed"), std::string::npos) << what;
  }
  EXPECT_THROW(git("--git-dir " + bare.string() + " rev-parse --verify -q refs/heads/maxcode/p/f"), std::runtime_error);
}

}  // namespace
}  // namespace maxcode::bot
