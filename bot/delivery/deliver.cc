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
  const std::string started = in.result.value("started_at", std::string());
  try {
    if (!started.empty()) return parse_github_time(started);
  } catch (const std::exception&) {
  }
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string commit_message(const DeliveryInput& in, const PrText& text) {
  const auto& sp = in.winner()["speedup"];
  char line[200];
  std::snprintf(line, sizeof line, "Measured %.3fx faster (95%% interval %.3f-%.3f, %lld rounds), confirmed in a fresh A/B session.",
                sp.value("median", 0.0), sp.value("low", 0.0), sp.value("high", 0.0), sp.value("rounds", 0LL));
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
  const double s = in.winner()["speedup"].value("median", 0.0);
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

DeliveryReport deliver(const DeliverOptions& options, std::shared_ptr<TokenSource> tokens, std::ostream& log) {
  const DeliveryInput in = load_delivery_input(options.result_dir);
  DeliveryReport report;
  report.branch = branch_for(in.git_path(), in.function());
  PrContext ctx{options.repo, report.branch, in.commit(), "", 0};
  const auto& target = in.result["target"];
  const std::size_t line_begin = target.value("line_begin", std::size_t{0});
  const std::size_t line_end = target.value("line_end", std::size_t{0});

  if (options.dry_run) {
    // The hash needs the original code: read it from the local repository if it is here.
    const std::string path = in.result["repository"].value("path", std::string());
    if (!path.empty() && !ctx.base_commit.empty())
      if (auto original = GitRemote::read_local_file(path, ctx.base_commit, in.git_path()))
        ctx.target_hash = code_hash(lines_of(*original, line_begin, line_end));
    const PrText text = compose_pr(in, ctx);
    report.title = text.title;
    report.body = text.body;
    report.trimmed = text.trimmed;
    report.message = "dry run: nothing was pushed or opened";
    return report;
  }

  const auto [owner, name] = split_repo(options.repo);  // a dry run may have none
  GithubClient client(options.client, tokens);
  RepoApi api(client, owner, name);
  const std::string base_branch = options.base.empty() ? api.default_branch() : options.base;
  const auto base = api.branch(base_branch);
  if (!base) throw DeliveryError("base branch '" + base_branch + "' does not exist in " + options.repo);

  ScratchDir scratch{make_unique_dir(options.work_dir.empty() ? fs::temp_directory_path() : options.work_dir, "maxcode-pr-")};
  const std::string git_url = options.git_url.empty() ? default_git_url(options.client.api_url, options.repo) : options.git_url;
  const GitIdentity identity = options.identity ? *options.identity
                              : tokens            ? commit_identity(client, *tokens, GitIdentity{}, log)
                                                  : GitIdentity{};
  GitRemote git(scratch.path / "repo.git", git_url, tokens ? tokens->token() : "");
  log << "pr: fetching " << git_url << "\n";
  git.fetch();
  if (ctx.base_commit.empty()) {
    ctx.base_commit = base->sha;  // the run was not in a git repository: start from the base branch
  } else if (!git.has_commit(ctx.base_commit)) {
    throw DeliveryError("commit " + ctx.base_commit + " of the run is not in " + git_url +
                        ": push it (or run maxcode optimize on a pushed commit) first");
  }
  const auto original = git.read_file(ctx.base_commit, in.git_path());
  if (!original) throw DeliveryError(in.git_path() + " does not exist at commit " + ctx.base_commit);
  ctx.target_hash = code_hash(lines_of(*original, line_begin, line_end));

  // Earlier PRs for this target.
  std::optional<PullRequest> open, latest_closed;
  for (const PullRequest& p : api.pulls_for_head(report.branch, "all")) {
    if (p.state == "open" && !open) open = p;
    if (p.state == "closed" && !latest_closed) latest_closed = p;
  }
  if (!open && latest_closed) {
    const auto meta = parse_metadata(latest_closed->body);
    const bool same_code = meta && meta->value("target_hash", std::string()) == ctx.target_hash;
    report.pr_number = latest_closed->number;
    report.pr_url = latest_closed->html_url;
    if (same_code && latest_closed->merged) {
      report.outcome = DeliveryOutcome::kAlreadyMerged;
      report.message = "PR #" + std::to_string(latest_closed->number) + " for this target was merged; nothing to do";
      return report;
    }
    if (same_code) {
      report.outcome = DeliveryOutcome::kIgnored;
      report.message = "PR #" + std::to_string(latest_closed->number) +
                       " was closed without merging and the function is unchanged since: not reopening it";
      return report;
    }
    if (!latest_closed->merged) ctx.superseded_pr = latest_closed->number;
    report.pr_number = 0;
    report.pr_url.clear();
  }

  // The branch: only ever rewritten when every commit on it is maxcode's.
  const auto tip = git.remote_branch(report.branch);
  if (tip) {
    std::vector<CommitInfo> foreign;
    for (const CommitInfo& c : git.own_commits(*tip, report.branch, ctx.base_commit))
      if (!made_by_maxcode(c, identity)) foreign.push_back(c);
    if (!foreign.empty()) {
      std::string list;
      for (std::size_t i = 0; i < foreign.size() && i < 5; ++i)
        list += (list.empty() ? "" : ", ") + foreign[i].sha.substr(0, 12) + " by " + sanitize_inline(foreign[i].author_name, 60);
      report.outcome = DeliveryOutcome::kForeignCommits;
      report.message = "branch " + report.branch + " has " + std::to_string(foreign.size()) +
                       " commit(s) maxcode did not make (" + list + "): left alone";
      if (open) {
        const std::string body = std::string(kForeignMarker) + "\nmaxcode has a new result for this function (run `" +
                                 in.run_id() + "`: " + short_result(in) + "), but the branch " + code_span(report.branch) +
                                 " has commits that maxcode did not make (" + list +
                                 "). maxcode never force-pushes over other people's work, so this PR was left as it is. "
                                 "To let maxcode update it, drop those commits from the branch; to keep your version, "
                                 "nothing needs to be done.\n";
        api.upsert_comment(open->number, kForeignMarker, body);
        report.pr_number = open->number;
        report.pr_url = open->html_url;
      }
      return report;
    }
    if (const auto b = api.branch(report.branch); b && b->is_protected) {
      report.outcome = DeliveryOutcome::kProtected;
      report.message = "branch " + report.branch + " is protected on GitHub: maxcode does not push to it";
      return report;
    }
  }

  if (!open) {
    int open_count = 0, last_hour = 0;
    for (const PullRequest& p : api.open_pulls()) open_count += p.head_ref.rfind("maxcode/", 0) == 0;
    const auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    for (const PullRequest& p : api.recent_pulls()) {
      if (p.head_ref.rfind("maxcode/", 0) != 0 || p.created_at.empty()) continue;
      try {
        last_hour += now - parse_github_time(p.created_at) < 3600;
      } catch (const std::exception&) {
      }
    }
    if (open_count >= options.max_open_prs || last_hour >= options.max_prs_per_hour) {
      report.outcome = DeliveryOutcome::kHeldBack;
      report.message = options.repo + " has " + std::to_string(open_count) + " open maxcode PR(s) and " +
                       std::to_string(last_hour) + " opened in the last hour (limits " + std::to_string(options.max_open_prs) +
                       " and " + std::to_string(options.max_prs_per_hour) + "): not opening another now";
      return report;
    }
  }

  const PrText text = compose_pr(in, ctx);
  report.title = text.title;
  report.body = text.body;
  report.trimmed = text.trimmed;
  report.commit = git.commit_patch(ctx.base_commit, in.patch, identity, commit_message(in, text), commit_time(in));
  if (!tip || *tip != report.commit) {
    log << "pr: pushing " << report.commit.substr(0, 12) << " to " << report.branch << "\n";
    git.push(report.commit, report.branch, /*force=*/tip.has_value());  // only maxcode's commits are replaced
    report.pushed = true;
  }

  PullRequest pr;
  if (open) {
    const bool text_changed = open->title != text.title || open->body != text.body;
    pr = text_changed ? api.update_pull(open->number, text.title, text.body) : *open;
    report.outcome = text_changed || report.pushed ? DeliveryOutcome::kUpdated : DeliveryOutcome::kUnchanged;
    if (report.pushed)
      api.upsert_comment(pr.number, kUpdateMarker,
                         std::string(kUpdateMarker) + "\nUpdated by maxcode run `" + in.run_id() + "` (commit " +
                             report.commit.substr(0, 12) + "): " + short_result(in) +
                             ". The description shows the new measurements.\n");
  } else {
    pr = api.create_pull(text.title, text.body, report.branch, base_branch);
    report.outcome = DeliveryOutcome::kCreated;
  }
  report.pr_number = pr.number;
  report.pr_url = pr.html_url;

  for (const auto& label : options.labels) {
    const LabelStyle style = label_style(label);
    api.ensure_label(label, style.color, style.description);
  }
  api.add_labels(pr.number, options.labels);

  if (options.check_run && tokens && tokens->is_app() && report.outcome != DeliveryOutcome::kUnchanged) {
    // A check on the commit shows the measurement next to CI. It is a courtesy: a
    // failure here does not undo the delivery.
    try {
      CheckRun run;
      run.head_sha = report.commit;
      run.conclusion = "success";
      run.title = in.function() + ": " + short_result(in);
      run.summary = "maxcode measured " + short_result(in) + " for " + code_span(in.function()) + "; see the PR for the evidence.";
      run.external_id = in.run_id();
      run.details_url = pr.html_url;
      api.create_check_run(run);
    } catch (const GithubError& e) {
      log << "pr: warning: no check run: " << e.what() << "\n";
    }
  }
  report.message = std::string(outcome_name(report.outcome)) + " PR #" + std::to_string(pr.number) + " " + pr.html_url;
  return report;
}

}  // namespace maxcode::bot
