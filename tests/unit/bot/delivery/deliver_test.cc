// Delivery end to end at the library level: a result directory, a real git server on
// loopback and the local GitHub API (every request checked against GitHub's OpenAPI
// description). Idempotency (open, unchanged, updated, ignored after a close, reopened
// when the code changed), other people's commits, protected branches, PR limits, App
// credentials with a check run, and each kind of bad input.
#include <gtest/gtest.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <sstream>

#include "bot/github/app_auth.h"
#include "bot/delivery/deliver.h"
#include "bot/delivery/delivery_input.h"
#include "bot/github/github_repo.h"
#include "bot/delivery/pr_metadata.h"
#include "runner/util/files.h"
#include "runner/workspace/patch.h"
#include "support/git_server.h"
#include "support/github_api.h"
#include "support/test_support.h"

namespace maxcode::bot {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::git;

const json kWrite = {{"pull_requests", "write"}, {"issues", "write"}, {"contents", "write"},
                     {"checks", "write"}, {"metadata", "read"}};
const std::string kBranch = "maxcode/src-histogram-cpp/histogram";

class Deliver : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    github = testing::FakeGithub::get(&why);
    if (!github) GTEST_SKIP() << why;
    github->reset();
    base = server.create_repo("acme/histo.git", testing::source_path("examples/cpu-histogram"));
    bare = server.root() / "acme/histo.git";
    original = read_text(testing::source_path("examples/cpu-histogram/src/histogram.cpp"));
    setup_github();
  }
  void TearDown() override {
    if (github) github->check_clean();
  }
  virtual void setup_github(const json& protected_branches = json::array()) {
    github->setup({{"repos", {{{"owner", "acme"}, {"name", "histo"}, {"git_dir", bare.string()}, {"protected", protected_branches}}}},
                   {"tokens", {{{"token", "s3cret"}, {"login", "maxcode-bot"}, {"type", "Bot"}, {"permissions", kWrite}},
                               {{"token", "ghp_alice"}, {"login", "alice"}, {"permissions", kWrite}}}}});
  }

  // A result directory as `maxcode optimize` writes it, for the function as `code`
  // has it at `commit`.
  fs::path result(const std::string& name, const std::string& commit, const std::string& started_at,
                  const std::string& code, json extra = json::object()) {
    const fs::path out = dir.path() / name;
    std::string changed = code;
    changed.replace(changed.find("std::size_t i = 0;"), 18, "std::size_t i = 0;  // faster");
    Evaluation candidate;
    candidate.candidate_id = "01-four-lanes.cpp";
    candidate.verdict = Verdict::kFaster;
    candidate.reason = "1.70x";
    candidate.isolation = "bubblewrap";
    candidate.steps = {{"test", "ctest", "exit code 0"}};
    candidate.timing = Timing{};
    candidate.timing->speedup = {1.7, 1.6, 1.8, 20};
    candidate.critique = "Four lanes break the store-to-load chain. cc @alice, fixes #1";
    candidate.critic = "llm test-model";
    RunResult run;
    run.command = "optimize";
    run.repository = {(dir.path() / "nowhere").string(), commit, {}};
    run.target = {"src/histogram.cpp", "histogram",
                  "void histogram(const std::uint8_t* data, std::size_t n, std::uint32_t* bins)", 11, 23};
    run.environment = {{"maxcode", "0.1.0"}, {"compiler", "g++ 12"}, {"cpu", "test"}};
    run.settings = {{"min_speedup", 1.05}, {"seeds", {1, 2, 3}}};
    run.candidates = {{1, "llm", json::object(), "", candidate}};
    run.winner = ResultWinner{};
    run.winner->id = candidate.candidate_id;
    run.winner->confirmed.speedup = {1.75, 1.7, 1.8, 20};
    run.winner->confirmed.baseline_median_s = 0.2;
    run.winner->confirmed.candidate_median_s = 0.114;
    run.started_at = started_at;
    json r = to_json(run);
    r.update(extra);
    testing::write_file(out / "result.json", r.dump(2));
    testing::write_file(out / "patch.diff", unified_diff("src/histogram.cpp", code, changed));
    testing::write_file(out / "trajectory.jsonl", to_json(candidate).dump() + "\n");
    return out;
  }
  fs::path result(const std::string& name, const std::string& started_at) { return result(name, base, started_at, original); }

  DeliverOptions options(const fs::path& result_dir) {
    DeliverOptions o;
    o.result_dir = result_dir;
    o.repo = "acme/histo";
    o.git_url = server.url("acme/histo.git");
    o.client.api_url = github->url();
    o.client.sleep = [this](double s) { waits.push_back(s); };
    return o;
  }
  DeliveryReport run(const fs::path& result_dir, const std::string& token = "s3cret") {
    return deliver(options(result_dir), std::make_shared<StaticToken>(token), log);
  }
  json pulls() { return github->state()["repos"]["acme/histo"]["pulls"]; }
  json comments() { return github->state()["repos"]["acme/histo"]["comments"]; }
  std::string tip(const std::string& ref = kBranch) {
    std::string sha = git("--git-dir " + bare.string() + " rev-parse refs/heads/" + ref);
    return sha.substr(0, 40);
  }
  // A person commits `file` with `content` to `branch` and pushes; returns the commit.
  std::string human_commit(const std::string& branch, const std::string& file, const std::string& content) {
    const fs::path work = dir.path() / ("human-" + std::to_string(++humans));
    git("clone -q " + bare.string() + " " + work.string());
    git("checkout -q " + branch, work);
    testing::write_file(work / file, content);
    git("add -A", work);
    git("-c user.name=Alice -c user.email=alice@example.com commit -q -m 'human change'", work);
    git("push -q origin " + branch, work);
    return git("rev-parse HEAD", work).substr(0, 40);
  }
  // "name <email>" of a commit in the remote.
  std::string author(const std::string& commit) {
    std::string line = git("--git-dir " + bare.string() + " log -1 --format='%an <%ae>' " + commit);
    return line.substr(0, line.find('\n'));
  }
  // The id GitHub gives `login` (GET /users/{login}).
  long long user_id(const std::string& login) {
    GithubClient client({github->url()}, std::make_shared<StaticToken>("s3cret"));
    return client.get("/users/" + url_encode(login))["id"].get<long long>();
  }
  void close_as_alice(int number) {
    GithubClient alice({github->url()}, std::make_shared<StaticToken>("ghp_alice"));
    RepoApi(alice, "acme", "histo").close_pull(number);
  }

  testing::FakeGithub* github = nullptr;
  testing::GitServer server{"s3cret"};
  testing::TempDir dir;
  fs::path bare;
  std::string base, original;
  std::vector<double> waits;
  std::ostringstream log;
  int humans = 0;
};

