// The job's input document: strict parsing with errors that name the field, the
// --budget flag, and the round trip through to_json that the service relies on.
#include <gtest/gtest.h>

#include "runner/job/job_input.h"
#include "support/test_support.h"

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
  EXPECT_EQ(in.policy, SearchPolicy::kReplay);
  EXPECT_EQ(in.delivery.mode, DeliveryMode::kPr);
  EXPECT_EQ(in.delivery.base, "dev");
  EXPECT_EQ(in.delivery.api_url, "https://api.github.com");
  EXPECT_EQ(parse_job_input(to_json(in), "again"), in);

  const JobInput minimal = parse_job_input({{"repository", "/srv/repo"}}, "job.json");
  EXPECT_EQ(minimal.max_targets, 3);
  EXPECT_FALSE(minimal.policy);  // the config's search.policy decides
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

// Hostile job documents (issue 22, point 9): each is a JobInputError naming the file
// and the field; none crashes, throws anything else or leads out of the clone.
std::string load_error(const std::string& text) {
  testing::TempDir dir;
  testing::write_file(dir / "job.json", text);
  try {
    load_job_input(dir / "job.json");
  } catch (const JobInputError& e) {
    const std::string message = e.what();
    const std::size_t at = message.find("job.json: ");
    return at == std::string::npos ? message : message.substr(at);
  }
  return "(no error)";
}

TEST(JobInput, HostileDocumentsAreClearErrors) {
  EXPECT_EQ(load_error(std::string(1'000'000, '[') + std::string(1'000'000, ']')),
            "job.json: [0][0][0][0][0][0]...[0][0][0][0]: nested deeper than 512 levels");
  EXPECT_EQ(load_error(R"({"repository": "r", "budget": {"wall_s": 10, "wall_s": 1e9}})"),
            "job.json: budget.wall_s: duplicate key \"wall_s\" (each field once)");
  EXPECT_EQ(load_error(R"({"repository": "r", "min_share": 1e999})"),
            "job.json: min_share: number out of range: 1e999 (line 1, column 38)");
  EXPECT_EQ(load_error(R"({"repository": "r", "budget": {"dollars": 1e400}})"),
            "job.json: budget.dollars: number out of range: 1e400 (line 1, column 47)");
  EXPECT_EQ(load_error("{\"repository\": \"" + std::string(50'000'000, 'r') + "\"}"),
            "job.json: repository: at most 4096 bytes, got 50000000");
  EXPECT_EQ(load_error("{\"repository\": \"r\", \"ref\": \"\xff\"}"),
            "job.json: invalid JSON at line 1, column 29: syntax error while parsing value - invalid string: "
            "ill-formed UTF-8 byte; last read: '\"\xEF\xBF\xBD'");
  EXPECT_EQ(error_of({{"repository", "r"}, {"targets", {std::string(5000, 'f')}}}),
            "job.json: targets[0]: at most 4096 bytes, got 5000");
  EXPECT_EQ(error_of({{"repository", "r"}, {"targets", {json::array({json::array()})}}}),
            "job.json: targets[0]: expected a non-empty string, got an array");
  EXPECT_EQ(error_of({{"repository", "r"}, {"budget", {{"evaluations", 1e300}}}}),
            "job.json: budget.evaluations: must be <= 2147483647, got 1e+300");
  EXPECT_EQ(error_of({{"repository", "r"}, {"max_targets", 18446744073709551615u}}),
            "job.json: max_targets: must be <= 2147483647, got 18446744073709551615");
  EXPECT_EQ(error_of({{"repository", "r"}, {"budget", {{"tokens", -1e300}}}}),
            "job.json: budget.tokens: must be >= 0, got -1e+300");
  // An unknown field of 50 MB: named by its first bytes, and found fast.
  const std::string message = error_of({{"repository", "r"}, {std::string(50'000'000, 'x'), 1}});
  EXPECT_EQ(message.substr(0, 20), "job.json: xxxxxxxxxx");
  EXPECT_NE(message.find("... (50000000 bytes): unknown field (known fields: $schema, "), std::string::npos)
      << message.substr(0, 300);
}

TEST(JobInput, BudgetFlagBeyondADoubleIsAClearError) {
  try {
    parse_budget_flag("evaluations=8,wall_s=1e999", Budget{});
    FAIL();
  } catch (const JobInputError& e) {
    EXPECT_STREQ(e.what(), "--budget: wall_s: number out of range: 1e999");
  }
  try {
    parse_budget_flag("dollars=" + std::string(200'000, '9'), Budget{});
    FAIL();
  } catch (const JobInputError& e) {
    EXPECT_EQ(std::string(e.what()).substr(0, 58), "--budget: dollars: number out of range: 999999999999999999");
  }
}

TEST(JobInput, PathsMayNotLeaveTheRepository) {
  for (const char* field : {"config", "replay_dir"}) {
    for (const char* path : {"../x.json", "a/../../x", "./../../etc", ".."})
      EXPECT_EQ(error_of({{"repository", "r"}, {field, path}}),
                std::string("job.json: ") + field +
                    ": must stay inside the repository ('..' climbs out of it), got \"" + path + "\"")
          << path;
    for (const char* path : {"ci/maxcode.json", "a/../b", "./x", "..x"})
      EXPECT_EQ(error_of({{"repository", "r"}, {field, path}}), "") << path;
  }
  EXPECT_EQ(error_of({{"repository", "r"}, {"replay_dir", "/srv/replay"}}),
            "job.json: replay_dir: must be relative to the repository root, got \"/srv/replay\"");
}

}  // namespace
}  // namespace maxcode
