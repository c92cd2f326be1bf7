#include "bot/service/runners/runner_protocol.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "bot/protocol/run_status.h"
#include "bot/service/intake/http_server.h"
#include "bot/service/intake/webhook_signature.h"
#include "bot/service/schedule/regression_report.h"
#include "runner/store/history.h"
#include "runner/util/files.h"
#include "runner/util/json_io.h"
#include "runner/util/slug.h"

namespace maxcode::bot::service {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

void reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(dump_json(body), "application/json");
}

// The request's body as a JSON object; BadRequest (400) naming the endpoint otherwise.
// parse_json_input refuses nesting past 512 levels before building it, so a body of
// 25 MB of `[` costs no more memory than its text.
json request_body(const httplib::Request& req, const std::string& endpoint) {
  json body;
  try {
    body = parse_json_input(req.body, endpoint);
  } catch (const JsonInputError& e) {
    throw BadRequest(e.what());
  }
  if (!body.is_object()) throw BadRequest(endpoint + ": expected a JSON object");
  return body;
}

// body[name], or `fallback` when absent or null; BadRequest when of another type.
template <class T>
T field(const json& body, const std::string& endpoint, const std::string& name, T fallback) {
  const auto it = body.find(name);
  if (it == body.end() || it->is_null()) return fallback;
  bool ok;
  const char* expected;
  if constexpr (std::is_same_v<T, std::string>) ok = it->is_string(), expected = "a string";
  else if constexpr (std::is_integral_v<T>) ok = it->is_number_integer(), expected = "an integer";
  else ok = it->is_number(), expected = "a number";
  if (!ok) throw BadRequest(endpoint + ": " + name + ": expected " + expected);
  return it->get<T>();
}

// The job id in the path; 0 (no such job) when it does not fit.
std::int64_t path_id(const httplib::Request& req) {
  try {
    return std::stoll(req.matches[1]);
  } catch (const std::exception&) {
    return 0;
  }
}

const char* kResultFiles[] = {"result.json", "patch.diff", "report.md", "report.html", "trajectory.jsonl", "job.json"};

}  // namespace

RunnerProtocol::RunnerProtocol(ServiceContext& context, std::string runner_token)
    : context_(context), token_(std::move(runner_token)) {}

bool RunnerProtocol::authorized(const std::string& authorization) const {
  const std::string prefix = "Bearer ";
  if (token_.empty() || authorization.rfind(prefix, 0) != 0) return false;
  return constant_time_equal(authorization.substr(prefix.size()), token_);
}

void RunnerProtocol::notify() {
  std::lock_guard lock(mutex_);
  ++generation_;
  wake_.notify_all();
}

void RunnerProtocol::stop() {
  std::lock_guard lock(mutex_);
  stopping_ = true;
  wake_.notify_all();
}

json RunnerProtocol::job_document(const ServiceConfig& config, const Job& job) {
  json d{{"repository", config.git_url_for(job.repo)},
         {"ref", job.commit},
         {"max_targets", config.max_targets},
         {"budget", config.budget},
         {"delivery", {{"mode", "none"}}},  // the service delivers, not the job

         {"policy", job.policy}};
  if (!job.target.empty()) d["targets"] = json::array({job.target});
  return d;
}

json RunnerProtocol::document_for(const Job& job) const {
  json d = job_document(context_.config, job);
  // A scheduled sweep measures its targets on the previous night's commit too, side by
  // side (runner/job/regression_check.h): nights apart, the machine's load differs.
  // The previous scheduled job's commit comes from the queue (its history rows may still
  // be on their way: they are written when its results are delivered).
  if (job.trigger != "schedule") return d;
  std::string before;
  double latest = -1;
  for (const Job& other : context_.queue.jobs(job.repo))
    if (other.trigger == "schedule" && other.id != job.id && other.created_at < job.created_at &&
        other.created_at > latest) {
      latest = other.created_at;
      before = other.commit;
    }
  if (before.empty() && fs::exists(context_.history))
    before = HistoryStore(context_.history).previous_commit(job.repo, sweep_night(job));
  if (!before.empty() && before != job.commit) d["compare_with"] = before;
  return d;
}

void RunnerProtocol::add_routes(httplib::Server& server) {
  server.Post("/api/runner/claim", [this](const httplib::Request& req, httplib::Response& res) { claim(req, res); });
  server.Post(R"(/api/runner/jobs/(\d+)/heartbeat)",
              [this](const httplib::Request& req, httplib::Response& res) { heartbeat(req, res); });
  server.Post(R"(/api/runner/jobs/(\d+)/result)",
              [this](const httplib::Request& req, httplib::Response& res) { result(req, res); });
}

