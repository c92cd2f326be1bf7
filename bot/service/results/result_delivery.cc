#include "bot/service/results/result_delivery.h"

#include <cstdio>
#include <map>
#include <filesystem>
#include <sstream>

#include "bot/delivery/deliver.h"
#include "bot/delivery/delivery_input.h"
#include "bot/delivery/sanitize.h"
#include "bot/github/git_remote.h"
#include "bot/service/app/github_retry.h"
#include "bot/service/schedule/regression_report.h"
#include "runner/util/files.h"

namespace maxcode::bot::service {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::string speedup_text(const RatioInterval& s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2fx (95%% interval %.2f-%.2f)", s.median, s.low, s.high);
  return buf;
}

}  // namespace

std::string why_no_winner(const RunResult& result) {
  if (result.fatal) return "the run stopped: " + *result.fatal;
  if (result.unconfirmed) return "the best candidate did not hold up in the confirmation run: " + *result.unconfirmed;
  std::map<std::string, int> verdicts;
  int total = 0;
  for (const ResultCandidate& c : result.candidates) {
    ++verdicts[verdict_name(c.evaluation.verdict)];
    ++total;
  }
  std::string text = "no candidate was significantly faster";
  if (total) {
    text += " (" + std::to_string(total) + " tried:";
    bool first = true;
    for (const auto& [v, n] : verdicts) {
      text += std::string(first ? " " : ", ") + std::to_string(n) + " " + v;
      first = false;
    }
    text += ")";
  }
  if (!result.stop_reason.empty()) text += "; the search ended: " + result.stop_reason;
  return text;
}

namespace {

// One job's delivery: each target's winner to a PR (or the reason there is none), then
// one summary, the job finished with it, and a sweep's rows into the history.
class JobDelivery {
 public:
  JobDelivery(ServiceContext& context, const Job& job) : context_(context), job_(job), result_(job.result) {}

  DeliveryStep run() {
    for (const std::string& slug : result_.targets)
      if (!deliver_target(slug)) return DeliveryStep::kRetryLater;
    finish();
    return DeliveryStep::kFinished;
  }

 private:
  // False when GitHub said to come back later: the job stays delivering, and the next
  // try finds the branch and PR made so far.
  bool deliver_target(const std::string& slug) {
    const fs::path target_dir = fs::path(result_.dir) / "targets" / slug;
    RunResult target_result;
    try {
      const std::string label = "targets/" + slug + "/result.json";
      const auto text = try_read_text(target_dir / "result.json");
      const json parsed = text ? json::parse(*text, nullptr, false) : json();
      if (!text || parsed.is_discarded()) throw RunResultError(label + (text ? ": not JSON" : ": missing"));
      target_result = run_result_from_json(parsed, label);
    } catch (const RunResultError& e) {
      lines_.push_back("- `" + slug + "`: no readable result.json (" + sanitize_inline(e.what(), 300) + ")");
      return true;
    }
    const std::string& function = target_result.target.function;
    if (!target_result.winner || !fs::exists(target_dir / "patch.diff")) {
      lines_.push_back("- `" + function + "`: " + why_no_winner(target_result));
      deliveries_.push_back({function, "no-winner", ""});
      return true;
    }
    DeliverOptions options;
    options.result_dir = target_dir;
    options.repo = job_.repo;
    options.git_url = context_.config.git_url_for(job_.repo);
    options.client = context_.github.client_options();
    options.check_run = false;  // the job's own check run reports it (job_report.h)
    options.work_dir = context_.data_dir / "tmp";
    fs::create_directories(options.work_dir);
    std::ostringstream log;
    try {
      const DeliveryReport report = deliver(options, context_.github.installation(job_.installation_id), log);
      delivered(function, *target_result.winner, report);
    } catch (const DeliveryError& e) {
      lines_.push_back("- `" + function + "`: the result could not be delivered: " + e.what());
      deliveries_.push_back({function, "invalid-result", ""});
    } catch (const std::exception& e) {
      // A rate limit, a 5xx, a failed push: tried again when GitHub said it may be.
      if (defer_after_failure(context_, "deliver", std::to_string(job_.id), e)) {
        context_.metrics.count("maxcode_deliveries_total", "winners delivered, by outcome", {{"outcome", "retry"}});
        return false;
      }
      lines_.push_back("- `" + function + "`: GitHub refused the delivery: " + e.what());
      deliveries_.push_back({function, "error", ""});
    }
    return true;
  }

