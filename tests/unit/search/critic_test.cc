#include "runner/search/critic.h"

#include <gtest/gtest.h>

namespace maxcode {
namespace {

TargetContext unit_context() {
  TargetContext context;
  context.target = Target{"src/k.cu", "scale"};
  context.target.unit = {"scale", "scale_kernel"};
  context.language = "cuda";
  return context;
}

// The errors nvcc and gcc give for a function defined twice, as a candidate that copies
// a kernel next to itself gets them: the critique says how to fix it.
TEST(MetricsCritic, RedefinitionErrorsSayHowToFixThem) {
  auto critic = make_metrics_critic(unit_context());
  for (const std::string output :
       {"k.cu(11): error: function \"scale_kernel\" has already been defined (previous definition at line 4)",
        "k.cc:11:6: error: redefinition of 'void scale_kernel(float*, int)'\nk.cc:4:6: note: "
        "'void scale_kernel(float*, int)' previously defined here"}) {
    Evaluation e;
    e.verdict = Verdict::kCompileError;
    e.compiler_output = output;
    const std::string critique = critic->critique(e);
    EXPECT_NE(critique.find("It does not compile: k.c"), std::string::npos) << critique;
    EXPECT_NE(critique.find("To change a function of the unit (scale, scale_kernel), give its complete new "
                            "definition under the same name and signature: it replaces the original where "
                            "it stands"),
              std::string::npos)
        << critique;
    EXPECT_NE(critique.find("give your own helper a new name"), std::string::npos) << critique;
  }
  // Other compile errors keep their advice.
  Evaluation e;
  e.verdict = Verdict::kCompileError;
  e.compiler_output = "k.cu(3): error: identifier \"tile\" is undefined";
  EXPECT_EQ(critic->critique(e).find("defined twice"), std::string::npos);
}

TEST(MetricsCritic, ARejectedCandidateIsToldWhatTheUnitAllows) {
  auto critic = make_metrics_critic(unit_context());
  Evaluation e;
  e.verdict = Verdict::kRejected;
  e.reason = "src/k.cu:3: the candidate defines 'other', which is outside the unit of 'scale'";
  const std::string critique = critic->critique(e);
  EXPECT_NE(critique.find("The unit of scale is scale, scale_kernel: any of them may be redefined in place"),
            std::string::npos)
      << critique;
}

}  // namespace
}  // namespace maxcode
