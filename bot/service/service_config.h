// The service's configuration (`maxcode serve --config service.json`), read strictly:
// an unknown field, a wrong type or a bad value is an error naming the file and the
// field (with a suggestion for a typo). Secrets are never in the file: it names the
// environment variables that hold them. Reference: docs/service.md.
#pragma once

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/util/error.h"

namespace maxcode::bot::service {

class ServiceConfigError : public Error {
 public:
  using Error::Error;
};

struct ScheduleConfig {
  std::string name;        // unique; the key of its last run in the store
  std::string cron;        // five fields: minute hour day-of-month month day-of-week
  std::string time_zone = "UTC";
  std::string repository;  // OWNER/NAME, or empty with `installation`
  std::string installation;  // every repository of this installation
};

struct RepositoryConfig {
  bool push = false;                // a push to the default branch starts a job
  std::string policy;               // empty = the service's job.policy
  std::vector<std::string> labels;  // runner labels its jobs need; empty = job.labels
  std::string regressions = "check-run";  // sweeps: "issue" | "check-run" | "none"
};

// How long a client may take to send a request, and how many connections are served at
// once (http_server.h says why).
struct HttpLimits {
  double header_timeout_s = 10;    // request line and headers, from the first byte awaited
  double request_timeout_s = 60;   // the whole request, body included (25 MB at ~0.5 MB/s)
  double keep_alive_s = 2;         // an idle kept-alive connection is closed after this
  std::size_t max_connections = 1024;  // threads serving connections at once
};

// The Slurm backend (docs/service.md "Running on Slurm"): each job becomes one batch job
// that runs `maxcode runner --job ID` for it. Paths and the URL are as the cluster's
// nodes see them.
struct SlurmConfig {
  bool enabled = false;             // `slurm` in the config: jobs go to Slurm, not to pull runners
  std::string partition;            // empty = the cluster's default partition
  int gpus = 0;                     // --gres=gpu:N per job; 0 = no GPU asked for
  // The time limit: the job's budget.wall_s plus setup_s (checkout, build, profiling,
  // upload); time_limit_s where the budget names no wall_s.
  double setup_s = 1800;
  double time_limit_s = 6 * 3600.0;
  std::vector<std::string> sbatch_args;  // added as they are (--account=..., --qos=...)
  std::vector<std::string> runner_args;  // added to `maxcode runner` (--work-dir on node-local disk)
  std::string maxcode;              // the binary on the nodes; empty = this service's own
  std::string server_url;           // how the nodes reach the service; empty = public_url, else listen
  std::filesystem::path output_dir; // batch output files; empty = DATA_DIR/jobs/ID/
  std::string job_name_prefix = "maxcode";  // Slurm job names: PREFIX-job-ID-ATTEMPT
};

struct ServiceConfig {
  std::string host = "127.0.0.1";
  int port = 8080;
  std::filesystem::path db = "maxcode-service.sqlite";
  // A PostgreSQL URL (postgresql://USER@HOST:PORT/DATABASE): the store that two or more
  // replicas share instead of the SQLite file `db`. Empty = `db`. Its password is never
  // here: store_password_env names the variable (or libpq's ~/.pgpass, or none).
  std::string store;
  std::string store_password_env = "MAXCODE_STORE_PASSWORD";
  std::filesystem::path data_dir;  // uploaded results; empty = "<db>.d"
  std::filesystem::path history;   // the sweeps' history store; empty = "<data_dir>/history.sqlite"
  std::string webhook_secret_env = "MAXCODE_WEBHOOK_SECRET";
  std::string admin_token_env = "MAXCODE_ADMIN_TOKEN";
  std::string runner_token_env = "MAXCODE_RUNNER_TOKEN";
  std::filesystem::path tls_cert, tls_key;  // both or neither; none = plain HTTP behind a proxy
  std::string public_url;                   // for links in check runs (each job's signed page)
  // How long a signed link to a job's page (a check run's Details) stays valid:
  // 30 days, longer than a pull request usually waits for its review.
  double details_link_ttl_s = 30 * 86400.0;

  // GitHub
  std::string api_url = "https://api.github.com";
  std::string app_id;
  std::filesystem::path app_key_file;
  std::string git_url;  // clone/push URL template with {owner} and {name}; empty = from api_url
  // GitHub saying "not now" (rate limits, 5xx): the work is deferred in the store for as
  // long as GitHub asks, at most this long, and given up after max_tries (github_retry.h).
  double max_retry_wait_s = 900;
  int max_tries = 8;

  std::size_t max_body_bytes = 25u << 20;  // GitHub sends at most 25 MB
  HttpLimits http;
  double lease_s = 120, backoff_s = 30;
  double work_lease_s = 120;  // a replica's hold on a delivery, a job's results, a sweep (job_queue.h)
  int max_attempts = 3;
  double long_poll_s = 25;

  // The job each trigger makes.
  std::string policy = "tune";
  int max_targets = 3;
  nlohmann::json budget = nlohmann::json::object();
  std::vector<std::string> labels;
  std::map<std::string, RepositoryConfig> repositories;  // by OWNER/NAME (lowercase)
  std::vector<ScheduleConfig> schedules;
  SlurmConfig slurm;

  const RepositoryConfig& repository(const std::string& full_name) const;
  std::string git_url_for(const std::string& full_name) const;
};

// Parses the document; `label` names it in errors (the file's path).
ServiceConfig parse_service_config(const nlohmann::json& document, const std::string& label);
ServiceConfig load_service_config(const std::filesystem::path& file);

// "HOST:PORT" -> host, port; throws ServiceConfigError naming `what`.
void parse_listen(const std::string& text, const std::string& what, std::string& host, int& port);

}  // namespace maxcode::bot::service
