// The service's stored result of a job: what the runner uploaded and what delivery did,
// written and read in one place (bot/service/queue/job_result.h).
#include "bot/service/queue/job_result.h"

#include <gtest/gtest.h>

namespace maxcode::bot::service {
namespace {

using nlohmann::json;

JobResult delivered() {
  JobResult r{.dir = "/data/jobs/7/attempt-2",
              .exit_code = 0,
              .log = "searched 12 candidates\n",
              .targets = {"src-sum-cpp--sum_squares", "src-sum-cpp--dot"}};
  r.job = {
      {"status", "completed"},
      {"targets",
       {{{"slug", "src-sum-cpp--sum_squares"}, {"function", "sum_squares"}, {"status", "done"}}, {{"function", 42}}}}};
  r.deliveries = {{"sum_squares", "created", "https://github.com/acme/sum/pull/3"}, {"dot", "no-winner", ""}};
  r.speedups = {{"sum_squares", 1.42}};
  r.history_rows = 2;
  return r;
}

TEST(JobResult, WhatIsStoredReadsBackTheSame) {
  const JobResult r = delivered();
  const JobResult back = job_result_from_json(json::parse(to_json(r).dump()));
  EXPECT_EQ(back.unreadable, "");
  EXPECT_EQ(back.dir, r.dir);
  EXPECT_EQ(back.exit_code, 0);
  EXPECT_EQ(back.log, r.log);
  EXPECT_EQ(back.targets, r.targets);
  EXPECT_EQ(back.job, r.job);
  ASSERT_EQ(back.deliveries.size(), 2u);
  EXPECT_EQ(back.deliveries[0].pr, "https://github.com/acme/sum/pull/3");
  EXPECT_EQ(back.deliveries[1].outcome, "no-winner");
  EXPECT_EQ(back.deliveries[1].pr, "");
  EXPECT_EQ(back.speedups.at("sum_squares"), 1.42);
  EXPECT_EQ(back.history_rows, 2);
}

TEST(JobResult, NoResultYetIsNull) {
  EXPECT_TRUE(to_json(JobResult{}).is_null());
  const JobResult none = job_result_from_json(nullptr);
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.exit_code, -1);
}

TEST(JobResult, JobJsonIsReadForItsCauseAndTargets) {
  const JobResult r = delivered();
  // The entry of another shape (a function that is a number) is left out, not fatal.
  const auto records = r.target_records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].function, "sum_squares");
  EXPECT_EQ(r.run_error(), "");
  JobResult failed{.dir = "/d", .exit_code = 1, .job = {{"status", "failed"}, {"error", "no function f"}}};
  EXPECT_EQ(failed.run_error(), "no function f");
  failed.job = "not an object";
  EXPECT_EQ(failed.run_error(), "");
  EXPECT_TRUE(failed.target_records().empty());
}

TEST(JobResult, AStoredDocumentOfTheWrongShapeIsNamedNotThrown) {
  json j = to_json(delivered());
  j["deliveries"][0]["target"] = 5;
  JobResult r = job_result_from_json(j);
  EXPECT_EQ(r.unreadable, "the job's stored result: deliveries[0].target: expected a string, got a number");
  EXPECT_TRUE(r.deliveries.empty());
  EXPECT_FALSE(r.empty());

  j = to_json(delivered());
  j["speedups"]["sum_squares"] = "fast";
  EXPECT_NE(job_result_from_json(j).unreadable.find("speedups.sum_squares"), std::string::npos);

  j = to_json(delivered());
  j["deliveries"][0].erase("outcome");
  EXPECT_EQ(job_result_from_json(j).unreadable,
            "the job's stored result: deliveries[0].outcome: missing required field");

  j = to_json(delivered());
  j["exit_code"] = 1.5;
  EXPECT_NE(job_result_from_json(j).unreadable.find("exit_code: expected an integer"), std::string::npos);

  EXPECT_NE(job_result_from_json(json::array()).unreadable.find("expected an object"), std::string::npos);
  EXPECT_EQ(job_result_from_text("{\"dir\": ").unreadable, "the job's stored result: not JSON");
  EXPECT_EQ(job_result_from_text(to_json(delivered()).dump()).dir, "/data/jobs/7/attempt-2");
  EXPECT_TRUE(job_result_from_text("null").empty());
  // What cannot be read stays said when it is stored again.
  EXPECT_EQ(job_result_from_json(to_json(r)).unreadable, r.unreadable);
}

}  // namespace
}  // namespace maxcode::bot::service
