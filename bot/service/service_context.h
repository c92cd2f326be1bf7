// What every handler of the service works with: the config, the durable queue, the
// metrics, GitHub as the App, the log, and a way to wake runners waiting for work.
#pragma once

#include <filesystem>
#include <cstdint>
#include <functional>

#include "bot/service/app/github_access.h"
#include "bot/service/app/github_retry.h"
#include "bot/service/queue/job_queue.h"
#include "bot/service/operations/link_signature.h"
#include "bot/service/operations/metrics.h"
#include "bot/service/service_config.h"
#include "bot/service/operations/service_log.h"

namespace maxcode::bot::service {

struct ServiceContext {
  const ServiceConfig& config;
  JobQueue& queue;
  Metrics& metrics;
  GithubAccess& github;
  ServiceLog& log;
  std::filesystem::path data_dir;
  std::function<void()> jobs_changed = {};  // wakes long-polling runners and the delivery worker
  // Updates the job's comment and check run on the reporter thread (GitHub calls stay
  // off the request threads); empty = report_job() at once.
  std::function<void(std::int64_t job_id)> report = {};
  // GitHub work deferred after a rate limit or a server error (github_retry.h); null =
  // such failures are not retried.
  DeferredWork* deferred = nullptr;
  // The sweeps' history store (runner/store/history.h).
  std::filesystem::path history = {};
  // A person cancelled the job (`/maxcode cancel`), after the queue took it: the backend
  // that runs it lets go (the Slurm backend cancels its pending batch job); empty = none.
  std::function<void(std::int64_t job_id)> job_cancelled = {};
  // Signs the links to each job's page (check runs' Details); null = no such links.
  const LinkSigner* links = nullptr;
};

}  // namespace maxcode::bot::service
