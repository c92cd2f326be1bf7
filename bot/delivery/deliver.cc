#include "bot/delivery/deliver.h"

#include <chrono>
#include <map>

#include "bot/github/app_auth.h"
#include "bot/github/commit_identity.h"
#include "bot/delivery/branch_name.h"
#include "bot/delivery/delivery_input.h"
#include "bot/github/github_repo.h"
#include "bot/delivery/pr_body.h"
#include "bot/delivery/pr_metadata.h"
#include "bot/delivery/sanitize.h"
#include "runner/util/files.h"

namespace maxcode::bot {

namespace fs = std::filesystem;

namespace {

constexpr const char* kForeignMarker = "<!-- maxcode:foreign-commits -->";
constexpr const char* kUpdateMarker = "<!-- maxcode:update -->";
constexpr const char* kRunTrailer = "Maxcode-Run: ";

// The label colors and descriptions maxcode uses for the labels it knows.
struct LabelStyle {
  const char* color;
  const char* description;
};
LabelStyle label_style(const std::string& name) {
  static const std::map<std::string, LabelStyle> known = {
      {"maxcode", {"5319e7", "Opened by maxcode"}},
      {"performance", {"0e8a16", "Makes code faster"}},
  };
  auto it = known.find(name);
  return it == known.end() ? LabelStyle{"ededed", ""} : it->second;
}

std::pair<std::string, std::string> split_repo(const std::string& repo) {
  const std::size_t slash = repo.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == repo.size() || repo.find('/', slash + 1) != std::string::npos)
    throw DeliveryError("--repo must be OWNER/NAME, not '" + repo + "'");
  return {repo.substr(0, slash), repo.substr(slash + 1)};
}

// The time the run started, so the same result always makes the same commit.
std::int64_t commit_time(const DeliveryInput& in) {
  const std::string& started = in.result.started_at;
  try {
    if (!started.empty()) return parse_github_time(started);
  } catch (const std::exception&) {
  }
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string commit_message(const DeliveryInput& in, const PrText& text) {
  const RatioInterval& sp = in.winner().confirmed.speedup;
  char line[200];
  std::snprintf(line, sizeof line,
                "Measured %.3fx faster (95%% interval %.3f-%.3f, %d rounds), confirmed in a fresh A/B session.",
                sp.median, sp.low, sp.high, sp.rounds);
  return text.title + "\n\n" + line + "\n\n" + kRunTrailer + in.run_id() + "\nMaxcode-Target: " + in.git_path() + ":" +
         in.function() + "\n";
}

// By this identity, or by the one maxcode used before it asked GitHub who it is (branches
// made then are still maxcode's to update).
bool made_by_maxcode(const CommitInfo& c, const GitIdentity& identity) {
  const bool ours = c.author_email == identity.email || c.author_email == GitIdentity{}.email;
  return ours && c.message.find(std::string("\n") + kRunTrailer) != std::string::npos;
}

std::string short_result(const DeliveryInput& in) {
  const double s = in.winner().confirmed.speedup.median;
  char text[64];
  std::snprintf(text, sizeof text, "%.2fx", s);
  return std::string(text) + " (" + time_change(s) + " time)";
}

// Removes the temporary clone however delivery ends.
struct ScratchDir {
  fs::path path;
  ~ScratchDir() {
    std::error_code ignored;
    if (!path.empty()) fs::remove_all(path, ignored);
  }
};

}  // namespace

const char* outcome_name(DeliveryOutcome outcome) {
  switch (outcome) {
    case DeliveryOutcome::kDryRun: return "dry-run";
    case DeliveryOutcome::kCreated: return "created";
    case DeliveryOutcome::kUpdated: return "updated";
    case DeliveryOutcome::kUnchanged: return "unchanged";
    case DeliveryOutcome::kIgnored: return "ignored";
    case DeliveryOutcome::kAlreadyMerged: return "already-merged";
    case DeliveryOutcome::kForeignCommits: return "foreign-commits";
    case DeliveryOutcome::kProtected: return "protected-branch";
    case DeliveryOutcome::kHeldBack: return "held-back";
  }
  return "unknown";
}

std::string default_git_url(const std::string& api_url, const std::string& repo) {
  const auto [origin, prefix] = split_api_url(api_url);
  if (origin == "https://api.github.com") return "https://github.com/" + repo + ".git";
  return origin + "/" + repo + ".git";  // GitHub Enterprise serves git beside /api/v3
}

namespace {

// One delivery, step by step: each method is one decision of docs/delivery.md, in the
// order run() takes them; a step that settles the outcome (nothing to do, held back,
// left alone) returns the report, and the rest do not run.
class Delivery {
 public:
  Delivery(const DeliverOptions& options, std::shared_ptr<TokenSource> tokens, std::ostream& log)
      : options_(options), tokens_(std::move(tokens)), log_(log), in_(load_delivery_input(options.result_dir)) {
    report_.branch = branch_for(in_.git_path(), in_.function());
    ctx_ = {options.repo, report_.branch, in_.commit(), "", 0};
    line_begin_ = in_.result.target.line_begin;
    line_end_ = in_.result.target.line_end;
  }

