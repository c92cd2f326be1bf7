// The GitHub operations a delivery needs, on one repository: pull requests, labels,
// issue comments and check runs, over GithubClient.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bot/github/github_client.h"

namespace maxcode::bot {

struct PullRequest {
  int number = 0;
  std::string state;  // "open" | "closed"
  bool merged = false;
  std::string title, body, html_url;
  std::string head_ref, head_sha, base_ref;
  std::string user;
  std::string created_at, closed_at;
};
PullRequest pull_from_json(const nlohmann::json& j);

struct Branch {
  std::string sha;
  bool is_protected = false;
};

struct Comment {
  long long id = 0;
  std::string body, user;
};

struct CheckRun {
  std::string name = "maxcode";
  std::string head_sha;
  std::string status = "completed";  // queued | in_progress | completed
  std::string conclusion;            // success | neutral | failure | ... (completed only)
  std::string title, summary, text;
  std::string details_url;
  std::string external_id;
};

struct Issue {
  int number = 0;
  std::string state;  // "open" | "closed"
  std::string title, body, html_url;
};

class RepoApi {
 public:
  RepoApi(GithubClient& client, std::string owner, std::string name);
  const std::string& owner() const { return owner_; }
  const std::string& name() const { return name_; }

  std::string default_branch();
  std::optional<Branch> branch(const std::string& name);  // nullopt on 404

  // Pull requests whose head is `owner:branch` in this repository, newest first.
  std::vector<PullRequest> pulls_for_head(const std::string& branch, const std::string& state = "all");
  // Open pull requests of this repository (all pages).
  std::vector<PullRequest> open_pulls();
  // The most recently created pull requests (one page of up to 100).
  std::vector<PullRequest> recent_pulls();

  // Creates a pull request. A failure without a clear answer (5xx, dropped connection)
  // may still have created it, so before trying again this looks for one with the same
  // head and base; "already exists" also returns the existing one. Never makes two.
  PullRequest create_pull(const std::string& title, const std::string& body, const std::string& head,
                          const std::string& base);
  PullRequest update_pull(int number, const std::optional<std::string>& title,
                          const std::optional<std::string>& body, const std::optional<std::string>& state = {});
  PullRequest close_pull(int number) { return update_pull(number, {}, {}, std::string("closed")); }

  // Creates the label unless it exists (a concurrent creation counts as existing).
  void ensure_label(const std::string& name, const std::string& color, const std::string& description);
  void add_labels(int issue_number, const std::vector<std::string>& labels);

  // The comment on the issue or PR that contains `marker` (an HTML comment) is updated
  // to `body` (which must contain the marker); without one a comment is created.
  Comment upsert_comment(int issue_number, const std::string& marker, const std::string& body);
  std::vector<Comment> comments(int issue_number);

  // Open issues (not pull requests) with the label, all pages.
  std::vector<Issue> open_issues(const std::string& label);
  Issue create_issue(const std::string& title, const std::string& body, const std::vector<std::string>& labels);
  Issue update_issue(int number, const std::optional<std::string>& title, const std::optional<std::string>& body);

  long long create_check_run(const CheckRun& run);
  // The check runs named `name` on commit `sha`: (id, external_id).
  std::vector<std::pair<long long, std::string>> check_runs(const std::string& sha, const std::string& name);
  void update_check_run(long long id, const CheckRun& run);

 private:
  std::string path(const std::string& rest) const;
  GithubClient& client_;
  std::string owner_, name_;
};

}  // namespace maxcode::bot