// A long poll: a job this runner may take, leased to it, or 204 when none came in wait_s.
void RunnerProtocol::claim(const httplib::Request& req, httplib::Response& res) {
  if (!authorized(req.get_header_value("Authorization"))) return reply(res, 401, {{"error", "runner token required"}});
  const json body = request_body(req, "claim");
  if (!body.contains("runner") || !body["runner"].is_string() || !safe_result_name(body["runner"].get<std::string>()))
    return reply(res, 400, {{"error", "claim: expected {runner: NAME, labels: [...], wait_s: N}"}});
  const std::string runner = body["runner"];
  std::vector<std::string> labels;
  if (body.contains("labels") && body["labels"].is_array())
    for (const auto& l : body["labels"])
      if (l.is_string()) labels.push_back(l);
  const double wait_s = std::clamp(field(body, "claim", "wait_s", 0.0), 0.0, context_.config.long_poll_s);
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(wait_s));
  // A runner started for one job (the Slurm backend) claims that job or none. Pull
  // runners are not used beside Slurm: a job must run where its batch job was given
  // its resources, and once only.
  const std::int64_t only = field(body, "claim", "job", std::int64_t{0});
  if (only == 0 && context_.config.slurm.enabled)
    return reply(res, 409,
                 {{"error",
                   "this service runs its jobs through Slurm (slurm in its config); a runner claims "
                   "only the job it was started for (maxcode runner --job ID)"}});
  context_.queue.runners.seen(runner, labels, 0);
  for (;;) {
    if (only) {
      // Gone for good (cancelled, finished, or run by another attempt): the runner stops.
      const auto job = context_.queue.job(only);
      if (!job || job->state != JobState::kQueued)
        return reply(res, 410,
                     {{"error", "job " + std::to_string(only) + " is " +
                                    (job ? job_state_name(job->state) : "unknown") + ": nothing to run"}});
    }
    std::uint64_t seen;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return reply(res, 503, {{"error", "the service is shutting down"}});
      seen = generation_;
    }
    if (auto claim = context_.queue.claim(runner, labels, only)) return hand_out(*claim, runner, labels, res);
    std::unique_lock lock(mutex_);
    if (std::chrono::steady_clock::now() >= deadline) break;
    // Wake on a new job, or re-check now and then (a backoff may have passed).
    wake_.wait_until(lock, std::min(deadline, std::chrono::steady_clock::now() + std::chrono::seconds(1)),
                     [&] { return stopping_ || generation_ != seen; });
  }
  res.status = 204;
}

void RunnerProtocol::hand_out(const JobQueue::Claim& claim, const std::string& runner,
                              const std::vector<std::string>& labels, httplib::Response& res) {
  const Job& job = claim.job;
  json source{{"url", context_.config.git_url_for(job.repo)}, {"commit", job.commit}};
  try {
    source["token"] = context_.github.runner_token(job.installation_id, job.repo.substr(job.repo.find('/') + 1));
  } catch (const std::exception& e) {
    context_.queue.fail_attempt(job.id, claim.lease, std::string("no read token for the runner: ") + e.what());
    context_.log("runner", "job " + std::to_string(job.id) + ": " + e.what());
    return reply(res, 503, {{"error", "GitHub did not give a read token; the job goes back to the queue"}});
  }
  context_.queue.runners.seen(runner, labels, job.id);
  context_.metrics.count("maxcode_jobs_claimed_total", "jobs leased to runners");
  context_.log("runner", runner + " claimed job " + std::to_string(job.id) + " (" + job.repo + ", attempt " +
                             std::to_string(job.attempts) + ")");
  if (context_.report) context_.report(job.id);
  reply(res, 200,
        {{"job",
          {{"id", job.id},
           {"lease", claim.lease},
           {"attempt", job.attempts},
           {"lease_s", context_.queue.options().lease_s},
           {"document", document_for(job)},
           {"source", source}}}});
}