  void delivered(const std::string& function, const ResultWinner& winner, const DeliveryReport& report) {
    const std::string name = outcome_name(report.outcome);
    context_.metrics.count("maxcode_deliveries_total", "winners delivered, by outcome", {{"outcome", name}});
    deliveries_.push_back({function, name, report.pr_url});
    speedups_[function] = winner.confirmed.speedup.median;
    std::string line = "- `" + function + "`: " + speedup_text(winner.confirmed.speedup) + "; " + report.message;
    if (!report.pr_url.empty() && report.message.find(report.pr_url) == std::string::npos) line += " " + report.pr_url;
    if (!report.pr_url.empty() && pr_url_.empty()) pr_url_ = report.pr_url;
    lines_.push_back(line);
    if (outcome_ == "no-winner" || report.pr_url == pr_url_) outcome_ = name;
  }

  // No target: the run found none, or it failed. The cause first and whole (job.json's
  // "error", as `maxcode run` recorded it); the log's tail after it, folded.
  std::string no_target_summary(int exit_code) {
    std::string summary = exit_code == 0 ? "The job found no target to optimize."
                                         : "`maxcode run` failed (exit code " + std::to_string(exit_code) + ")";
    if (const std::string cause = result_.run_error(); exit_code != 0 && !cause.empty())
      summary += ": " + sanitize_markdown(cause);
    const std::string& log = result_.log;
    if (exit_code != 0 && !log.empty())
      summary += "\n\n<details><summary>The end of the job's log</summary>\n\n" +
                 code_block(log.substr(log.size() > 1500 ? log.size() - 1500 : 0)) + "\n</details>";
    outcome_ = exit_code == 0 ? "no-target" : "run-failed";
    return summary;
  }

  void finish() {
    const int exit_code = result_.exit_code;
    std::string summary;
    if (!result_.unreadable.empty()) {
      summary = "The job's result could not be read: " + sanitize_markdown(result_.unreadable) + "\n";
      outcome_ = "invalid-result";
    } else if (result_.targets.empty()) {
      summary = no_target_summary(exit_code);
    }
    for (const auto& l : lines_) summary += l + "\n";
    JobResult finished = result_;
    finished.deliveries = deliveries_;
    finished.speedups = speedups_;
    const std::string id = std::to_string(job_.id);
    if (job_.trigger == "schedule") {
      // A sweep: into the history, and its regressions to be reported (durably queued
      // before the job is done, so a crash in between reports them after the restart).
      try {
        finished.history_rows = record_sweep(context_, job_, deliveries_);
        if (context_.deferred) context_.deferred->add("regressions", id);
      } catch (const std::exception& e) {
        context_.log("sweep", "job " + id + " (" + job_.repo + "): not recorded in the history " +
                                  context_.history.string() + ": " + e.what());
      }
    }
    if (context_.deferred) context_.deferred->remove("deliver", id);
    context_.queue.finish(job_.id, exit_code == 0 || !result_.targets.empty() ? JobState::kDone : JobState::kFailed,
                          outcome_, summary, pr_url_, finished);
    context_.metrics.observe("maxcode_job_duration_seconds", "from queued to done", {{"trigger", job_.trigger}},
                             context_.queue.now() - job_.created_at);
    context_.log("deliver", "job " + id + " (" + job_.repo + "): " + outcome_ + (pr_url_.empty() ? "" : " " + pr_url_));
    if (context_.report) context_.report(job_.id);
  }

  ServiceContext& context_;
  const Job& job_;
  const JobResult& result_;
  std::vector<std::string> lines_;  // one per target, for the summary
  std::string pr_url_, outcome_ = "no-winner";
  std::vector<TargetDelivery> deliveries_;
  std::map<std::string, double> speedups_;
};

}  // namespace

DeliveryStep deliver_job_results(ServiceContext& context, std::int64_t id) {
  const auto job = context.queue.job(id);
  if (!job || job->state != JobState::kDelivering) return DeliveryStep::kFinished;
  return JobDelivery(context, *job).run();
}

}  // namespace maxcode::bot::service
