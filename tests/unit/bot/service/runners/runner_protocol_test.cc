// What the service hands a runner must be a job input `maxcode run --job` accepts: the
// service and the job are built apart, and a drift between them shows only end to end.
#include "bot/service/runners/runner_protocol.h"

#include <gtest/gtest.h>

#include "runner/job/job_input.h"

namespace maxcode::bot::service {
namespace {

using nlohmann::json;

TEST(RunnerProtocol, TheJobDocumentIsAJobInputThatDeliversNothing) {
  ServiceConfig config;
  config.git_url = "http://127.0.0.1:9/{owner}/{name}.git";
  config.max_targets = 2;
  config.budget = {{"evaluations", 4}, {"wall_s", 300}};
  Job job;
  job.repo = "acme/histo";
  job.commit = "0123456789abcdef0123456789abcdef01234567";
  job.target = "histogram";
  job.policy = "replay";
  const json document = RunnerProtocol::job_document(config, job);
  const auto input = maxcode::parse_job_input(document, "job document");
  EXPECT_EQ(input.repository, "http://127.0.0.1:9/acme/histo.git");
  EXPECT_EQ(input.ref, job.commit);
  EXPECT_EQ(input.targets, std::vector<std::string>{"histogram"});
  EXPECT_EQ(input.max_targets, 2);
  EXPECT_EQ(input.policy, SearchPolicy::kReplay);
  EXPECT_EQ(input.budget.evaluations, 4);
  // The service opens the pull request from the uploaded results; the job must not.
  EXPECT_EQ(input.delivery.mode, maxcode::DeliveryMode::kNone);
}

TEST(RunnerProtocol, WithoutATargetTheProfilerChooses) {
  ServiceConfig config;
  Job job;
  job.repo = "acme/histo";
  job.commit = "0123456789abcdef0123456789abcdef01234567";
  const auto input = maxcode::parse_job_input(RunnerProtocol::job_document(config, job), "job document");
  EXPECT_TRUE(input.targets.empty());
}

}  // namespace
}  // namespace maxcode::bot::service
