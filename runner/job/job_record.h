// job.json: what a `maxcode run` did, target by target, written after every change of
// state (atomically), so that a killed job can be resumed from it and a service can
// read it at any time. docs/job.md documents the fields; keep the two in step.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/core/night.h"
#include "runner/job/budget_split.h"
#include "runner/job/job_input.h"
#include "runner/job/job_status.h"
#include "runner/util/stats.h"

namespace maxcode {

// What delivery did with a target's result (runner/job/delivery.h).
struct PrRecord {
  std::string outcome;  // "created", "updated", "unchanged", "dry-run", "ignored", ... (docs/delivery.md)
  int number = 0;
  std::string url, branch, title;
  std::string message;  // one line for people
};

struct TargetRecord {
  std::string slug;      // its result directory: targets/<slug>/
  std::string function;
  std::string signature;  // of the definition chosen (the name may have several)
  std::string file;      // repository-relative
  int line = 0;
  std::optional<double> share;  // of the profiled time; none when the input named it
  double self_ns = 0;           // its own time in the profile
  std::uint64_t samples = 0;    // profile samples behind self_ns
  // Google Benchmark programs: per benchmark, the entries the target drives, the only
  // ones its A/A and A/B sessions time (ProfileEntry::benchmark_entries).
  std::map<std::string, std::vector<std::string>> benchmark_entries;
  TargetStatus status = TargetStatus::kPending;
  TargetVerdict verdict = TargetVerdict::kNone;  // with kDone: kWinner or kNoWinner
  std::string reason;   // why no winner, why it failed or was skipped
  std::optional<RatioInterval> speedup;  // the confirmed one, with a winner
  double original_s = 0;                 // median time of the original (the A/A session)
  std::vector<double> original_rounds;   // that session's rounds, seconds
  std::optional<RegressionCheck> check;  // against input.compare_with (regression_check.h)
  std::optional<PrRecord> pr;
  std::string no_pr;    // why there is no PR ("no winner", "delivery: none", an error)
  Allowance allowance;  // its part of the job's budget
  Allowance spent;
};

struct JobRecord {
  JobInput input;
  JobStatus status = JobStatus::kRunning;
  std::string error;               // with kFailed: why
  std::string error_kind;          // "usage", "clone-unreachable", "clone-auth", "clone-missing-ref",
                                   // "no-config", "config", "profile", "nothing-in-scope", "budget"
  std::string repository;          // as given, without credentials
  std::string ref;                 // as resolved
  std::string commit;
  std::string started_at, finished_at;
  Allowance budget;                // the whole job's
  Allowance spent;
  std::vector<TargetRecord> targets;
  nlohmann::json profile = nlohmann::json::array();  // the profile's top entries
  int exit_code = 0;
};

nlohmann::json to_json(const TargetRecord& target);
nlohmann::json to_json(const JobRecord& job);
// One entry of job.json's targets, as to_json wrote it. Throws nlohmann::json::exception
// on a wrong shape (no slug or function, a field of the wrong type, a status or verdict
// of no known name: "status: unknown target status 'paused'").
TargetRecord target_record_from_json(const nlohmann::json& j);
// Reads what to_json wrote (for --resume). Throws std::runtime_error naming the file
// (and the field, for a status of no known name).
JobRecord read_job_record(const std::filesystem::path& file);
// Atomically: a kill never leaves half a job.json.
void write_job_record(const std::filesystem::path& file, const JobRecord& job);

// "src-sum-cpp--sum_squares": a directory name per target.
std::string target_slug(const std::string& file, const std::string& function);

}  // namespace maxcode