  DeliveryReport run() {
    if (options_.dry_run) return dry_run();
    const auto [owner, name] = split_repo(options_.repo);  // a dry run may have none
    GithubClient client(options_.client, tokens_);
    RepoApi api(client, owner, name);
    const std::string base_branch = options_.base.empty() ? api.default_branch() : options_.base;
    const auto base = api.branch(base_branch);
    if (!base) throw DeliveryError("base branch '" + base_branch + "' does not exist in " + options_.repo);

    ScratchDir scratch{
        make_unique_dir(options_.work_dir.empty() ? fs::temp_directory_path() : options_.work_dir, "maxcode-pr-")};
    const GitIdentity identity = options_.identity ? *options_.identity
                                 : tokens_         ? commit_identity(client, *tokens_, GitIdentity{}, log_)
                                                   : GitIdentity{};
    const std::string git_url =
        options_.git_url.empty() ? default_git_url(options_.client.api_url, options_.repo) : options_.git_url;
    GitRemote git(scratch.path / "repo.git", git_url, tokens_ ? tokens_->token() : "");
    fetch(git, git_url, base->sha);
    if (auto settled = earlier_prs(api)) return *settled;
    const auto tip = git.remote_branch(report_.branch);
    if (tip)
      if (auto settled = branch_is_not_ours(api, git, *tip, identity)) return *settled;
    if (!open_)
      if (auto settled = held_back(api)) return *settled;
    const PrText text = compose_pr(in_, ctx_);
    report_.title = text.title;
    report_.body = text.body;
    report_.trimmed = text.trimmed;
    push(git, tip, identity, text);
    const PullRequest pr = open_or_update(api, text, base_branch);
    label(api, pr);
    check_run(api, pr);
    report_.message =
        std::string(outcome_name(report_.outcome)) + " PR #" + std::to_string(pr.number) + " " + pr.html_url;
    return report_;
  }

 private:
  // Nothing pushed or opened: the PR as it would read. The hash needs the original
  // code: read it from the local repository if it is here.
  DeliveryReport dry_run() {
    const std::string& path = in_.result.repository.path;
    if (!path.empty() && !ctx_.base_commit.empty())
      if (auto original = GitRemote::read_local_file(path, ctx_.base_commit, in_.git_path()))
        ctx_.target_hash = code_hash(lines_of(*original, line_begin_, line_end_));
    const PrText text = compose_pr(in_, ctx_);
    report_.title = text.title;
    report_.body = text.body;
    report_.trimmed = text.trimmed;
    report_.message = "dry run: nothing was pushed or opened";
    return report_;
  }

  // The repository, fetched; the run's commit must be in it, and the target's code
  // there gives the hash that recognizes earlier PRs of the same code.
  void fetch(GitRemote& git, const std::string& git_url, const std::string& base_sha) {
    log_ << "pr: fetching " << git_url << "\n";
    git.fetch();
    if (ctx_.base_commit.empty()) {
      ctx_.base_commit = base_sha;  // the run was not in a git repository: start from the base branch
    } else if (!git.has_commit(ctx_.base_commit)) {
      throw DeliveryError("commit " + ctx_.base_commit + " of the run is not in " + git_url +
                          ": push it (or run maxcode optimize on a pushed commit) first");
    }
    const auto original = git.read_file(ctx_.base_commit, in_.git_path());
    if (!original) throw DeliveryError(in_.git_path() + " does not exist at commit " + ctx_.base_commit);
    ctx_.target_hash = code_hash(lines_of(*original, line_begin_, line_end_));
  }

