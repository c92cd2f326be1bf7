// Cloning at a ref with libgit2 from the test git server (git http-backend behind basic
// auth) and from file:// and plain paths: branches, tags and commits; a wrong token, a
// missing ref and an unreachable server each say so, and leave nothing behind.
#include <gtest/gtest.h>

#include "runner/util/files.h"
#include "runner/workspace/clone.h"
#include "support/git_server.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;
using testing::git;

class Clone : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::write_file(dir_ / "seed/README", "one\n");
    first_ = server_.create_repo("acme/r.git", dir_ / "seed");
    // A second commit on main, a tag on the first, and a branch.
    const fs::path work = dir_ / "work";
    git("clone -q " + bare().string() + " " + work.string());
    testing::write_file(work / "README", "two\n");
    git("-c user.name=M -c user.email=m@example.com commit -q -am 'second commit'", work);
    git("tag v1 " + first_, work);
    git("push -q origin main v1 main:refs/heads/feature", work);
    second_ = git("rev-parse HEAD", work).substr(0, 40);
  }
  fs::path bare() const { return server_.root() / "acme/r.git"; }

  CloneError::Kind failure(CloneRequest request) {
    try {
      clone_at_ref(request);
    } catch (const CloneError& e) {
      message_ = e.what();
      EXPECT_FALSE(fs::exists(request.destination)) << "a failed clone leaves nothing";
      return e.kind;
    }
    ADD_FAILURE() << "cloned";
    return CloneError::Kind::kOther;
  }

  testing::TempDir dir_;
  testing::GitServer server_{"s3cret"};
  std::string first_, second_, message_;
};

TEST_F(Clone, ChecksOutTheRefFromFileUrlsAndPaths) {
  Checkout head = clone_at_ref({"file://" + bare().string(), "", dir_ / "head"});
  EXPECT_EQ(head.commit, second_);
  EXPECT_EQ(head.ref, "refs/heads/main");
  EXPECT_EQ(read_text(dir_ / "head/README"), "two\n");

  Checkout tag = clone_at_ref({bare().string(), "v1", dir_ / "tag"});
  EXPECT_EQ(tag.commit, first_);
  EXPECT_EQ(tag.ref, "refs/tags/v1");
  EXPECT_EQ(read_text(dir_ / "tag/README"), "one\n");

  Checkout sha = clone_at_ref({"file://" + bare().string(), first_.substr(0, 10), dir_ / "sha"});
  EXPECT_EQ(sha.commit, first_);
  Checkout branch = clone_at_ref({"file://" + bare().string(), "feature", dir_ / "branch"});
  EXPECT_EQ(branch.commit, second_);
  EXPECT_EQ(branch.ref, "refs/heads/feature");

  EXPECT_EQ(commits_between(dir_ / "head", first_, second_), std::vector<std::string>{second_.substr(0, 10) + " second commit"});
  EXPECT_TRUE(commits_between(dir_ / "head", second_, second_).empty());
}

TEST_F(Clone, OverHttpWithATokenAndItsFailures) {
  const std::string url = server_.url("acme/r.git");
  CloneRequest request{url, "main", dir_ / "http", "s3cret"};
  EXPECT_EQ(clone_at_ref(request).commit, second_);

  request.destination = dir_ / "wrong";
  request.token = "expired";
  EXPECT_EQ(failure(request), CloneError::Kind::kAuth) << message_;
  EXPECT_NE(message_.find("refused the credentials"), std::string::npos) << message_;
  EXPECT_EQ(message_.find("expired"), std::string::npos) << "the token is never printed: " << message_;

  request.token = "";
  EXPECT_EQ(failure(request), CloneError::Kind::kAuth) << message_;
  EXPECT_NE(message_.find("no token was given"), std::string::npos) << message_;

  request.token = "s3cret";
  request.ref = "no-such-branch";
  EXPECT_EQ(failure(request), CloneError::Kind::kMissingRef) << message_;
  EXPECT_EQ(message_, "ref 'no-such-branch' does not exist in " + url + " (branches: feature, main)");

  request.url = "http://127.0.0.1:1/acme/r.git";
  request.ref = "";
  EXPECT_EQ(failure(request), CloneError::Kind::kUnreachable) << message_;
  request.url = (dir_ / "nowhere").string();
  EXPECT_EQ(failure(request), CloneError::Kind::kUnreachable) << message_;
}

TEST(CloneUrl, CredentialsAreLeftOutOfPrintedUrls) {
  EXPECT_EQ(url_without_credentials("https://x-access-token:abc@github.com/a/b.git"), "https://github.com/a/b.git");
  EXPECT_EQ(url_without_credentials("https://github.com/a/b.git"), "https://github.com/a/b.git");
  EXPECT_EQ(url_without_credentials("git@github.com:a/b.git"), "git@github.com:a/b.git");
  EXPECT_EQ(url_without_credentials("/srv/repo"), "/srv/repo");
}

}  // namespace
}  // namespace maxcode
