// What the service keeps of one job's run (Job::result; the jobs table's result column):
// the runner's upload as runners/runner_protocol.cc stored it, and, once the job is
// delivered, what results/result_delivery.cc did with each target. The store holds its
// JSON form; everything else reads and writes the typed value. docs/service.md "A job's
// stored result" lists the fields.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/job/job_record.h"

namespace maxcode::bot::service {

// What delivery did with one target's result.
struct TargetDelivery {
  std::string target;   // the function
  std::string outcome;  // created, updated, unchanged, ... (docs/delivery.md), or no-winner, invalid-result, error
  std::string pr;       // the pull request's URL, when there is one
};

struct JobResult {
  // The runner's upload.
  std::string dir;                   // its folder: DATA/jobs/ID/attempt-N; empty: no result yet
  int exit_code = -1;                // of `maxcode run`
  std::string log;                   // the end of its log
  std::vector<std::string> targets;  // slugs, one folder each under dir/targets
  nlohmann::json job;                // job.json as the runner sent it (runner/job/job_record.h); null: none
  // Added by delivery.
  std::vector<TargetDelivery> deliveries;
  std::map<std::string, double> speedups;  // function -> confirmed speedup (median), of delivered winners
  std::optional<int> history_rows;         // a sweep's rows recorded in the history
  // A stored document this service cannot read (another version's, a damaged row): why.
  // The fields above stay empty; pages say so instead of failing.
  std::string unreadable;

  bool empty() const { return dir.empty() && unreadable.empty(); }
  // job.json's error: `maxcode run`'s own cause of a failure; "" when it recorded none.
  std::string run_error() const;
  // job.json's targets; entries of another runner version's shape are left out.
  std::vector<TargetRecord> target_records() const;
};

// null for an empty result, so that the column keeps its meaning ("no result yet").
nlohmann::json to_json(const JobResult& result);
// Reads what to_json wrote; a document it cannot read gives a result whose `unreadable`
// names the field ("deliveries[0].target: expected a string, got a number").
JobResult job_result_from_json(const nlohmann::json& j);
// The same from the stored text; text that is not JSON is named as unreadable too.
JobResult job_result_from_text(const std::string& text);

}  // namespace maxcode::bot::service