  // Earlier PRs for this target: the open one is updated; a closed one of the same
  // code settles it (merged: nothing to do; closed unmerged: not reopened).
  std::optional<DeliveryReport> earlier_prs(RepoApi& api) {
    std::optional<PullRequest> latest_closed;
    for (const PullRequest& p : api.pulls_for_head(report_.branch, "all")) {
      if (p.state == "open" && !open_) open_ = p;
      if (p.state == "closed" && !latest_closed) latest_closed = p;
    }
    if (open_ || !latest_closed) return std::nullopt;
    const auto meta = parse_metadata(latest_closed->body);
    const bool same_code = meta && meta->value("target_hash", std::string()) == ctx_.target_hash;
    const std::string pr = "PR #" + std::to_string(latest_closed->number);
    if (same_code) {
      report_.pr_number = latest_closed->number;
      report_.pr_url = latest_closed->html_url;
      report_.outcome = latest_closed->merged ? DeliveryOutcome::kAlreadyMerged : DeliveryOutcome::kIgnored;
      report_.message = latest_closed->merged
                            ? pr + " for this target was merged; nothing to do"
                            : pr + " was closed without merging and the function is unchanged since: not reopening it";
      return report_;
    }
    if (!latest_closed->merged) ctx_.superseded_pr = latest_closed->number;
    return std::nullopt;
  }

  // The branch is only ever rewritten when every commit on it is maxcode's, and never
  // when GitHub protects it.
  std::optional<DeliveryReport> branch_is_not_ours(RepoApi& api, GitRemote& git, const std::string& tip,
                                                   const GitIdentity& identity) {
    std::vector<CommitInfo> foreign;
    for (const CommitInfo& c : git.own_commits(tip, report_.branch, ctx_.base_commit))
      if (!made_by_maxcode(c, identity)) foreign.push_back(c);
    if (!foreign.empty()) {
      std::string list;
      for (std::size_t i = 0; i < foreign.size() && i < 5; ++i)
        list += (list.empty() ? "" : ", ") + foreign[i].sha.substr(0, 12) + " by " +
                sanitize_inline(foreign[i].author_name, 60);
      report_.outcome = DeliveryOutcome::kForeignCommits;
      report_.message = "branch " + report_.branch + " has " + std::to_string(foreign.size()) +
                        " commit(s) maxcode did not make (" + list + "): left alone";
      if (open_) {
        const std::string body =
            std::string(kForeignMarker) + "\nmaxcode has a new result for this function (run `" + in_.run_id() +
            "`: " + short_result(in_) + "), but the branch " + code_span(report_.branch) +
            " has commits that maxcode did not make (" + list +
            "). maxcode never force-pushes over other people's work, so this PR was left as it is. "
            "To let maxcode update it, drop those commits from the branch; to keep your version, "
            "nothing needs to be done.\n";
        api.upsert_comment(open_->number, kForeignMarker, body);
        report_.pr_number = open_->number;
        report_.pr_url = open_->html_url;
      }
      return report_;
    }
    if (const auto b = api.branch(report_.branch); b && b->is_protected) {
      report_.outcome = DeliveryOutcome::kProtected;
      report_.message = "branch " + report_.branch + " is protected on GitHub: maxcode does not push to it";
      return report_;
    }
    return std::nullopt;
  }

