#include "runner/search/policy.h"

#include <gtest/gtest.h>

#include "runner/llm/provider.h"
#include "runner/search/critic.h"
#include "runner/search/prompts.h"
#include "runner/search/spend.h"
#include "runner/util/files.h"
#include "support/llm_server.h"
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
  auto policy = make_llm_policy(SearchPolicy::kMaxcode, context, *provider, default_prompts(), spend);
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

namespace maxcode {
namespace {

using testing::LlmServer;
using testing::ScriptedReply;

constexpr const char* kPath = "/v1/chat/completions";
constexpr const char* kKeyEnv = "MAXCODE_TEST_POLICY_KEY";

// A chat completion of 1,200 + 300 tokens (the recorded fixture's usage) saying `content`.
ScriptedReply completion(const std::string& content) {
  nlohmann::json body = nlohmann::json::parse(testing::llm_fixture("openai_chat_completion.json"));
  body["choices"][0]["message"]["content"] = content;
  return ScriptedReply{200, body.dump()};
}

struct PolicyRig {
  explicit PolicyRig(const LlmServer& server, SpendLimits limits = {}) : spend(limits) {
    const std::string file = "int f(int x) {\n  int s = 0;\n  for (int i = 0; i < x; ++i) s += 1;\n  return s;\n}\n";
    const Unit unit = find_unit(file, "src/f.cc", find_definition(file, "f", "src/f.cc"), {});
    Target target{"src/f.cc", "f"};
    target.unit = unit.names();
    llm::ProviderConfig config;
    config.provider = "openai";
    config.model = "gpt-4.1";
    config.base_url = server.url() + "/v1";
    config.api_key_env = kKeyEnv;
    config.api_key = "sk-test-policy";  // as the CLI's environment would give it
    config.timeout_s = 10;
    config.max_retries = 0;
    provider = llm::make_provider(config);
    policy = make_llm_policy(SearchPolicy::kMaxcode, make_target_context(target, file, unit), *provider,
                             default_prompts(), spend);
  }
  Spend spend;
  std::unique_ptr<llm::Provider> provider;
  std::unique_ptr<Policy> policy;
};

// A reply with no code is asked again once, with the reason, in the same conversation;
// the second answer becomes the candidate and both calls are counted.
TEST(LlmPolicy, AnUnusableReplyIsAskedAgainOnceWithTheReason) {
  LlmServer server;
  server.script(kPath, {completion("You could return x directly."),
                        completion("```cpp\nint f(int x) { return x > 0 ? x : 0; }\n```")});
  PolicyRig rig(server);
  const std::vector<Candidate> proposed = rig.policy->propose(SearchState{}, 1);
  ASSERT_EQ(proposed.size(), 1u);
  ASSERT_TRUE(proposed[0].definition) << proposed[0].error.value_or("");
  EXPECT_EQ(proposed[0].tokens, 3000);
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  const nlohmann::json messages = requests[1].json()["messages"];
  ASSERT_EQ(messages.size(), 4u) << messages.dump();
  EXPECT_EQ(messages[2]["role"], "assistant");
  EXPECT_EQ(messages[2]["content"], "You could return x directly.");
  EXPECT_NE(messages[3]["content"].get<std::string>().find("cannot be used: the reply has no fenced code block"),
            std::string::npos);
  EXPECT_EQ(rig.spend.to_json()["llm_calls"], 2);
  EXPECT_EQ(rig.spend.to_json()["unusable_replies"], 0);

  // Twice unusable: one candidate with both reasons, counted as an unusable reply.
  LlmServer stubborn;
  stubborn.script(kPath, {completion("Return x directly.")});
  PolicyRig again(stubborn);
  const std::vector<Candidate> failed = again.policy->propose(SearchState{}, 1);
  ASSERT_EQ(failed.size(), 1u);
  ASSERT_TRUE(failed[0].error);
  EXPECT_NE(failed[0].error->find("asked again: the reply has no fenced code block"), std::string::npos)
      << *failed[0].error;
  EXPECT_EQ(stubborn.requests().size(), 2u);
  EXPECT_EQ(again.spend.to_json()["unusable_replies"], 1);
}

// A limit holds within one call, though k calls go out at once: 4,000 tokens allow two
// calls of 1,500 (a third would make 4,500), where a batch of 6 used to spend 9,000.
TEST(LlmPolicy, ATokenBudgetStopsWithinOneCallOfItsLimit) {
  LlmServer server;
  server.script(kPath, {completion("```cpp\nint f(int x) { return x > 0 ? x : 0; }\n```")});
  PolicyRig rig(server, {4000, 0});
  std::vector<Candidate> proposed = rig.policy->propose(SearchState{}, 6);
  EXPECT_EQ(proposed.size(), 2u);
  EXPECT_EQ(server.requests().size(), 2u);
  EXPECT_LE(rig.spend.tokens(), 4000);
  EXPECT_NE(rig.spend.exhausted().find("token budget reached: 3000 of 4000 spent, a call takes up to 1500"),
            std::string::npos)
      << rig.spend.exhausted();
  EXPECT_EQ(rig.spend.to_json()["refused_calls"], 4);
  // Later steps call nothing.
  EXPECT_TRUE(rig.policy->propose(SearchState{}, 2).empty());
  EXPECT_EQ(server.requests().size(), 2u);
  // Candidates are numbered in order, refused calls take no number.
  EXPECT_EQ(proposed[0].id, "maxcode-1");
  EXPECT_EQ(proposed[1].id, "maxcode-2");
}

// The search's wall budget is a deadline for model calls too: none goes out after it.
TEST(LlmPolicy, NoCallGoesOutPastTheSearchDeadline) {
  LlmServer server;
  server.script(kPath, {completion("```cpp\nint f(int x) { return x > 0 ? x : 0; }\n```")});
  PolicyRig rig(server);
  rig.spend.set_deadline(std::chrono::steady_clock::now() + std::chrono::hours(1), 3600);
  EXPECT_EQ(rig.policy->propose(SearchState{}, 1).size(), 1u);
  rig.spend.set_deadline(std::chrono::steady_clock::now() - std::chrono::seconds(1), 20);
  EXPECT_TRUE(rig.policy->propose(SearchState{}, 3).empty());
  EXPECT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(rig.spend.exhausted(), "time budget reached: the search's 20 s are up");
  EXPECT_EQ(rig.spend.to_json()["refused_calls"], 3);
}

// After a resume the numbering goes on after every candidate proposed before, those the
// reranker dropped (never in the trajectory) included.
TEST(LlmPolicy, AResumedPolicyNeverReusesACandidateId) {
  LlmServer server;
  server.script(kPath, {completion("```cpp\nint f(int x) { return x > 0 ? x : 0; }\n```")});
  PolicyRig rig(server);
  SearchState state;
  state.proposed = 7;  // 7 proposed, of which the trajectory kept 2
  for (const char* id : {"maxcode-3", "maxcode-6"}) {
    TrajectoryEntry e;
    e.candidate.id = id;
    state.trajectory.push_back(e);
  }
  rig.policy->resume(state);
  const std::vector<Candidate> proposed = rig.policy->propose(state, 1);
  ASSERT_EQ(proposed.size(), 1u);
  EXPECT_EQ(proposed[0].id, "maxcode-8");
}

}  // namespace
}  // namespace maxcode