TEST_F(Deliver, OpensThenUpdatesThenRespectsAClose) {
  const DeliveryReport first = run(result("r1", "2026-01-01T00:00:00Z"));
  EXPECT_EQ(first.outcome, DeliveryOutcome::kCreated) << first.message;
  EXPECT_EQ(first.pr_number, 1);
  EXPECT_TRUE(first.pushed);
  EXPECT_EQ(first.branch, kBranch);
  EXPECT_EQ(tip(), first.commit);
  EXPECT_EQ(git("--git-dir " + bare.string() + " rev-parse " + kBranch + "^").substr(0, 40), base);
  json prs = pulls();
  ASSERT_EQ(prs.size(), 1u);
  EXPECT_EQ(prs[0]["title"], "perf: speed up histogram 1.75x (-43% time)");
  EXPECT_EQ(prs[0]["head"], kBranch);
  EXPECT_EQ(prs[0]["base"], "main");
  EXPECT_EQ(prs[0]["labels"], json({"maxcode", "performance"}));
  EXPECT_EQ(prs[0]["user"], "maxcode-bot");
  // The commit is by the token's account, which GitHub links by the noreply address.
  EXPECT_EQ(author(first.commit),
            "maxcode-bot <" + std::to_string(user_id("maxcode-bot")) + "+maxcode-bot@users.noreply.github.com>");
  const std::string body = prs[0]["body"];
  EXPECT_EQ(body.find("@alice"), std::string::npos);  // the critique's mention is defused
  EXPECT_EQ(body.find("#1"), std::string::npos);
  EXPECT_EQ((*parse_metadata(body))["target_hash"], code_hash(lines_of(original, 11, 23)));

  // The same result again: nothing to push, nothing to change.
  const DeliveryReport same = run(result("r1", "2026-01-01T00:00:00Z"));
  EXPECT_EQ(same.outcome, DeliveryOutcome::kUnchanged) << same.message;
  EXPECT_FALSE(same.pushed);
  EXPECT_EQ(tip(), first.commit);

  // A new run of the same target: the same branch and PR, a new commit.
  const DeliveryReport second = run(result("r2", "2026-01-02T00:00:00Z"));
  EXPECT_EQ(second.outcome, DeliveryOutcome::kUpdated) << second.message;
  EXPECT_EQ(second.pr_number, 1);
  EXPECT_TRUE(second.pushed);
  EXPECT_NE(second.commit, first.commit);
  EXPECT_EQ(tip(), second.commit);
  EXPECT_EQ(pulls().size(), 1u);
  ASSERT_EQ(comments().size(), 1u);
  EXPECT_NE(comments()[0]["body"].get<std::string>().find("Updated by maxcode run"), std::string::npos);

  // A maintainer closes it: maxcode leaves the target alone while the code is the same.
  close_as_alice(1);
  const DeliveryReport third = run(result("r3", "2026-01-03T00:00:00Z"));
  EXPECT_EQ(third.outcome, DeliveryOutcome::kIgnored) << third.message;
  EXPECT_EQ(pulls().size(), 1u);
  EXPECT_EQ(pulls()[0]["state"], "closed");
  EXPECT_EQ(tip(), second.commit);

  // The function changes on main: a new PR, which says why.
  std::string edited = original;
  edited.replace(edited.find("  std::size_t i = 0;"), 20, "  std::size_t i = 0;  // reviewed");
  const std::string moved = human_commit("main", "src/histogram.cpp", edited);
  const DeliveryReport fourth = run(result("r4", moved, "2026-01-04T00:00:00Z", edited));
  EXPECT_EQ(fourth.outcome, DeliveryOutcome::kCreated) << fourth.message;
  EXPECT_EQ(fourth.pr_number, 2);
  EXPECT_EQ(pulls().size(), 2u);
  EXPECT_NE(pulls()[1]["body"].get<std::string>().find("An earlier PR for this function (#1) was closed"), std::string::npos);
  EXPECT_EQ(git("--git-dir " + bare.string() + " rev-parse " + kBranch + "^").substr(0, 40), moved);
}

