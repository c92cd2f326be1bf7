// The GitHub REST client against the local GitHub API (tests/github/server.mjs), which
// checks every request against GitHub's OpenAPI description: errors surfaced with
// GitHub's reasons, rate limits honoured, retries that never make a second PR,
// pagination, labels, comments by marker, check runs, and replays of @octokit/fixtures.
#include <gtest/gtest.h>

#include <httplib.h>

#include <thread>

#include "bot/github/github_client.h"
#include "bot/github/github_repo.h"
#include "bot/github/token_source.h"
#include "support/github_api.h"

namespace maxcode::bot {
namespace {

using nlohmann::json;

const json kWrite = {{"pull_requests", "write"}, {"issues", "write"}, {"contents", "write"}, {"metadata", "read"}};

class Client : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    github = testing::FakeGithub::get(&why);
    if (!github) GTEST_SKIP() << why;
    github->reset();
    github->setup({{"repos", {{{"owner", "acme"}, {"name", "histo"}, {"refs", {{"main", std::string(40, '1')},
                                                                               {"maxcode/a/f", std::string(40, '2')}}}}}},
                   {"tokens", {{{"token", "ghp_good"}, {"login", "maxcode-bot"}, {"permissions", kWrite}},
                               {{"token", "ghp_readonly"}, {"login", "reader"}, {"permissions", {{"pull_requests", "read"}}}}}}});
    options.api_url = github->url();
    options.sleep = [this](double s) { waits.push_back(s); };
  }
  void TearDown() override {
    if (github) github->check_clean();
  }
  GithubClient client(const std::string& token = "ghp_good") {
    return GithubClient(options, std::make_shared<StaticToken>(token));
  }
  testing::FakeGithub* github = nullptr;
  ClientOptions options;
  std::vector<double> waits;
};

template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const GithubError& e) {
    return std::to_string(e.status) + " " + e.what();
  }
  return "no error";
}

TEST_F(Client, AnInvalidTokenIsA401WithGithubsMessage) {
  auto c = client("ghp_expired");
  const std::string e = error_of([&] { c.get("/repos/acme/histo"); });
  EXPECT_EQ(e.rfind("401 ", 0), 0u) << e;
  EXPECT_NE(e.find("Bad credentials"), std::string::npos) << e;
  EXPECT_NE(e.find("invalid or expired"), std::string::npos) << e;
}

TEST_F(Client, AMissingPermissionNamesThePermission) {
  auto c = client("ghp_readonly");
  RepoApi repo(c, "acme", "histo");
  const std::string e = error_of([&] { repo.create_pull("t", "b", "maxcode/a/f", "main"); });
  EXPECT_EQ(e.rfind("403 ", 0), 0u) << e;
  EXPECT_NE(e.find("Resource not accessible by personal access token"), std::string::npos) << e;
  EXPECT_NE(e.find("needs pull_requests=write"), std::string::npos) << e;
  EXPECT_TRUE(github->state()["repos"]["acme/histo"]["pulls"].empty());
}

TEST_F(Client, ASecondaryRateLimitStormIsWaitedOut) {
  github->fail({{"kind", "secondary"}, {"times", 3}, {"retry_after", 7}});
  auto c = client();
  EXPECT_EQ(c.get("/repos/acme/histo")["name"], "histo");
  EXPECT_EQ(waits, (std::vector<double>{7, 7, 7}));
  EXPECT_EQ(c.requests_sent(), 4);
}

TEST_F(Client, ASecondaryLimitWithoutRetryAfterWaitsAMinuteThenLonger) {
  github->fail({{"kind", "secondary"}, {"times", 2}, {"retry_after", nullptr}});
  options.backoff_s = 40;
  auto c = client();
  c.get("/repos/acme/histo");
  EXPECT_EQ(waits, (std::vector<double>{60, 80}));
}

TEST_F(Client, AStormThatDoesNotEndGivesUpWithTheReason) {
  github->fail({{"kind", "secondary"}, {"times", 100}, {"retry_after", 1}});
  auto c = client();
  const std::string e = error_of([&] { c.get("/repos/acme/histo"); });
  EXPECT_NE(e.find("gave up after 6 attempts"), std::string::npos) << e;
  EXPECT_NE(e.find("secondary rate limit"), std::string::npos) << e;
  EXPECT_EQ(c.requests_sent(), 6);
}

