#include "bot/service/operations/metric_catalog.h"

#include "bot/protocol/run_status.h"
#include "bot/service/queue/job_state.h"

namespace maxcode::bot::service {

namespace {

// The events the App subscribes to (app_manifest.cc) and the ones GitHub sends anyway.
const std::vector<std::string> kEvents{"push",      "issue_comment", "pull_request", "check_run", "check_suite",
                                       "installation", "installation_repositories", "ping"};
const std::vector<std::string> kActions{"event", "deliver", "report", "regressions"};

// One label's values crossed with another's: {{a, x}, {a, y}, {b, x}, ...}.
std::vector<Labels> cross(const std::string& first, const std::vector<std::string>& firsts, const std::string& second,
                          const std::vector<std::string>& seconds) {
  std::vector<Labels> out;
  for (const std::string& a : firsts)
    for (const std::string& b : seconds) out.push_back({{first, a}, {second, b}});
  return out;
}

std::vector<Labels> each(const std::string& label, const std::vector<std::string>& values) {
  std::vector<Labels> out;
  for (const std::string& v : values) out.push_back({{label, v}});
  return out;
}

// The queue's states by name, in their order: every one is a series from the start.
std::vector<std::string> job_state_names() {
  std::vector<std::string> names;
  for (JobState state : kJobStates) names.push_back(job_state_name(state));
  return names;
}

// What a runner may report of a job (bot/protocol/run_status.h).
std::vector<std::string> run_status_labels() {
  std::vector<std::string> names;
  for (std::string_view name : run_status_names()) names.emplace_back(name);
  return names;
}

std::vector<Labels> joined(std::vector<Labels> a, const std::vector<Labels>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

// A table, one family per entry: kept as written (clang-format would give each field a line).
// clang-format off
const std::vector<MetricFamily>& metric_catalog() {
  static const std::vector<MetricFamily> families{
      {"maxcode_webhooks_total", "counter", "webhook requests by event and result", {"event", "result"},
       // Requests that fail verification are counted under event "unverified": they do not
       // get to pick label values.
       joined(cross("event", kEvents, "result", {"accepted", "duplicate", "retried", "replayed", "malformed", "too-deep",
                                                  "no-delivery-id"}),
              cross("event", {"unverified"}, "result", {"unsigned", "bad-signature", "too-large", "no-event"}))},
      {"maxcode_webhook_seconds", "histogram", "time to answer a webhook request", {}, {{}}},
      {"maxcode_events_total", "counter", "webhook deliveries handled, by event and outcome", {"event", "outcome"},
       cross("event", kEvents, "outcome", {"job", "ignored", "deferred", "rejected", "github-error", "error"})},
      {"maxcode_event_handling_seconds", "histogram", "time to handle one delivery (GitHub calls included)", {"event"},
       each("event", kEvents)},
      {"maxcode_jobs", "gauge", "jobs by state", {"state"},
       each("state", job_state_names())},
      {"maxcode_job_duration_seconds", "histogram", "from queued to done", {"trigger"},
       each("trigger", {"comment", "push", "schedule"})},
      {"maxcode_jobs_claimed_total", "counter", "jobs leased to runners", {}, {{}}},
      {"maxcode_leases_expired_total", "counter", "jobs whose runner stopped sending heartbeats", {}, {{}}},
      {"maxcode_runner_results_total", "counter", "results reported by runners", {"status"},
       each("status", run_status_labels())},
      {"maxcode_runner_stale_total", "counter", "runner messages for a job whose lease they no longer hold", {"kind"},
       each("kind", {"heartbeat", "result"})},
      {"maxcode_runners_live", "gauge", "runners heard from within one lease period", {}, {{}}},
      {"maxcode_deliveries_total", "counter", "winners delivered, by outcome", {"outcome"},
       each("outcome", {"created", "updated", "unchanged", "ignored", "already-merged", "foreign-commits", "protected",
                        "held-back", "retry", "invalid-result", "error"})},
      {"maxcode_job_reports_total", "counter", "comment and check-run updates", {"result"},
       each("result", {"ok", "deferred", "error"})},
      {"maxcode_commands_total", "counter", "comment commands received", {"command"},
       each("command", {"optimize", "status", "cancel", "invalid"})},
      {"maxcode_commands_refused_total", "counter", "commands from users without write access", {}, {{}}},
      {"maxcode_ignored_targets_total", "counter", "maxcode PRs closed without merging", {}, {{}}},
      {"maxcode_github_api_calls_total", "counter", "GitHub API requests by route and status",
       {"method", "route", "status"}, {}},
      {"maxcode_github_api_errors_total", "counter", "GitHub API answers that were errors or rate limits", {"status"},
       each("status", {"0", "403", "429", "500", "502", "503", "504"})},
      // No seed: 0 would read as "rate limit exhausted" until GitHub first answers.
      {"maxcode_github_rate_limit_remaining", "gauge", "x-ratelimit-remaining of the last GitHub answer", {"resource"},
       {}},
      {"maxcode_github_deferred_total", "counter",
       "GitHub work deferred (rate limits, server errors), by action and status", {"action", "status"},
       cross("action", kActions, "status", {"0", "403", "429", "500", "502", "503", "504", "git"})},
      {"maxcode_github_gave_up_total", "counter", "GitHub work given up after github.max_tries", {"action"},
       each("action", kActions)},
      {"maxcode_schedule_runs_total", "counter", "scheduled sweeps started", {"schedule"}, {}},
      {"maxcode_schedule_errors_total", "counter", "scheduled sweeps that could not start", {"schedule"}, {}},
      {"maxcode_regressions_reported_total", "counter", "regressions found by scheduled sweeps, by how reported",
       {"repository", "how"}, {}},
      {"maxcode_http_errors_total", "counter", "requests that ended in an exception", {"status"},
       each("status", {"400", "500"})},
  };
  return families;
}

void declare_service_metrics(Metrics& metrics) {
  for (const MetricFamily& f : metric_catalog()) {
    metrics.declare(f.name, f.type, f.help);
    for (const Labels& labels : f.seeded) {
      if (f.type == "counter") metrics.count(f.name, f.help, labels, 0);
      else if (f.type == "gauge") metrics.set(f.name, f.help, labels, 0);
      else metrics.declare_histogram(f.name, f.help, labels);
    }
  }
}
// clang-format on

}  // namespace maxcode::bot::service