// A branch maxcode made before it asked GitHub who it is (author maxcode[bot]) is still
// its own: the next delivery replaces the commit instead of calling it someone else's.
TEST_F(Deliver, ABranchMadeUnderTheOldBotNameIsStillMaxcodes) {
  DeliverOptions o = options(result("r1", "2026-01-01T00:00:00Z"));
  o.identity = GitIdentity{};
  const DeliveryReport old = deliver(o, std::make_shared<StaticToken>("s3cret"), log);
  ASSERT_EQ(old.outcome, DeliveryOutcome::kCreated) << old.message;
  EXPECT_EQ(author(old.commit), "maxcode[bot] <maxcode[bot]@users.noreply.github.com>");
  const DeliveryReport next = run(result("r2", "2026-01-02T00:00:00Z"));
  EXPECT_EQ(next.outcome, DeliveryOutcome::kUpdated) << next.message;
  EXPECT_EQ(tip(), next.commit);
  EXPECT_EQ(author(next.commit).rfind("maxcode-bot <", 0), 0u) << author(next.commit);
}

// Actions' GITHUB_TOKEN may not read its own user: the commit keeps maxcode[bot], and the
// log says why.
TEST_F(Deliver, ATokenThatMayNotReadItsUserKeepsTheDefaultAuthor) {
  github->fail({{"kind", "403"}, {"times", 1}, {"method", "GET"}, {"path", "^/user$"}});
  const DeliveryReport report = run(result("r1", "2026-01-01T00:00:00Z"));
  ASSERT_EQ(report.outcome, DeliveryOutcome::kCreated) << report.message;
  EXPECT_EQ(author(report.commit), "maxcode[bot] <maxcode[bot]@users.noreply.github.com>");
  EXPECT_NE(log.str().find("GET /user: 403"), std::string::npos) << log.str();
}

