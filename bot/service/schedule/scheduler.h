// Scheduled sweeps (service config `schedules`): at each time a schedule's cron
// expression names, in its time zone, one job per repository (the schedule's, or every
// repository of its installation) for the head of the default branch, trigger
// "schedule". After downtime a schedule that missed one or more times runs once, not
// once per missed time. A repository never runs two jobs at once (the queue's claim
// rule), and a sweep of a commit that was already swept finds that job instead of
// making another (the idempotency key).
#pragma once

#include <string>
#include <vector>

#include "bot/service/schedule/cron.h"
#include "bot/service/service_context.h"

namespace maxcode::bot::service {

class Scheduler {
 public:
  // Parses every schedule; throws ServiceConfigError naming schedules[i] and the problem.
  explicit Scheduler(ServiceContext& context);
  // Starts the due sweeps; returns the jobs queued. Called every few seconds.
  int tick();

 private:
  struct Entry {
    ScheduleConfig config;
    CronExpression cron;
    TimeZone zone;
  };
  int sweep(const Entry& entry);
  ServiceContext& context_;
  std::vector<Entry> entries_;
};

}  // namespace maxcode::bot::service
