#include "bot/github/github_repo.h"

#include <algorithm>

namespace maxcode::bot {

namespace {

std::string str(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

nlohmann::json check_run_json(const CheckRun& run, bool create) {
  nlohmann::json j{{"name", run.name}, {"status", run.status}};
  if (create) j["head_sha"] = run.head_sha;
  if (!run.conclusion.empty()) j["conclusion"] = run.conclusion;
  if (!run.details_url.empty()) j["details_url"] = run.details_url;
  if (!run.external_id.empty()) j["external_id"] = run.external_id;
  if (!run.title.empty() || !run.summary.empty()) {
    j["output"] = {{"title", run.title}, {"summary", run.summary}};
    if (!run.text.empty()) j["output"]["text"] = run.text;
  }
  return j;
}

Issue issue_from_json(const nlohmann::json& j) {
  return {j.value("number", 0), str(j, "state"), str(j, "title"), str(j, "body"), str(j, "html_url")};
}

}  // namespace

PullRequest pull_from_json(const nlohmann::json& j) {
  PullRequest p;
  p.number = j.value("number", 0);
  p.state = str(j, "state");
  p.merged = (j.contains("merged") && j["merged"].is_boolean() && j["merged"].get<bool>()) ||
             (j.contains("merged_at") && j["merged_at"].is_string());
  p.title = str(j, "title");
  p.body = str(j, "body");
  p.html_url = str(j, "html_url");
  p.created_at = str(j, "created_at");
  p.closed_at = str(j, "closed_at");
  if (j.contains("head") && j["head"].is_object()) {
    p.head_ref = str(j["head"], "ref");
    p.head_sha = str(j["head"], "sha");
  }
  if (j.contains("base") && j["base"].is_object()) p.base_ref = str(j["base"], "ref");
  if (j.contains("user") && j["user"].is_object()) p.user = str(j["user"], "login");
  return p;
}

RepoApi::RepoApi(GithubClient& client, std::string owner, std::string name)
    : client_(client), owner_(std::move(owner)), name_(std::move(name)) {}

std::string RepoApi::path(const std::string& rest) const {
  return "/repos/" + url_encode(owner_) + "/" + url_encode(name_) + rest;
}

std::string RepoApi::default_branch() { return str(client_.get(path("")), "default_branch"); }

std::optional<Branch> RepoApi::branch(const std::string& name) {
  try {
    const nlohmann::json j = client_.get(path("/branches/" + url_encode(name)));
    Branch b;
    if (j.contains("commit") && j["commit"].is_object()) b.sha = str(j["commit"], "sha");
    b.is_protected = j.value("protected", false);
    return b;
  } catch (const GithubError& e) {
    if (e.status == 404) return std::nullopt;
    throw;
  }
}

std::vector<PullRequest> RepoApi::pulls_for_head(const std::string& branch, const std::string& state) {
  std::vector<PullRequest> out;
  for (const auto& j : client_.get_all(path("/pulls?state=" + state + "&head=" + url_encode(owner_ + ":" + branch))))
    out.push_back(pull_from_json(j));
  std::sort(out.begin(), out.end(), [](const PullRequest& a, const PullRequest& b) { return a.number > b.number; });
  return out;
}

std::vector<PullRequest> RepoApi::open_pulls() {
  std::vector<PullRequest> out;
  for (const auto& j : client_.get_all(path("/pulls?state=open"))) out.push_back(pull_from_json(j));
  return out;
}

std::vector<PullRequest> RepoApi::recent_pulls() {
  std::vector<PullRequest> out;
  for (const auto& j : client_.get(path("/pulls?state=all&sort=created&direction=desc&per_page=100")))
    out.push_back(pull_from_json(j));
  return out;
}

PullRequest RepoApi::create_pull(const std::string& title, const std::string& body, const std::string& head,
                                 const std::string& base) {
  const nlohmann::json request{{"title", title}, {"body", body}, {"head", head}, {"base", base},
                               {"maintainer_can_modify", true}};
  const auto existing = [&]() -> std::optional<PullRequest> {
    for (const PullRequest& p : pulls_for_head(head, "open"))
      if (p.base_ref == base) return p;
    return std::nullopt;
  };
  constexpr int kTries = 3;
  for (int attempt = 1;; ++attempt) {
    try {
      return pull_from_json(client_.post(path("/pulls"), request));
    } catch (const GithubError& e) {
      const bool unknown_outcome = e.status == 0 || e.status >= 500;
      const bool already = e.status == 422 && e.mentions("already exists");
      if (!unknown_outcome && !already) throw;
      // The PR may exist now (created before the error, or by a concurrent run).
      if (auto found = existing()) return *found;
      if (already || attempt == kTries) throw;
    }
  }
}

PullRequest RepoApi::update_pull(int number, const std::optional<std::string>& title,
                                 const std::optional<std::string>& body, const std::optional<std::string>& state) {
  nlohmann::json request = nlohmann::json::object();
  if (title) request["title"] = *title;
  if (body) request["body"] = *body;
  if (state) request["state"] = *state;
  return pull_from_json(client_.patch(path("/pulls/" + std::to_string(number)), request));
}

void RepoApi::ensure_label(const std::string& name, const std::string& color, const std::string& description) {
  try {
    client_.get(path("/labels/" + url_encode(name)));
    return;
  } catch (const GithubError& e) {
    if (e.status != 404) throw;
  }
  try {
    client_.post(path("/labels"), {{"name", name}, {"color", color}, {"description", description}});
  } catch (const GithubError& e) {
    if (!(e.status == 422 && e.mentions("already_exists"))) throw;  // created meanwhile: fine
  }
}

void RepoApi::add_labels(int issue_number, const std::vector<std::string>& labels) {
  if (labels.empty()) return;
  client_.post(path("/issues/" + std::to_string(issue_number) + "/labels"), {{"labels", labels}});
}

std::vector<Comment> RepoApi::comments(int issue_number) {
  std::vector<Comment> out;
  for (const auto& j : client_.get_all(path("/issues/" + std::to_string(issue_number) + "/comments"))) {
    Comment c;
    c.id = j.value("id", 0LL);
    c.body = str(j, "body");
    if (j.contains("user") && j["user"].is_object()) c.user = str(j["user"], "login");
    out.push_back(std::move(c));
  }
  return out;
}

Comment RepoApi::upsert_comment(int issue_number, const std::string& marker, const std::string& body) {
  for (const Comment& c : comments(issue_number)) {
    if (c.body.find(marker) == std::string::npos) continue;
    if (c.body == body) return c;  // nothing new to say
    const nlohmann::json j = client_.patch(path("/issues/comments/" + std::to_string(c.id)), {{"body", body}});
    return {j.value("id", 0LL), str(j, "body"), c.user};
  }
  const nlohmann::json j = client_.post(path("/issues/" + std::to_string(issue_number) + "/comments"), {{"body", body}});
  return {j.value("id", 0LL), str(j, "body"), ""};
}

std::vector<Issue> RepoApi::open_issues(const std::string& label) {
  std::vector<Issue> out;
  // GitHub's issue list holds pull requests too (they carry "pull_request").
  for (const auto& j : client_.get_all(path("/issues?state=open&labels=" + url_encode(label))))
    if (!j.contains("pull_request")) out.push_back(issue_from_json(j));
  return out;
}

Issue RepoApi::create_issue(const std::string& title, const std::string& body, const std::vector<std::string>& labels) {
  return issue_from_json(client_.post(path("/issues"), {{"title", title}, {"body", body}, {"labels", labels}}));
}

Issue RepoApi::update_issue(int number, const std::optional<std::string>& title, const std::optional<std::string>& body) {
  nlohmann::json j = nlohmann::json::object();
  if (title) j["title"] = *title;
  if (body) j["body"] = *body;
  return issue_from_json(client_.patch(path("/issues/" + std::to_string(number)), j));
}

std::vector<std::pair<long long, std::string>> RepoApi::check_runs(const std::string& sha, const std::string& name) {
  std::vector<std::pair<long long, std::string>> out;
  const nlohmann::json j = client_.get(path("/commits/" + url_encode(sha) + "/check-runs?check_name=" + url_encode(name)));
  if (j.is_object() && j.contains("check_runs") && j["check_runs"].is_array())
    for (const auto& c : j["check_runs"]) out.push_back({c.value("id", 0LL), str(c, "external_id")});
  return out;
}

long long RepoApi::create_check_run(const CheckRun& run) {
  return client_.post(path("/check-runs"), check_run_json(run, true)).value("id", 0LL);
}

void RepoApi::update_check_run(long long id, const CheckRun& run) {
  client_.patch(path("/check-runs/" + std::to_string(id)), check_run_json(run, false));
}

}  // namespace maxcode::bot