TEST_F(Deliver, ABranchWithSomeoneElsesCommitsIsLeftAloneWithAComment) {
  ASSERT_EQ(run(result("r1", "2026-01-01T00:00:00Z")).outcome, DeliveryOutcome::kCreated);
  const std::string theirs = human_commit(kBranch, "NOTES.md", "my notes\n");
  for (const std::string name : {"r2", "r3"}) {
    const DeliveryReport report = run(result(name, "2026-01-02T00:00:0" + name.substr(1) + "Z"));
    EXPECT_EQ(report.outcome, DeliveryOutcome::kForeignCommits) << report.message;
    EXPECT_NE(report.message.find("by Alice"), std::string::npos) << report.message;
  }
  EXPECT_EQ(tip(), theirs);  // not force-pushed
  const json c = comments();
  ASSERT_EQ(c.size(), 1u);  // one comment, updated in place
  EXPECT_NE(c[0]["body"].get<std::string>().find("never force-pushes over other people's work"), std::string::npos);
  EXPECT_NE(c[0]["body"].get<std::string>().find(theirs.substr(0, 12)), std::string::npos);
}

TEST_F(Deliver, AProtectedBranchIsNotPushedTo) {
  setup_github(json::array({kBranch}));
  ASSERT_EQ(run(result("r1", "2026-01-01T00:00:00Z")).outcome, DeliveryOutcome::kCreated);
  const std::string before = tip();
  const DeliveryReport report = run(result("r2", "2026-01-02T00:00:00Z"));
  EXPECT_EQ(report.outcome, DeliveryOutcome::kProtected) << report.message;
  EXPECT_EQ(tip(), before);
}

