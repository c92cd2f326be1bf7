// The job's input document: what `maxcode run` works on, in one JSON form that the
// command line, the service, the Action and CMake all hand it (`maxcode run --job
// FILE`). docs/schema/job-input.schema.json is its JSON Schema and docs/job.md
// documents every field; keep the three in step. It holds no secret: tokens come from
// the environment variable it names.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/core/search_choices.h"
#include "runner/util/error.h"

namespace maxcode {

class JobInputError : public Error {
 public:
  using Error::Error;
};

// The whole job's budget, split across its targets (budget_split.h). Absent fields
// default from the project's search settings times the number of targets.
struct Budget {
  std::optional<int> evaluations;   // candidates evaluated, >= 1
  std::optional<double> wall_s;     // wall time of the searches, > 0
  long tokens = 0;                  // LLM tokens; 0: no limit
  double dollars = 0;               // LLM dollars; 0: no limit
  double gpu_s = 0;                 // A/B timing seconds (GPU-seconds on a GPU); 0: no limit

  bool operator==(const Budget&) const = default;
};

enum class DeliveryMode { kPr, kDryRun, kNone };
const char* delivery_mode_name(DeliveryMode mode);

struct DeliveryInput {
  DeliveryMode mode = DeliveryMode::kNone;
  std::string repo;      // OWNER/NAME on GitHub; required for "pr", optional for "dry-run"
  std::string base;      // base branch; empty: the repository's default
  std::string api_url = "https://api.github.com";
  std::string git_url;   // push URL; empty: from api_url and repo

  bool operator==(const DeliveryInput&) const = default;
};

struct JobInput {
  std::string repository;             // URL (https://, http://, ssh://, git@host:, file://) or a local path
  std::string ref;                    // branch, tag or commit; empty: the remote's HEAD
  std::string config;                 // project file inside the repository; empty: .maxcode.json
  std::vector<std::string> targets;   // functions; empty: the hottest units by profile
  int max_targets = 3;
  double min_share = 0.05;            // a profiled target takes at least this share of the time
  Budget budget;
  std::optional<SearchPolicy> policy;  // overrides search.policy
  std::string replay_dir;             // overrides search.replay_dir (inside the repository)
  std::string git_token_env = "MAXCODE_GIT_TOKEN";  // HTTPS token variable (GITHUB_TOKEN if unset)
  std::string compare_with;           // a nightly sweep's previous commit: each target's own time is
                                      // measured on both, side by side (regression_check.h)
  DeliveryInput delivery;

  bool operator==(const JobInput&) const = default;
};

// What a job says when its "policy" names none (policy_named, search_choices.h, gave
// nothing): "expected tune, replay, ..., got \"x\"".
std::string unknown_policy(std::string_view name);

// Strict: a wrong type, an unknown field (with the nearest known name) or a missing
// repository is a JobInputError reading "<label>: <field path>: <problem>".
JobInput parse_job_input(const nlohmann::json& document, const std::string& label);
JobInput load_job_input(const std::filesystem::path& file);
nlohmann::json to_json(const JobInput& input);

// "evaluations=8,wall_s=600,tokens=100000,dollars=5,gpu_s=300" (the --budget flag);
// unnamed fields keep their values in `budget`.
Budget parse_budget_flag(const std::string& text, Budget budget);

}  // namespace maxcode