  // A new PR waits while the repository has as many open maxcode PRs, or as many
  // opened in the last hour, as its limits allow.
  std::optional<DeliveryReport> held_back(RepoApi& api) {
    int open_count = 0, last_hour = 0;
    for (const PullRequest& p : api.open_pulls()) open_count += p.head_ref.rfind("maxcode/", 0) == 0;
    const auto now =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    for (const PullRequest& p : api.recent_pulls()) {
      if (p.head_ref.rfind("maxcode/", 0) != 0 || p.created_at.empty()) continue;
      try {
        last_hour += now - parse_github_time(p.created_at) < 3600;
      } catch (const std::exception&) {
      }
    }
    if (open_count < options_.max_open_prs && last_hour < options_.max_prs_per_hour) return std::nullopt;
    report_.outcome = DeliveryOutcome::kHeldBack;
    report_.message = options_.repo + " has " + std::to_string(open_count) + " open maxcode PR(s) and " +
                      std::to_string(last_hour) + " opened in the last hour (limits " +
                      std::to_string(options_.max_open_prs) + " and " + std::to_string(options_.max_prs_per_hour) +
                      "): not opening another now";
    return report_;
  }

  // The patch as one commit on the base; pushed when the branch does not hold it yet
  // (forced only over maxcode's own commits, checked above).
  void push(GitRemote& git, const std::optional<std::string>& tip, const GitIdentity& identity, const PrText& text) {
    report_.commit =
        git.commit_patch(ctx_.base_commit, in_.patch, identity, commit_message(in_, text), commit_time(in_));
    if (tip && *tip == report_.commit) return;
    log_ << "pr: pushing " << report_.commit.substr(0, 12) << " to " << report_.branch << "\n";
    git.push(report_.commit, report_.branch, /*force=*/tip.has_value());
    report_.pushed = true;
  }

  // The open PR updated (and a comment saying so when the code moved), or a new one.
  PullRequest open_or_update(RepoApi& api, const PrText& text, const std::string& base_branch) {
    if (!open_) {
      report_.outcome = DeliveryOutcome::kCreated;
      return remember(api.create_pull(text.title, text.body, report_.branch, base_branch));
    }
    const bool text_changed = open_->title != text.title || open_->body != text.body;
    PullRequest pr = text_changed ? api.update_pull(open_->number, text.title, text.body) : *open_;
    report_.outcome = text_changed || report_.pushed ? DeliveryOutcome::kUpdated : DeliveryOutcome::kUnchanged;
    if (report_.pushed)
      api.upsert_comment(pr.number, kUpdateMarker,
                         std::string(kUpdateMarker) + "\nUpdated by maxcode run `" + in_.run_id() + "` (commit " +
                             report_.commit.substr(0, 12) + "): " + short_result(in_) +
                             ". The description shows the new measurements.\n");
    return remember(pr);
  }

  PullRequest remember(PullRequest pr) {
    report_.pr_number = pr.number;
    report_.pr_url = pr.html_url;
    return pr;
  }

  void label(RepoApi& api, const PullRequest& pr) {
    for (const auto& label : options_.labels) {
      const LabelStyle style = label_style(label);
      api.ensure_label(label, style.color, style.description);
    }
    api.add_labels(pr.number, options_.labels);
  }

  // A check on the commit shows the measurement next to CI (App tokens only). It is a
  // courtesy: a failure here does not undo the delivery.
  void check_run(RepoApi& api, const PullRequest& pr) {
    if (!options_.check_run || !tokens_ || !tokens_->is_app() || report_.outcome == DeliveryOutcome::kUnchanged) return;
    try {
      CheckRun run;
      run.head_sha = report_.commit;
      run.conclusion = "success";
      run.title = in_.function() + ": " + short_result(in_);
      run.summary = "maxcode measured " + short_result(in_) + " for " + code_span(in_.function()) +
                    "; see the PR for the evidence.";
      run.external_id = in_.run_id();
      run.details_url = pr.html_url;
      api.create_check_run(run);
    } catch (const GithubError& e) {
      log_ << "pr: warning: no check run: " << e.what() << "\n";
    }
  }

  const DeliverOptions& options_;
  std::shared_ptr<TokenSource> tokens_;
  std::ostream& log_;
  const DeliveryInput in_;
  DeliveryReport report_;
  PrContext ctx_;
  std::size_t line_begin_ = 0, line_end_ = 0;  // the target's lines in the original file
  std::optional<PullRequest> open_;            // the open PR of this target, if any
};

}  // namespace

DeliveryReport deliver(const DeliverOptions& options, std::shared_ptr<TokenSource> tokens, std::ostream& log) {
  return Delivery(options, std::move(tokens), log).run();
}

}  // namespace maxcode::bot
