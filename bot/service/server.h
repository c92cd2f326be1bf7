// `maxcode serve`: the HTTP(S) server and the service's workers.
//
//   request threads   POST /webhooks/github (webhook_intake.h), the runner protocol
//                     (runner_protocol.h), GET /healthz, /metrics, / and /api/jobs
//   event worker      stored deliveries -> event handlers (event_router.h)
//   delivery worker   jobs with results -> pull requests (result_delivery.h)
//   reporter          job changes -> comment and check run (job_report.h)
//   housekeeper       expired leases back to the queue, queue gauges, the scheduler
// Everything durable is in the SQLite store, so any of them may die with the process
// and the next start continues. SIGTERM: stop taking requests, end long polls, let the
// workers finish the step they are in, exit 0.
#pragma once

#include <memory>
#include <string>

#include "bot/service/service_config.h"

namespace maxcode::bot::service {

struct ServeSecrets {
  std::string webhook_secret;  // required
  std::string admin_token;     // dashboard and /api/jobs; empty = they answer 403
  std::string runner_token;    // runner protocol; empty = it answers 401
  std::string store_password;  // PostgreSQL store (config.store); empty = none or libpq's own
};

class Service {
 public:
  Service(ServiceConfig config, ServeSecrets secrets);
  ~Service();
  // Binds the listening socket; returns the port (useful with port 0).
  int bind();
  // Serves until stop(); call after bind().
  void serve();
  void stop();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Runs the service until SIGTERM or SIGINT; returns the exit code. The secrets come from
// the CLI, which reads them from the variables the config names.
int run_service(const ServiceConfig& config, const ServeSecrets& secrets);

}  // namespace maxcode::bot::service
