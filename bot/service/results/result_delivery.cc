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

std::string speedup_text(const json& winner) {
  char buf[64];
  const json& s = winner.contains("speedup") ? winner["speedup"] : json();
  if (s.is_object() && s.contains("median") && s["median"].is_number()) {
    std::snprintf(buf, sizeof buf, "%.2fx (95%% interval %.2f-%.2f)", s["median"].get<double>(), s.value("low", 0.0),
                  s.value("high", 0.0));
    return buf;
  }
  if (s.is_number()) {
    std::snprintf(buf, sizeof buf, "%.2fx", s.get<double>());
    return buf;
  }
  return "faster";
}

}  // namespace

std::string why_no_winner(const json& result) {
  if (result.contains("fatal") && result["fatal"].is_string()) return "the run stopped: " + result["fatal"].get<std::string>();
  if (result.contains("unconfirmed") && result["unconfirmed"].is_string())
    return "the best candidate did not hold up in the confirmation run: " + result["unconfirmed"].get<std::string>();
  std::map<std::string, int> verdicts;
  int total = 0;
  if (result.contains("candidates") && result["candidates"].is_array())
    for (const auto& c : result["candidates"]) {
      ++verdicts[c.value("verdict", std::string("unknown"))];
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
  if (result.contains("stop_reason") && result["stop_reason"].is_string())
    text += "; the search ended: " + result["stop_reason"].get<std::string>();
  return text;
}

DeliveryStep deliver_job_results(ServiceContext& context, std::int64_t id) {
  const auto job = context.queue.job(id);
  if (!job || job->state != "delivering") return DeliveryStep::kFinished;
  const json& result = job->result;
  const fs::path dir = result.value("dir", std::string());
  std::vector<std::string> lines;
  std::string pr_url, outcome = "no-winner";
  json deliveries = json::array();
  json speedups = json::object();
  const int exit_code = result.value("exit_code", -1);

  std::vector<std::string> targets;
  if (result.contains("targets") && result["targets"].is_array())
    for (const auto& t : result["targets"])
      if (t.is_string()) targets.push_back(t);
  for (const std::string& slug : targets) {
    const fs::path target_dir = dir / "targets" / slug;
    json target_result = fs::exists(target_dir / "result.json")
                             ? json::parse(read_text(target_dir / "result.json"), nullptr, false)
                             : json();
    const std::string function = target_result.is_object() && target_result.contains("target")
                                     ? target_result["target"].value("function", slug)
                                     : slug;
    if (!target_result.is_object()) {
      lines.push_back("- `" + function + "`: no readable result.json");
      continue;
    }
    if (!target_result.contains("winner") || !target_result["winner"].is_object() || !fs::exists(target_dir / "patch.diff")) {
      lines.push_back("- `" + function + "`: " + why_no_winner(target_result));
      deliveries.push_back({{"target", function}, {"outcome", "no-winner"}});
      continue;
    }
    DeliverOptions options;
    options.result_dir = target_dir;
    options.repo = job->repo;
    options.git_url = context.config.git_url_for(job->repo);
    options.client = context.github.client_options();
    options.check_run = false;  // the job's own check run reports it (job_report.h)
    options.work_dir = context.data_dir / "tmp";
    fs::create_directories(options.work_dir);
    std::ostringstream log;
    try {
      const DeliveryReport report = deliver(options, context.github.installation(job->installation_id), log);
      const std::string name = outcome_name(report.outcome);
      context.metrics.count("maxcode_deliveries_total", "winners delivered, by outcome", {{"outcome", name}});
      deliveries.push_back({{"target", function}, {"outcome", name}, {"pr", report.pr_url}});
      const json& s = target_result["winner"].contains("speedup") ? target_result["winner"]["speedup"] : json();
      if (s.is_object() && s.contains("median") && s["median"].is_number()) speedups[function] = s["median"];
      else if (s.is_number()) speedups[function] = s;
      std::string line = "- `" + function + "`: " + speedup_text(target_result["winner"]) + "; " + report.message;
      if (!report.pr_url.empty() && report.message.find(report.pr_url) == std::string::npos) line += " " + report.pr_url;
      if (!report.pr_url.empty() && pr_url.empty()) pr_url = report.pr_url;
      lines.push_back(line);
      if (outcome == "no-winner" || report.pr_url == pr_url) outcome = name;
    } catch (const DeliveryError& e) {
      lines.push_back("- `" + function + "`: the result could not be delivered: " + e.what());
      deliveries.push_back({{"target", function}, {"outcome", "invalid-result"}});
    } catch (const std::exception& e) {
      // A rate limit, a 5xx, a failed push: the job stays delivering and is tried again
      // when GitHub said it may be; the next try finds the branch and PR made so far.
      if (defer_after_failure(context, "deliver", std::to_string(id), e)) {
        context.metrics.count("maxcode_deliveries_total", "winners delivered, by outcome", {{"outcome", "retry"}});
        return DeliveryStep::kRetryLater;
      }
      lines.push_back("- `" + function + "`: GitHub refused the delivery: " + e.what());
      deliveries.push_back({{"target", function}, {"outcome", "error"}});
    }
  }
  std::string summary;
  if (targets.empty()) {
    summary = exit_code == 0 ? "The job found no target to optimize." : "`maxcode run` failed (exit code " +
                                                                          std::to_string(exit_code) + ")";
    // The cause first and whole (job.json's "error", as `maxcode run` recorded it); the
    // log's tail after it, folded, for whoever wants the context.
    const json& record = result.contains("job") && result["job"].is_object() ? result["job"] : json::object();
    const json& cause = record.contains("error") ? record["error"] : json();
    if (exit_code != 0 && cause.is_string() && !cause.get<std::string>().empty())
      summary += ": " + sanitize_markdown(cause.get<std::string>());
    const std::string log = result.value("log", std::string());
    if (exit_code != 0 && !log.empty())
      summary += "\n\n<details><summary>The end of the job's log</summary>\n\n" +
                 code_block(log.substr(log.size() > 1500 ? log.size() - 1500 : 0)) + "\n</details>";
    outcome = exit_code == 0 ? "no-target" : "run-failed";
  } else {
    for (const auto& l : lines) summary += l + "\n";
  }
  json finished = result;
  finished["deliveries"] = deliveries;
  finished["speedups"] = speedups;
  if (job->trigger == "schedule") {
    // A sweep: into the history, and its regressions to be reported (durably queued
    // before the job is done, so a crash in between reports them after the restart).
    try {
      finished["history_rows"] = record_sweep(context, *job, deliveries);
      if (context.deferred) context.deferred->add("regressions", std::to_string(id));
    } catch (const std::exception& e) {
      context.log("sweep", "job " + std::to_string(id) + " (" + job->repo + "): not recorded in the history " +
                               context.history.string() + ": " + e.what());
    }
  }
  if (context.deferred) context.deferred->remove("deliver", std::to_string(id));
  context.queue.finish(id, exit_code == 0 || !targets.empty() ? "done" : "failed", outcome, summary, pr_url, finished);
  context.metrics.observe("maxcode_job_duration_seconds", "from queued to done", {{"trigger", job->trigger}},
                          context.queue.now() - job->created_at);
  context.log("deliver", "job " + std::to_string(id) + " (" + job->repo + "): " + outcome + (pr_url.empty() ? "" : " " + pr_url));
  if (context.report) context.report(id);
  return DeliveryStep::kFinished;
}

}  // namespace maxcode::bot::service
