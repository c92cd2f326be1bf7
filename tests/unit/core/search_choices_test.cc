// The config's search choices (runner/core/search_choices.h): written and read by the
// names .maxcode.json has always used, compared as enums; a name of none is an error
// that names it, and a job's policy override says which names there are.
#include "runner/core/search_choices.h"

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>

#include "runner/job/job_input.h"

namespace maxcode {
namespace {

std::string joined(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::string_view name : names) out += std::string(name) + "|";
  return out;
}

TEST(SearchChoices, TheNamesAreTheConfigsAndReadBack) {
  EXPECT_EQ(joined(search_policy_names()), "tune|replay|maxcode|cuda-llm|effilearner|");
  EXPECT_EQ(joined(critic_choice_names()), "auto|metrics|llm|none|");
  EXPECT_EQ(joined(reranker_choice_names()), "auto|llm|none|");
  for (std::string_view name : search_policy_names())
    EXPECT_EQ(search_policy_name(search_policy_from_name(name)), name);
  for (std::string_view name : critic_choice_names())
    EXPECT_EQ(critic_choice_name(critic_choice_from_name(name)), name);
  for (std::string_view name : reranker_choice_names())
    EXPECT_EQ(reranker_choice_name(reranker_choice_from_name(name)), name);
  std::ostringstream out;
  out << SearchPolicy::kCudaLlm << "," << CriticChoice::kMetrics << "," << RerankerChoice::kNone;
  EXPECT_EQ(out.str(), "cuda-llm,metrics,none");
}

TEST(SearchChoices, OnlyThePresetsAskAModel) {
  std::string llm;
  for (std::string_view name : search_policy_names())
    if (is_llm_policy(search_policy_from_name(name))) llm += std::string(name) + "|";
  EXPECT_EQ(llm, "maxcode|cuda-llm|effilearner|");
}

TEST(SearchChoices, AnUnknownNameIsAnErrorThatNamesIt) {
  try {
    search_policy_from_name("llm");
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown policy 'llm'");
  }
  EXPECT_THROW(critic_choice_from_name("gpt"), std::invalid_argument);
  EXPECT_THROW(reranker_choice_from_name("metrics"), std::invalid_argument);  // a critic's, not a reranker's
  EXPECT_EQ(policy_named("replay"), SearchPolicy::kReplay);
  EXPECT_FALSE(policy_named("Replay"));
  EXPECT_EQ(unknown_policy("magic"), "expected tune, replay, maxcode, cuda-llm or effilearner, got \"magic\"");
}

}  // namespace
}  // namespace maxcode