void RunnerProtocol::heartbeat(const httplib::Request& req, httplib::Response& res) {
  if (!authorized(req.get_header_value("Authorization"))) return reply(res, 401, {{"error", "runner token required"}});
  const std::int64_t id = path_id(req);
  const json body = request_body(req, "heartbeat");
  const std::string lease = field(body, "heartbeat", "lease", std::string());
  switch (context_.queue.heartbeat(id, lease)) {
    case JobQueue::Lease::kHeld: {
      if (auto job = context_.queue.job(id)) context_.queue.runners.alive(job->runner, id);
      return reply(res, 200, {{"state", "held"}});
    }
    case JobQueue::Lease::kCancel:
      return reply(res, 200, {{"state", "cancel"}});
    case JobQueue::Lease::kLost:
      break;
  }
  context_.metrics.count("maxcode_runner_stale_total", "runner messages for a job whose lease they no longer hold",
                         {{"kind", "heartbeat"}});
  reply(res, 409, {{"state", "lost"}});
}

void RunnerProtocol::result(const httplib::Request& req, httplib::Response& res) {
  if (!authorized(req.get_header_value("Authorization"))) return reply(res, 401, {{"error", "runner token required"}});
  const std::int64_t id = path_id(req);
  const json body = request_body(req, "result");
  if (!body.contains("lease") || !body["lease"].is_string() || !body.contains("status"))
    return reply(res, 400, {{"error", "result: expected {lease, status, ...}"}});
  const std::string lease = body["lease"], status = field(body, "result", "status", std::string());
  const std::string error = field(body, "result", "error", std::string("the runner failed"));
  const auto job = context_.queue.job(id);
  auto stale = [&] { stale_result(id, res); };
  if (!job || job->lease != lease || job->state != JobState::kRunning) return stale();
  const std::optional<RunStatus> reported = run_status_named(status);
  if (!reported) return reply(res, 400, {{"error", "status must be finished, failed or cancelled"}});
  switch (*reported) {
    case RunStatus::kCancelled:
      if (!context_.queue.acknowledge_cancel(id, lease)) return stale();
      break;
    case RunStatus::kFailed:
      if (!context_.queue.fail_attempt(id, lease, error)) return stale();
      context_.jobs_changed();
      break;
    case RunStatus::kFinished:
      if (!store_finished(id, *job, body, res)) return;
      break;
  }
  context_.queue.runners.alive(job->runner, 0);
  context_.metrics.count("maxcode_runner_results_total", "results reported by runners", {{"status", status}});
  context_.log("runner", "job " + std::to_string(id) + ": " + status);
  if (context_.report) context_.report(id);
  reply(res, 200, {{"ok", true}});
}

void RunnerProtocol::stale_result(std::int64_t id, httplib::Response& res) {
  context_.metrics.count("maxcode_runner_stale_total", "runner messages for a job whose lease they no longer hold",
                         {{"kind", "result"}});
  context_.log("runner", "job " + std::to_string(id) + ": result from a runner that no longer holds it; dropped");
  reply(res, 409, {{"error", "this runner no longer holds the job"}});
}

// A finished attempt: its files first, then the state change. A crash in between leaves
// a directory that the next attempt's replaces, never a job whose results are missing.
bool RunnerProtocol::store_finished(std::int64_t id, const Job& job, const json& body, httplib::Response& res) {
  const fs::path dir = context_.data_dir / "jobs" / std::to_string(id) / ("attempt-" + std::to_string(job.attempts));
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  fs::create_directories(dir / "targets");
  std::vector<std::string> targets;
  if (body.contains("targets") && body["targets"].is_object())
    for (const auto& [slug, files] : body["targets"].items()) {
      if (!safe_result_name(slug) || !files.is_object()) {
        reply(res, 400, {{"error", "bad target name " + slug}});
        return false;
      }
      for (const auto& [name, text] : files.items()) {
        if (std::find(std::begin(kResultFiles), std::end(kResultFiles), name) == std::end(kResultFiles) ||
            !text.is_string()) {
          reply(res, 400, {{"error", "targets." + slug + ": unexpected file " + name}});
          return false;
        }
        write_text(dir / "targets" / slug / name, text.get<std::string>());
      }
      targets.push_back(slug);
    }
  if (body.contains("job") && body["job"].is_object()) write_text(dir / "job.json", dump_json(body["job"], 2));
  JobResult result;
  result.dir = dir.string();
  result.exit_code = field(body, "result", "exit_code", -1);
  result.log = field(body, "result", "log", std::string());
  result.targets = std::move(targets);
  if (body.contains("job")) result.job = body["job"];
  if (!context_.queue.complete(id, body["lease"].get<std::string>(), result)) {
    fs::remove_all(dir, ignored);
    stale_result(id, res);
    return false;
  }
  context_.jobs_changed();
  return true;
}

}  // namespace maxcode::bot::service
