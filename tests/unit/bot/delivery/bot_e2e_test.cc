// The whole delivery as a user runs it, on loopback: `maxcode optimize` on the CPU
// example (a clone of a repository on the test git server), then `maxcode pr` pushes
// to that server and opens the PR on the local GitHub API, which checks every request
// against GitHub's OpenAPI description. A second run updates the same PR; after a
// maintainer closes it, a third run opens nothing. The PR body is printed.
#include <gtest/gtest.h>

#include <iostream>

#include "bot/github/github_repo.h"
#include "bot/github/token_source.h"
#include "runner/util/files.h"
#include "runner/util/process.h"
#include "support/git_server.h"
#include "support/github_api.h"
#include "support/fixture_repo.h"
#include "support/test_support.h"

namespace maxcode::bot {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::git;

Outcome maxcode(const std::string& args, const std::string& token = "s3cret") {
  Command c;
  c.shell = std::string(MAXCODE_BINARY) + " " + args;
  c.timeout_s = 300;
  c.env = {{"GITHUB_TOKEN", token}, {"MAXCODE_APP_ID", ""}};
  return run(c);
}

TEST(EndToEnd, OptimizeThenPrOpensUpdatesAndRespectsAClose) {
  std::string why;
  testing::FakeGithub* github = testing::FakeGithub::get(&why);
  if (!github) GTEST_SKIP() << why;
  github->reset();
  testing::GitServer server("s3cret");
  testing::TempDir dir;

  // The example, with fewer timing rounds to keep the test short, as a repository on the
  // git server; maxcode optimizes a clone of it.
  const fs::path source = dir.path() / "source";
  testing::copy_example_with_short_timing("cpu-histogram", source);
  const std::string base = server.create_repo("acme/histo.git", source);
  const fs::path bare = server.root() / "acme/histo.git";
  const fs::path clone = dir.path() / "clone";
  git("clone -q " + bare.string() + " " + clone.string());
  github->setup({{"repos", {{{"owner", "acme"}, {"name", "histo"}, {"git_dir", bare.string()}}}},
                 {"tokens", {{{"token", "s3cret"}, {"login", "maxcode-bot"}, {"type", "Bot"},
                              {"permissions", {{"pull_requests", "write"}, {"issues", "write"}, {"contents", "write"}}}},
                             {{"token", "ghp_alice"}, {"login", "alice"}, {"permissions", {{"pull_requests", "write"}}}}}}});

  const fs::path out = dir.path() / "out";
  const Outcome optimize = maxcode("optimize " + clone.string() + " --policy replay --replay-dir " +
                                   (clone / "replay").string() + " --out " + out.string() + " -q");
  ASSERT_EQ(optimize.exit_code, 0) << optimize.err;
  const json result = json::parse(read_text(out / "result.json"));
  ASSERT_TRUE(result["winner"].is_object()) << result.dump(2);
  EXPECT_EQ(result["repository"]["commit"], base);

  const std::string pr_args = "pr --result " + out.string() + " --repo acme/histo --api-url " + github->url() +
                              " --git-url " + server.url("acme/histo.git");
  // --dry-run: branch, title and body, and not a single request.
  const Outcome dry = maxcode(pr_args + " --dry-run", "");
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_EQ(dry.out.rfind("branch: maxcode/src-histogram-cpp/histogram\ntitle: perf: speed up histogram ", 0), 0u) << dry.out;
  EXPECT_EQ(github->stats()["requests"], 0);

  const Outcome first = maxcode(pr_args);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out.rfind("created #1 ", 0), 0u) << first.out << first.err;
  json prs = github->state()["repos"]["acme/histo"]["pulls"];
  ASSERT_EQ(prs.size(), 1u);
  const double speedup = result["winner"]["speedup"]["median"];
  char expected_title[128];
  std::snprintf(expected_title, sizeof expected_title, "perf: speed up histogram %.2fx (-%.0f%% time)", speedup,
                (1 - 1 / speedup) * 100);
  EXPECT_EQ(prs[0]["title"], expected_title);
  const std::string body = prs[0]["body"];
  for (const std::string part : {"### Results", "| original |", "### Correctness", "The project's tests passed",
                                 "3 seed(s)", "02-drops-tail.cpp", "### Environment", "### Reproduce",
                                 "<details><summary>Search trajectory", "<!-- maxcode: {"})
    EXPECT_NE(body.find(part), std::string::npos) << "missing " << part;
  EXPECT_NE(dry.out.find(body.substr(0, 200)), std::string::npos);  // the dry run showed this body
  // What arrived at the git server.
  const std::string branch = "refs/heads/maxcode/src-histogram-cpp/histogram";
  EXPECT_EQ(git("--git-dir " + bare.string() + " rev-parse " + branch + "^").substr(0, 40), base);
  EXPECT_NE(git("--git-dir " + bare.string() + " log -1 --format=%B " + branch).find("Maxcode-Run: "), std::string::npos);
  EXPECT_EQ(git("--git-dir " + bare.string() + " diff " + base + " " + branch), read_text(out / "patch.diff"));
  std::cout << "---- PR #1 body (" << body.size() << " bytes) ----\n" << body << "---- end of body ----\n";

  // Second run: the same PR. The same result changes nothing; a new run updates it.
  Outcome second = maxcode(pr_args);
  EXPECT_EQ(second.out.rfind("unchanged #1 ", 0), 0u) << second.out << second.err;
  const fs::path out2 = dir.path() / "out2";
  copy_tree(out, out2);
  json rerun = result;
  rerun["started_at"] = "2030-01-01T00:00:00Z";
  write_text(out2 / "result.json", rerun.dump(2));
  second = maxcode("pr --result " + out2.string() + " --repo acme/histo --api-url " + github->url() + " --git-url " +
                   server.url("acme/histo.git"));
  EXPECT_EQ(second.out.rfind("updated #1 ", 0), 0u) << second.out << second.err;
  EXPECT_EQ(github->state()["repos"]["acme/histo"]["pulls"].size(), 1u);

  // A maintainer closes it; the third run opens nothing.
  GithubClient alice({github->url()}, std::make_shared<StaticToken>("ghp_alice"));
  RepoApi(alice, "acme", "histo").close_pull(1);
  const Outcome third = maxcode(pr_args);
  EXPECT_EQ(third.exit_code, 0) << third.err;
  EXPECT_EQ(third.out.rfind("ignored #1 ", 0), 0u) << third.out << third.err;
  prs = github->state()["repos"]["acme/histo"]["pulls"];
  ASSERT_EQ(prs.size(), 1u);
  EXPECT_EQ(prs[0]["state"], "closed");

  // Usage and credential errors.
  EXPECT_EQ(maxcode("pr --repo acme/histo").exit_code, 2);  // no --result
  const Outcome no_token = maxcode(pr_args, "");
  EXPECT_EQ(no_token.exit_code, 1);
  EXPECT_NE(no_token.err.find("no GitHub credentials"), std::string::npos) << no_token.err;
  const Outcome bad_token = maxcode(pr_args, "expired");
  EXPECT_EQ(bad_token.exit_code, 1);
  EXPECT_NE(bad_token.err.find("401 Bad credentials"), std::string::npos) << bad_token.err;
  github->check_clean();
}

}  // namespace
}  // namespace maxcode::bot
