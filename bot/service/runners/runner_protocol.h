// The runner protocol, server side (docs/service.md "Runner protocol"). Runners
// authenticate with a bearer token (the service's runner token) and speak JSON:
//
//   POST /api/runner/claim             {runner, labels, wait_s, job?}
//        200 {job: {id, lease, attempt, lease_s, document, source: {url, token, commit}}}
//        204 when no job came within wait_s (long poll)
//        `job`: only that job (a runner Slurm started for it); 410 when it is no longer
//        queued (cancelled, finished, taken). Without `job`, 409 where Slurm runs the jobs.
//   POST /api/runner/jobs/ID/heartbeat {lease}      200 {state: held|cancel}, 409 lost
//   POST /api/runner/jobs/ID/result    {lease, status: finished|failed|cancelled,
//        exit_code, log, job, targets: {SLUG: {FILE: text}}}   200, 409 not the holder
//
// `document` is the job input of `maxcode run --job` with delivery "none"; `source`
// carries a token that can only read that one repository and expires within the hour.
// Results land under DATA_DIR/jobs/ID/attempt-N/ before the job moves on, so a crash
// right after the answer loses nothing; a result from a runner that no longer holds the
// lease is dropped (409) and counted.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "bot/service/service_context.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}

namespace maxcode::bot::service {

class RunnerProtocol {
 public:
  RunnerProtocol(ServiceContext& context, std::string runner_token);
  void add_routes(httplib::Server& server);
  // Wakes runners waiting in claim (a job was queued).
  void notify();
  // Ends every long poll (shutdown).
  void stop();

  // The job input document a runner gets for `job`.
  static nlohmann::json job_document(const ServiceConfig& config, const Job& job);
  // job_document, plus what only the service knows (a sweep's previous commit).
  nlohmann::json document_for(const Job& job) const;

 private:
  bool authorized(const std::string& authorization) const;
  // The three routes: claim (a long poll), heartbeat, result.
  void claim(const httplib::Request& req, httplib::Response& res);
  void hand_out(const JobQueue::Claim& claim, const std::string& runner, const std::vector<std::string>& labels,
                httplib::Response& res);
  void heartbeat(const httplib::Request& req, httplib::Response& res);
  void result(const httplib::Request& req, httplib::Response& res);
  // Writes a finished attempt's files and completes the job; false once it has replied.
  bool store_finished(std::int64_t id, const Job& job, const nlohmann::json& body, httplib::Response& res);
  void stale_result(std::int64_t id, httplib::Response& res);
  ServiceContext& context_;
  std::string token_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::uint64_t generation_ = 0;
  bool stopping_ = false;
};

}  // namespace maxcode::bot::service
