// A job's state: stored and shown by name, compared as the enum.
#include "bot/service/queue/job_state.h"

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>

namespace maxcode::bot::service {
namespace {

TEST(JobState, EveryStateReadsBackFromItsName) {
  for (JobState s : kJobStates) EXPECT_EQ(job_state_from_name(job_state_name(s)), s);
  EXPECT_EQ(std::size(kJobStates), 6u);
  EXPECT_EQ(job_state_name(JobState::kDelivering), "delivering");
  std::ostringstream out;
  out << JobState::kCancelled;
  EXPECT_EQ(out.str(), "cancelled");
}

TEST(JobState, AnUnknownNameIsNamed) {
  try {
    job_state_from_name("finished");
    FAIL() << "an unknown state was read";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown job state 'finished'");
  }
  EXPECT_THROW(job_state_from_name("Done"), std::invalid_argument);  // names are exact
}

}  // namespace
}  // namespace maxcode::bot::service
