// How the service's store behaves in time: leases, attempts, backoff, the replay window
// and its clock (tests move it). One set for every table (job_queue.h, delivery_log.h,
// schedule_runs.h).
#pragma once

#include <functional>

namespace maxcode::bot::service {

struct QueueOptions {
  double lease_s = 120;  // a runner that misses heartbeats for this long loses the job
  int max_attempts = 3;
  double backoff_s = 30;                  // first retry delay; doubles per attempt
  std::function<double()> now;            // seconds since the epoch (tests move time)
  double replay_window_s = 30 * 86400.0;  // webhook bodies are remembered this long (DeliveryLog::record)
  // How long a replica holds a webhook delivery it handles or a job whose results it
  // delivers, and a scheduled sweep it runs; a replica that dies holding one leaves it
  // to another after this long.
  double work_lease_s = 120;
};

}  // namespace maxcode::bot::service
