// The job's input document: strict parsing with errors that name the field, the
// --budget flag, and the round trip through to_json that the service relies on.
#include <gtest/gtest.h>

#include "runner/job/job_input.h"

namespace maxcode {
namespace {

using nlohmann::json;

std::string error_of(const json& document) {
  try {
    parse_job_input(document, "job.json");
  } catch (const JobInputError& e) {
    return e.what();
  }
  return "";
}

TEST(JobInput, ReadsEveryFieldAndRoundTrips) {
  const json document = {{"repository", "https://github.com/acme/histo.git"},
                         {"ref", "v1.2"},
                         {"config", "ci/maxcode.json"},
                         {"targets", {"histogram"}},
                         {"max_targets", 2},
                         {"budget", {{"evaluations", 16}, {"wall_s", 600}, {"tokens", 1000}, {"dollars", 2.5}, {"gpu_s", 30}}},
                         {"policy", "replay"},
                         {"replay_dir", "replay"},
                         {"git_token_env", "MY_TOKEN"},
                         {"delivery", {{"mode", "pr"}, {"repo", "acme/histo"}, {"base", "dev"}}}};
  const JobInput in = parse_job_input(document, "job.json");
  EXPECT_EQ(in.repository, "https://github.com/acme/histo.git");
  EXPECT_EQ(in.ref, "v1.2");
  EXPECT_EQ(in.targets, std::vector<std::string>{"histogram"});
  EXPECT_EQ(in.max_targets, 2);
  EXPECT_EQ(in.budget.evaluations, 16);
  EXPECT_EQ(in.budget.wall_s, 600.0);
  EXPECT_EQ(in.budget.tokens, 1000);
  EXPECT_EQ(in.budget.gpu_s, 30.0);
  EXPECT_EQ(in.delivery.mode, DeliveryMode::kPr);
  EXPECT_EQ(in.delivery.base, "dev");
  EXPECT_EQ(in.delivery.api_url, "https://api.github.com");
  EXPECT_EQ(parse_job_input(to_json(in), "again"), in);

  const JobInput minimal = parse_job_input({{"repository", "/srv/repo"}}, "job.json");
  EXPECT_EQ(minimal.max_targets, 3);
  EXPECT_FALSE(minimal.budget.evaluations);
  EXPECT_EQ(minimal.delivery.mode, DeliveryMode::kNone);  // the service's runners deliver nothing themselves
  EXPECT_EQ(parse_job_input(to_json(minimal), "again"), minimal);
}

TEST(JobInput, ErrorsNameTheFileAndTheField) {
  EXPECT_EQ(error_of({{"ref", "main"}}), "job.json: repository: missing required field (a URL or a local path)");
  EXPECT_EQ(error_of({{"repository", "r"}, {"max_target", 2}}),
            "job.json: max_target: unknown field (did you mean 'max_targets'?)");
  EXPECT_EQ(error_of({{"repository", "r"}, {"budget", {{"evaluations", 0}}}}),
            "job.json: budget.evaluations: must be >= 1, got 0");
  EXPECT_EQ(error_of({{"repository", "r"}, {"budget", {{"wall_s", 0}}}}), "job.json: budget.wall_s: must be > 0, got 0");
  EXPECT_EQ(error_of({{"repository", "r"}, {"budget", {{"evaluations", 2.5}}}}),
            "job.json: budget.evaluations: expected an integer, got 2.5");
  EXPECT_EQ(error_of({{"repository", "r"}, {"max_targets", 0}}), "job.json: max_targets: must be >= 1, got 0");
  EXPECT_EQ(error_of({{"repository", "r"}, {"targets", {"f", ""}}}),
            "job.json: targets[1]: expected a non-empty string, got \"\"");
  EXPECT_EQ(error_of({{"repository", "r"}, {"delivery", {{"mode", "pr"}}}}),
            "job.json: delivery.repo: missing: mode \"pr\" needs the GitHub repository, OWNER/NAME");
  EXPECT_EQ(error_of({{"repository", "r"}, {"delivery", {{"mode", "pr"}, {"repo", "acme"}}}}),
            "job.json: delivery.repo: expected OWNER/NAME, got \"acme\"");
  EXPECT_EQ(error_of({{"repository", "r"}, {"delivery", {{"mode", "email"}}}}),
            "job.json: delivery.mode: expected \"pr\", \"dry-run\" or \"none\", got \"email\"");
  EXPECT_EQ(error_of({{"repository", "r"}, {"policy", "magic"}}),
            "job.json: policy: expected tune, replay, maxcode, cuda-llm or effilearner, got \"magic\"");
  EXPECT_EQ(error_of({{"repository", "r"}, {"config", "/etc/x.json"}}),
            "job.json: config: must be relative to the repository root, got \"/etc/x.json\"");
  EXPECT_EQ(error_of(json::array()), "job.json: expected an object, got an array");
}

TEST(JobInput, BudgetFlagOverridesOnlyTheFieldsItNames) {
  Budget given;
  given.wall_s = 100;
  const Budget b = parse_budget_flag("evaluations=8,gpu_s=12.5", given);
  EXPECT_EQ(b.evaluations, 8);
  EXPECT_EQ(b.gpu_s, 12.5);
  EXPECT_EQ(b.wall_s, 100.0);
  EXPECT_THROW(parse_budget_flag("evaluations=0", {}), JobInputError);
  EXPECT_THROW(parse_budget_flag("evaluations", {}), JobInputError);
  EXPECT_THROW(parse_budget_flag("evaluations=many", {}), JobInputError);
  try {
    parse_budget_flag("evaluation=3", {});
    ADD_FAILURE();
  } catch (const JobInputError& e) {
    EXPECT_EQ(std::string(e.what()), "--budget: budget.evaluation: unknown field (did you mean 'evaluations'?)");
  }
}

}  // namespace
}  // namespace maxcode