TEST_F(Deliver, APushRefusedByTheServerSaysWhy) {
  server.protect("acme/histo.git", kBranch);
  try {
    run(result("r1", "2026-01-01T00:00:00Z"));
    FAIL() << "delivered to a protected branch";
  } catch (const GitError& e) {
    EXPECT_NE(std::string(e.what()).find("GH006: Protected branch update failed"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(pulls().empty());
}

TEST_F(Deliver, NewPullRequestsAreHeldBackAtTheRepositoryLimits) {
  // Another maxcode PR is open already.
  git("--git-dir " + bare.string() + " branch maxcode/other/f " + base);
  GithubClient bot({github->url()}, std::make_shared<StaticToken>("s3cret"));
  RepoApi(bot, "acme", "histo").create_pull("perf: other", "x", "maxcode/other/f", "main");
  DeliverOptions o = options(result("r1", "2026-01-01T00:00:00Z"));
  o.max_open_prs = 1;
  DeliveryReport report = deliver(o, std::make_shared<StaticToken>("s3cret"), log);
  EXPECT_EQ(report.outcome, DeliveryOutcome::kHeldBack) << report.message;
  o.max_open_prs = 10;
  o.max_prs_per_hour = 1;
  report = deliver(o, std::make_shared<StaticToken>("s3cret"), log);
  EXPECT_EQ(report.outcome, DeliveryOutcome::kHeldBack) << report.message;
  EXPECT_NE(report.message.find("1 opened in the last hour"), std::string::npos) << report.message;
  EXPECT_EQ(pulls().size(), 1u);
}

TEST_F(Deliver, SurvivesARateLimitStormAndA5xxWhileCreatingThePr) {
  github->fail({{"kind", "secondary"}, {"times", 3}, {"retry_after", 2}});
  github->fail({{"kind", "after"}, {"status", 502}, {"method", "POST"}, {"path", "/pulls$"}});
  const DeliveryReport report = run(result("r1", "2026-01-01T00:00:00Z"));
  EXPECT_EQ(report.outcome, DeliveryOutcome::kCreated) << report.message;
  EXPECT_EQ(pulls().size(), 1u);  // the retry found the PR the failed call had made
  EXPECT_EQ(waits, (std::vector<double>{2, 2, 2}));
}

TEST_F(Deliver, DryRunTouchesNothing) {
  DeliverOptions o = options(result("r1", "2026-01-01T00:00:00Z"));
  o.dry_run = true;
  const int before = server.requests();
  const DeliveryReport report = deliver(o, nullptr, log);
  EXPECT_EQ(report.outcome, DeliveryOutcome::kDryRun);
  EXPECT_EQ(report.branch, kBranch);
  EXPECT_EQ(report.title, "perf: speed up histogram 1.75x (-43% time)");
  EXPECT_NE(report.body.find("### Results"), std::string::npos);
  EXPECT_EQ(server.requests(), before);
  EXPECT_EQ(github->stats()["requests"], 0);
}

TEST_F(Deliver, BadInputIsNamed) {
  auto error = [&](const fs::path& d, const std::string& token = "s3cret", const std::string& repo = "acme/histo") {
    DeliverOptions o = options(d);
    o.repo = repo;
    try {
      deliver(o, std::make_shared<StaticToken>(token), log);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error(result("none", base, "2026-01-01T00:00:00Z", original, {{"winner", nullptr}, {"unconfirmed", "x did not confirm"}}))
                .find("no winner"),
            std::string::npos);
  EXPECT_NE(error(result("local", base, "2026-01-01T00:00:00Z", original, {{"repository", {{"commit", base}, {"local_changes", {"src/histogram.cpp"}}}}}))
                .find("uncommitted changes"),
            std::string::npos);
  EXPECT_NE(error(result("unpushed", std::string(40, 'b'), "2026-01-01T00:00:00Z", original)).find("is not in"), std::string::npos);
  // A field of the wrong type is named by its path, before anything is pushed.
  const std::string wrong_type =
      error(result("wrong", base, "2026-01-01T00:00:00Z", original, {{"winner", {{"id", 7}, {"confirmation", {}}}}}));
  EXPECT_NE(wrong_type.find("result.json: winner.id: expected a string, got a number"), std::string::npos)
      << wrong_type;
  const std::string cut =
      error(result("cut", base, "2026-01-01T00:00:00Z", original,
                   {{"winner", {{"id", "01-four-lanes.cpp"}, {"confirmation", {{"speedup", {}}}}}}}));
  EXPECT_NE(cut.find("result.json: winner.confirmation: key 'baseline_s' not found"), std::string::npos) << cut;
  const fs::path no_patch = result("nopatch", "2026-01-01T00:00:00Z");
  fs::remove(no_patch / "patch.diff");
  EXPECT_NE(error(no_patch).find("patch.diff: missing"), std::string::npos);
  EXPECT_NE(error(dir.path() / "missing").find("not a directory"), std::string::npos);
  const fs::path ok = result("ok", "2026-01-01T00:00:00Z");
  EXPECT_NE(error(ok, "s3cret", "histo").find("OWNER/NAME"), std::string::npos);
  const std::string bad_token = error(ok, "expired");
  EXPECT_NE(bad_token.find("401 Bad credentials"), std::string::npos) << bad_token;
  const std::string other_repo = error(ok, "s3cret", "acme/other");
  EXPECT_NE(other_repo.find("404"), std::string::npos) << other_repo;
  EXPECT_TRUE(pulls().empty());
}

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(n));
}

// An RSA key in GitHub's PEM form, and its public half for the local GitHub API.
std::pair<std::string, std::string> app_key() {
  EVP_PKEY* key = EVP_RSA_gen(2048);
  BIO* priv = BIO_new(BIO_s_mem());
  BIO* pub = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey_traditional(priv, key, nullptr, nullptr, 0, nullptr, nullptr);
  PEM_write_bio_PUBKEY(pub, key);
  std::pair<std::string, std::string> pair{bio_text(priv), bio_text(pub)};
  BIO_free(priv);
  BIO_free(pub);
  EVP_PKEY_free(key);
  return pair;
}

class DeliverAsApp : public Deliver {
 protected:
  void setup_github(const json& = json::array()) override {
    key = app_key();
    const json installation{{"id", 77}, {"permissions", kWrite}};
    const json app{{"id", "4242"}, {"slug", "perf-helper"}, {"public_key", key.second},
                   {"installations", json::array({installation})}};
    github->setup({{"repos", {{{"owner", "acme"}, {"name", "histo"}, {"git_dir", bare.string()}}}},
                   {"apps", json::array({app})}});
  }
  std::pair<std::string, std::string> key;
  testing::GitServer any_token_server{"*"};
};

TEST_F(DeliverAsApp, UsesAnInstallationTokenAndRecordsACheckRun) {
  const std::string sha = any_token_server.create_repo("acme/histo.git", testing::source_path("examples/cpu-histogram"));
  bare = any_token_server.root() / "acme/histo.git";
  setup_github();
  DeliverOptions o = options(result("r1", sha, "2026-01-01T00:00:00Z", original));
  o.git_url = any_token_server.url("acme/histo.git");
  auto tokens = std::make_shared<AppInstallationTokens>(AppCredentials{"4242", key.first, "77"}, o.client,
                                                        std::vector<std::string>{"histo"});
  const DeliveryReport report = deliver(o, tokens, log);
  EXPECT_EQ(report.outcome, DeliveryOutcome::kCreated) << report.message;
  EXPECT_EQ(tokens->exchanges(), 1);  // one installation token for the whole delivery
  const json state = github->state()["repos"]["acme/histo"];
  EXPECT_EQ(state["pulls"][0]["user"], "perf-helper[bot]");
  // By the App's bot account, named by its slug (not a fixed "maxcode[bot]").
  EXPECT_EQ(author(report.commit), "perf-helper[bot] <" + std::to_string(user_id("perf-helper[bot]")) +
                                       "+perf-helper[bot]@users.noreply.github.com>");
  ASSERT_EQ(state["check_runs"].size(), 1u);
  EXPECT_EQ(state["check_runs"][0]["head_sha"], report.commit);
  EXPECT_EQ(state["check_runs"][0]["conclusion"], "success");
  EXPECT_EQ(state["check_runs"][0]["title"], "histogram: 1.75x (-43% time)");

  // The service updates a check run it created (e.g. when a re-measurement finishes).
  GithubClient client(o.client, tokens);
  CheckRun update;
  update.conclusion = "neutral";
  update.title = "re-measured";
  update.summary = "within noise";
  RepoApi(client, "acme", "histo").update_check_run(state["check_runs"][0]["id"].get<long long>(), update);
  const json after = github->state()["repos"]["acme/histo"]["check_runs"][0];
  EXPECT_EQ(after["conclusion"], "neutral");
  EXPECT_EQ(after["summary"], "within noise");
  EXPECT_EQ(tokens->exchanges(), 1);
}

}  // namespace
}  // namespace maxcode::bot
