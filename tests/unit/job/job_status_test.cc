// job.json's states (runner/job/job_status.h): written and read by name, compared as
// enums; a name of no known state is an error that names it.
#include "runner/job/job_status.h"

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>

#include "runner/job/job_record.h"

namespace maxcode {
namespace {

TEST(JobStatus, EveryValueReadsBackFromItsName) {
  for (JobStatus s : kJobStatuses) EXPECT_EQ(job_status_from_name(job_status_name(s)), s);
  for (TargetStatus s : kTargetStatuses) EXPECT_EQ(target_status_from_name(target_status_name(s)), s);
  for (TargetVerdict v : kTargetVerdicts) EXPECT_EQ(target_verdict_from_name(target_verdict_name(v)), v);
  EXPECT_EQ(std::size(kJobStatuses), 4u);
  EXPECT_EQ(std::size(kTargetStatuses), 6u);
  EXPECT_EQ(std::size(kTargetVerdicts), 3u);
  std::ostringstream out;
  out << JobStatus::kStopped << "," << TargetStatus::kSkipped << "," << TargetVerdict::kNoWinner;
  EXPECT_EQ(out.str(), "stopped,skipped,no winner");
}

// The names job.json has always held (docs/job.md): the service and older records read them.
TEST(JobStatus, TheNamesAreJobJsons) {
  std::string names;
  for (JobStatus s : kJobStatuses) names += job_status_name(s) + "|";
  EXPECT_EQ(names, "running|completed|failed|stopped|");
  names.clear();
  for (TargetStatus s : kTargetStatuses) names += target_status_name(s) + "|";
  EXPECT_EQ(names, "pending|running|done|failed|stopped|skipped|");
  names.clear();
  for (TargetVerdict v : kTargetVerdicts) names += target_verdict_name(v) + "|";
  EXPECT_EQ(names, "|winner|no winner|");  // none before a target is done

  const nlohmann::json target = to_json(TargetRecord{});
  EXPECT_EQ(target["status"], "pending");
  EXPECT_EQ(target["verdict"], "");
  EXPECT_EQ(to_json(JobRecord{})["status"], "running");
}

TEST(JobStatus, AnUnknownNameIsNamed) {
  try {
    job_status_from_name("finished");
    FAIL() << "an unknown job status was read";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown job status 'finished'");
  }
  try {
    target_status_from_name("paused");
    FAIL() << "an unknown target status was read";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown target status 'paused'");
  }
  try {
    target_verdict_from_name("winner!");
    FAIL() << "an unknown verdict was read";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown target verdict 'winner!'");
  }
  // Names are exact; "" is only a verdict's (none yet).
  EXPECT_THROW(job_status_from_name("Completed"), std::invalid_argument);
  EXPECT_THROW(target_status_from_name(""), std::invalid_argument);
  EXPECT_THROW(target_verdict_from_name("no-winner"), std::invalid_argument);
}

// job.json's reader takes a name it does not know for a record of another shape: a
// json::exception naming the field, which the service's job page leaves out.
TEST(JobStatus, AnUnknownNameInATargetRecordIsAnErrorNamingTheField) {
  TargetRecord t;
  t.slug = "src-a-cc--f";
  t.function = "f";
  t.status = TargetStatus::kDone;
  t.verdict = TargetVerdict::kWinner;
  nlohmann::json j = to_json(t);
  const TargetRecord back = target_record_from_json(j);
  EXPECT_EQ(back.status, TargetStatus::kDone);
  EXPECT_EQ(back.verdict, TargetVerdict::kWinner);
  EXPECT_EQ(to_json(back), j);

  j["status"] = "paused";
  try {
    target_record_from_json(j);
    FAIL() << "a target record with an unknown status was read";
  } catch (const nlohmann::json::exception& e) {
    EXPECT_STREQ(e.what(), "status: unknown target status 'paused'");
  }
  j["status"] = "done";
  j["verdict"] = "maybe";
  try {
    target_record_from_json(j);
    FAIL() << "a target record with an unknown verdict was read";
  } catch (const nlohmann::json::exception& e) {
    EXPECT_STREQ(e.what(), "verdict: unknown target verdict 'maybe'");
  }
  // Absent: pending, no verdict, as before.
  j.erase("status");
  j.erase("verdict");
  EXPECT_EQ(target_record_from_json(j).status, TargetStatus::kPending);
  EXPECT_EQ(target_record_from_json(j).verdict, TargetVerdict::kNone);
}

}  // namespace
}  // namespace maxcode
