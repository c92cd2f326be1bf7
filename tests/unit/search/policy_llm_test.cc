#include "runner/search/policy.h"

#include <gtest/gtest.h>

#include "runner/llm/provider.h"
#include "runner/search/critic.h"
#include "runner/search/prompts.h"
#include "runner/search/spend.h"
#include "runner/util/files.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

// A launcher and its kernel: the prompt must show both and say that either may be
// redefined in place; the model's reply is read back as a candidate.
TEST(LlmPolicy, PromptShowsTheWholeUnitAndWhatMayChange) {
  const std::string file =
      "__global__ void scale_kernel(float* p, int n) {\n"
      "  int i = threadIdx.x;\n"
      "  if (i < n) p[i] *= 2;\n"
      "}\n"
      "\n"
      "void other() {}\n"
      "\n"
      "void scale(float* p, int n) {\n"
      "  scale_kernel<<<1, 256>>>(p, n);\n"
      "  helper_elsewhere();\n"
      "}\n";
  const Unit unit = find_unit(file, "src/k.cu", find_definition(file, "scale", "src/k.cu"), {});
  Target target{"src/k.cu", "scale"};
  target.unit = unit.names();
  target.unit_notes = {"helper_elsewhere (called by scale at src/k.cu:10) is defined in src/b.cu:3, another file"};
  const TargetContext context = make_target_context(target, file, unit);

  testing::TempDir dir;
  llm::ProviderConfig config;
  config.provider = "command";
  config.command = "cat > " + (dir / "prompt.txt").string() +
                   "; printf '```cuda\\nvoid scale(float* p, int n) {\\n  scale_kernel<<<1, 128>>>(p, n);\\n}\\n```\\n'";
  config.timeout_s = 30;
  auto provider = llm::make_provider(config);
  Spend spend;
  auto policy = make_llm_policy("maxcode", context, *provider, default_prompts(), spend);
  SearchState state;
  const std::vector<Candidate> proposed = policy->propose(state, 1);
  ASSERT_EQ(proposed.size(), 1u);
  ASSERT_TRUE(proposed[0].definition) << proposed[0].error.value_or("");

  const std::string prompt = read_text(dir / "prompt.txt");
  // The original is the unit: the kernel and the launcher, in file order; the context
  // elides both and keeps the rest.
  const std::size_t original = prompt.find("## Original");
  ASSERT_NE(original, std::string::npos) << prompt;
  EXPECT_LT(original, prompt.find("__global__ void scale_kernel(float* p, int n) {"));
  EXPECT_LT(prompt.find("__global__ void scale_kernel"), prompt.find("void scale(float* p, int n) {"));
  EXPECT_NE(prompt.find("/* ... scale_kernel (shown above) ... */"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("void other() {}"), std::string::npos);
  // What may change, and what may not.
  EXPECT_NE(prompt.find("`scale` and the functions it calls in this file form one unit"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("each replaces the original where it stands in the file"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("Do not define any other function of the file"), std::string::npos);
  EXPECT_NE(prompt.find("Note: helper_elsewhere (called by scale"), std::string::npos) << prompt;
}

}  // namespace
}  // namespace maxcode