TEST_F(Client, AnExhaustedPrimaryLimitWaitsForTheReset) {
  github->fail({{"kind", "primary"}, {"reset_in", 30}});
  auto c = client();
  c.get("/repos/acme/histo");
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_NEAR(waits[0], 31, 2);

  github->fail({{"kind", "primary"}, {"reset_in", 5000}, {"status", 429}});
  const std::string e = error_of([&] { c.get("/repos/acme/histo"); });
  EXPECT_EQ(e.rfind("429 ", 0), 0u) << e;
  EXPECT_NE(e.find("API rate limit exceeded"), std::string::npos) << e;
}

TEST_F(Client, ServerErrorsAreRetriedForReadsOnly) {
  github->fail({{"kind", "500"}, {"times", 2}, {"method", "GET"}});
  auto c = client();
  EXPECT_EQ(c.get("/repos/acme/histo")["name"], "histo");
  EXPECT_EQ(waits, (std::vector<double>{1, 2}));
  github->fail({{"kind", "500"}, {"method", "POST"}});
  const std::string e = error_of([&] { c.post("/repos/acme/histo/labels", {{"name", "x"}, {"color", "ededed"}}); });
  EXPECT_EQ(e.rfind("500 ", 0), 0u) << e;
}

TEST_F(Client, A5xxAfterThePullRequestWasStoredDoesNotMakeASecond) {
  github->fail({{"kind", "after"}, {"status", 502}, {"method", "POST"}, {"path", "/pulls$"}});
  auto c = client();
  RepoApi repo(c, "acme", "histo");
  const PullRequest pr = repo.create_pull("perf: x", "body", "maxcode/a/f", "main");
  EXPECT_EQ(pr.number, 1);
  EXPECT_EQ(pr.head_ref, "maxcode/a/f");
  EXPECT_EQ(github->state()["repos"]["acme/histo"]["pulls"].size(), 1u);
  // Creating it again finds the open one ("already exists") instead of failing.
  EXPECT_EQ(repo.create_pull("perf: x", "body", "maxcode/a/f", "main").number, 1);
  EXPECT_EQ(github->state()["repos"]["acme/histo"]["pulls"].size(), 1u);
}

TEST_F(Client, ValidationErrorsAreSpelledOut) {
  auto c = client();
  const std::string e = error_of([&] {
    c.post("/repos/acme/histo/pulls", {{"title", "t"}, {"head", "no-such-branch"}, {"base", "main"}});
  });
  EXPECT_EQ(e.rfind("422 ", 0), 0u) << e;
  EXPECT_NE(e.find("Validation Failed: PullRequest.head invalid"), std::string::npos) << e;

  github->fail({{"kind", "422"}, {"errors", {{{"resource", "Issue"}, {"field", "body"}, {"code", "custom"},
                                              {"message", "body is too long (maximum is 65536 characters)"}}}}});
  const std::string e2 = error_of([&] { c.get("/repos/acme/histo"); });
  EXPECT_NE(e2.find("body is too long (maximum is 65536 characters)"), std::string::npos) << e2;

  RepoApi repo(c, "acme", "histo");
  const std::string e3 = error_of([&] { repo.create_pull("t", std::string(70000, 'x'), "maxcode/a/f", "main"); });
  EXPECT_NE(e3.find("body is too long"), std::string::npos) << e3;
}

TEST_F(Client, LabelsAreCreatedOnceAndAdded) {
  auto c = client();
  RepoApi repo(c, "acme", "histo");
  const int pr = repo.create_pull("t", "b", "maxcode/a/f", "main").number;
  repo.ensure_label("maxcode", "5319e7", "Opened by maxcode");
  repo.ensure_label("maxcode", "5319e7", "Opened by maxcode");
  repo.add_labels(pr, {"maxcode", "performance"});
  const json state = github->state()["repos"]["acme/histo"];
  ASSERT_EQ(state["labels"].size(), 2u);
  EXPECT_EQ(state["labels"][0]["color"], "5319e7");
  EXPECT_EQ(state["pulls"][0]["labels"], json({"maxcode", "performance"}));
  EXPECT_EQ(github->stats()["operations"]["issues/create-label"], 1);
}

TEST_F(Client, CommentsAreUpdatedByMarkerAcrossPages) {
  auto c = client();
  RepoApi repo(c, "acme", "histo");
  const int pr = repo.create_pull("t", "b", "maxcode/a/f", "main").number;
  const Comment first = repo.upsert_comment(pr, "<!-- m -->", "<!-- m -->\nfirst");
  for (int i = 0; i < 120; ++i) c.post("/repos/acme/histo/issues/1/comments", {{"body", "chatter " + std::to_string(i)}});
  const Comment second = repo.upsert_comment(pr, "<!-- m -->", "<!-- m -->\nsecond");
  EXPECT_EQ(second.id, first.id);
  const json comments = github->state()["repos"]["acme/histo"]["comments"];
  EXPECT_EQ(comments.size(), 121u);
  EXPECT_EQ(comments[0]["body"], "<!-- m -->\nsecond");
  EXPECT_EQ(repo.comments(pr).size(), 121u);  // two pages of 100
}

TEST_F(Client, CheckRunsNeedAnAppAndSaySo) {
  auto c = client();
  RepoApi repo(c, "acme", "histo");
  CheckRun run;
  run.head_sha = std::string(40, '2');
  run.conclusion = "success";
  run.title = "1.75x";
  run.summary = "faster";
  const std::string e = error_of([&] { repo.create_check_run(run); });
  EXPECT_EQ(e.rfind("403 ", 0), 0u) << e;
  EXPECT_NE(e.find("You must authenticate via a GitHub App"), std::string::npos) << e;
}

TEST_F(Client, PaginationReplaysOctokitFixtures) {
  github->replay("paginate-issues");
  auto c = client();
  const json issues = c.get_all("/repos/octokit-fixture-org/paginate-issues/issues?per_page=3");
  EXPECT_EQ(issues.size(), 13u);  // five recorded pages, the links rewritten to the local server
  EXPECT_EQ(github->stats()["replay_left"], 0);
}

TEST_F(Client, ValidationErrorsReplayOctokitFixtures) {
  github->replay("errors");
  auto c = client();
  const std::string e = error_of([&] {
    c.post("/repos/octokit-fixture-org/errors/labels", {{"name", "foo"}, {"color", "invalid"}});
  });
  EXPECT_EQ(e.rfind("422 ", 0), 0u) << e;
  EXPECT_NE(e.find("Validation Failed: Label.color invalid"), std::string::npos) << e;
}

TEST(ClientLinks, NextLinksAreParsedAndForeignHostsRefused) {
  EXPECT_EQ(next_link("<https://api.github.com/r?page=2>; rel=\"next\", <https://api.github.com/r?page=5>; rel=\"last\""),
            "https://api.github.com/r?page=2");
  EXPECT_EQ(next_link("<https://api.github.com/r?page=1>; rel=\"prev\""), std::nullopt);
  EXPECT_EQ(split_api_url("https://ghe.example/api/v3/"), std::make_pair(std::string("https://ghe.example"), std::string("/api/v3")));
  EXPECT_THROW(split_api_url("ftp://x"), std::invalid_argument);
  EXPECT_EQ(url_encode("maxcode/a b"), "maxcode%2Fa%20b");

  // A pagination link to another host is not followed: the token would go there.
  httplib::Server server;
  server.Get("/list", [](const httplib::Request&, httplib::Response& res) {
    res.set_header("Link", "<http://elsewhere.example/list?page=2>; rel=\"next\"");
    res.set_content("[1]", "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread thread([&] { server.listen_after_bind(); });
  {
    ClientOptions options;
    options.api_url = "http://127.0.0.1:" + std::to_string(port);
    GithubClient c(options, std::make_shared<StaticToken>("secret"));
    try {
      c.get_all("/list");
      ADD_FAILURE() << "followed a link to another host";
    } catch (const GithubError& e) {
      EXPECT_NE(std::string(e.what()).find("pagination link leaves"), std::string::npos) << e.what();
    }
  }  // the client's keep-alive connection closes before the server stops
  server.stop();
  thread.join();
}

}  // namespace
}  // namespace maxcode::bot
