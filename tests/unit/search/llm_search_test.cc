// The MaxCode search end to end, driven by scripted replies from a local server that
// speaks the OpenAI chat-completions protocol: the real maxcode binary, the real
// evaluator on the fixture repository, an interruption and --resume, and the export.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "runner/util/files.h"
#include "runner/util/process.h"
#include "support/llm_server.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

using testing::LlmServer;
using testing::ScriptedReply;
namespace fs = std::filesystem;

constexpr const char* kKeyVariable = "MAXCODE_TEST_LLM_KEY";
constexpr const char* kKey = "sk-test-0123456789abcdef";

const char* kFast =
    "Sixteen passes recompute the same sum; one pass is enough.\n\n```cpp\n"
    "long long sum_squares(const int* v, int n) {\n  long long s = 0;\n"
    "  for (int i = 0; i < n; ++i) s += square(v[i]);\n  return s;\n}\n```\n";
const char* kBroken = "```cpp\nlong long sum_squares(const int* v, int n) {\n  return undefined_total(v, n);\n}\n```\n";
const char* kNoCode = "I would start by profiling the function.";
const char* kWrong =
    "```cpp\nlong long sum_squares(const int* v, int n) {\n  long long s = 0;\n"
    "  for (int i = 0; i < n; ++i) s += square(v[i]);\n  return n > 1000 ? s - 1 : s;\n}\n```\n";
const char* kWrongAgain =  // wrong in another way
    "```cpp\nlong long sum_squares(const int* v, int n) {\n  long long s = 0;\n"
    "  for (int i = 0; i < n; ++i) s += square(v[i]);\n  return n > 1000 ? s + 1 : s;\n}\n```\n";
const char* kFastAgain =  // the same code as kFast, laid out differently
    "```cpp\nlong long sum_squares(const int* v, int n) {\n  long long s = 0;  // one pass\n"
    "  for (int i = 0; i < n; ++i)\n    s += square(v[i]);\n  return s;\n}\n```\n";

ScriptedReply completion(const std::string& content) {
  nlohmann::json body = nlohmann::json::parse(testing::llm_fixture("openai_chat_completion.json"));
  body["choices"][0]["message"]["content"] = content;
  return ScriptedReply{200, body.dump()};
}

Outcome maxcode(const std::string& args) {
  Command c;
  c.shell = std::string(MAXCODE_BINARY) + " " + args;
  c.timeout_s = 300;
  return run(c);
}

fs::path repo_with_llm(const testing::TempDir& dir, const std::string& base_url) {
  const fs::path repo = dir / "repo";
  copy_tree(testing::source_path("tests/fixtures/sum"), repo);
  nlohmann::json config = nlohmann::json::parse(read_text(repo / ".maxcode.json"));
  config["search"] = {{"policy", "maxcode"}, {"batch", 2}, {"max_evaluations", 4}};
  config["llm"] = {{"propose",
                    {{"provider", "openai"}, {"model", "test-model"}, {"base_url", base_url},
                     {"api_key_env", kKeyVariable}, {"timeout_s", 30},
                     {"price", {{"input_per_mtok", 2.0}, {"output_per_mtok", 8.0}}}}}};
  write_text(repo / ".maxcode.json", config.dump(2));
  return repo;
}

std::size_t lines(const fs::path& file) {
  std::size_t n = 0;
  for (char c : read_text(file)) n += c == '\n';
  return n;
}

TEST(LlmSearch, SecondStepSeesTheBestItsFeedbackAndTheCritiquesAndResumeWorks) {
  LlmServer server;
  server.script("/v1/chat/completions",
                {completion(kFast), completion(kBroken), completion(kNoCode), completion(kFastAgain),
                 completion(kWrong), completion(kWrongAgain)});
  testing::ScopedEnv key(kKeyVariable, kKey);
  testing::TempDir dir;
  const fs::path repo = repo_with_llm(dir, server.url() + "/v1");
  const fs::path out = dir / "out";

  // Step 1 only (two proposals), as if the run had been interrupted there...
  Outcome first = maxcode("optimize " + repo.string() + " --max-evaluations 2 --out " + out.string() + " -q");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_TRUE(fs::exists(out / "checkpoint.json"));
  ASSERT_EQ(server.requests().size(), 2u);
  for (const auto& r : server.requests()) {
    EXPECT_EQ(r.header("Authorization"), std::string("Bearer ") + kKey);
    EXPECT_EQ(r.json()["model"], "test-model");
  }

  // ...then resumed with a larger budget: step 2 runs from the checkpoint.
  Outcome second = maxcode("optimize --resume " + out.string() + " " + repo.string() + " --max-evaluations 4 -q");
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const auto requests = server.requests();
  // Step 2 asks for two; the reply with no code is asked again once (and answers kWrong);
  // the repeat costs no evaluation, which leaves room for one more in step 3.
  ASSERT_EQ(requests.size(), 6u);
  const std::string step2 = requests[2].json()["messages"][1]["content"];
  EXPECT_EQ(step2, requests[3].json()["messages"][1]["content"].get<std::string>()) << "one observation per step";
  // The best so far, with its code, feedback and critique:
  EXPECT_NE(step2.find("## Best so far"), std::string::npos) << step2;
  EXPECT_NE(step2.find("for (int i = 0; i < n; ++i) s += square(v[i]);"), std::string::npos);
  EXPECT_NE(step2.find("Verdict: faster"), std::string::npos);
  EXPECT_NE(step2.find("Critique: Faster:"), std::string::npos);
  // The failed attempt of step 1, with its compiler error and critique:
  EXPECT_NE(step2.find("Verdict: compile-error"), std::string::npos);
  EXPECT_NE(step2.find("undefined_total"), std::string::npos);
  EXPECT_NE(step2.find("Critique: It does not compile"), std::string::npos);

  auto result = nlohmann::json::parse(read_text(out / "result.json"));
  ASSERT_EQ(result["candidates"].size(), 5u);
  int faster = 0, compile_errors = 0;
  for (int i = 0; i < 2; ++i) {
    faster += result["candidates"][i]["verdict"] == "faster";
    compile_errors += result["candidates"][i]["verdict"] == "compile-error";
    EXPECT_FALSE(result["candidates"][i].value("critique", "").empty());
  }
  EXPECT_EQ(faster, 1);
  EXPECT_EQ(compile_errors, 1);
  // The re-asked reply's conversation: the code-less answer and why it was not usable.
  int reasked = 0;
  for (const auto& r : requests) {
    const auto messages = r.json()["messages"];
    if (messages.size() != 4) continue;
    ++reasked;
    EXPECT_EQ(messages[2]["content"], kNoCode);
    EXPECT_NE(messages[3]["content"].get<std::string>().find("the reply has no fenced code block"), std::string::npos);
  }
  EXPECT_EQ(reasked, 1);
  std::vector<std::string> step2_verdicts{result["candidates"][2]["verdict"], result["candidates"][3]["verdict"]};
  std::vector<std::string> step2_reasons{result["candidates"][2]["reason"], result["candidates"][3]["reason"]};
  const int dup = step2_reasons[0].rfind("same code as maxcode-", 0) == 0 ? 0 : 1;
  EXPECT_EQ(step2_reasons[dup].rfind("same code as maxcode-", 0), 0u) << step2_reasons[dup];
  EXPECT_EQ(step2_verdicts[1 - dup], "incorrect") << step2_reasons[1 - dup];
  ASSERT_FALSE(result["winner"].is_null());
  EXPECT_EQ(result["candidates"][4]["verdict"], "incorrect");
  EXPECT_EQ(result["evaluations"], 4);
  EXPECT_EQ(result["spend"]["tokens"], 6 * 1500);
  EXPECT_EQ(result["spend"]["llm_calls"], 6);
  EXPECT_EQ(result["spend"]["unusable_replies"], 0);
  EXPECT_NEAR(result["spend"]["dollars"].get<double>(), 6 * (1200 * 2.0 + 300 * 8.0) / 1e6, 1e-9);
  EXPECT_EQ(lines(out / "trajectory.jsonl"), 5u);
  EXPECT_NE(read_text(out / "report.html").find("<svg"), std::string::npos);
  for (const char* file : {"result.json", "report.md", "report.html", "trajectory.jsonl", "checkpoint.json"})
    EXPECT_EQ(read_text(out / file).find(kKey), std::string::npos) << "the key leaked into " << file;

  // Training data from the rollout store.
  Outcome exported = maxcode("export --db " + (out / "rollouts.sqlite").string() + " --out " + (dir / "export").string());
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_EQ(lines(dir / "export/sft.jsonl"), 1u);
  auto pair = nlohmann::json::parse(read_text(dir / "export/sft.jsonl"));
  EXPECT_EQ(pair["messages"][2]["role"], "assistant");
  EXPECT_NE(pair["messages"][2]["content"].get<std::string>().find("s += square(v[i]);"), std::string::npos);
  EXPECT_NE(pair["messages"][1]["content"].get<std::string>().find("PASSES"), std::string::npos) << "the original";
  EXPECT_EQ(lines(dir / "export/rtg.jsonl"), 4u);  // the repeat is not a sample
  EXPECT_EQ(lines(dir / "export/rewards.jsonl"), 4u);
  std::istringstream rewards(read_text(dir / "export/rewards.jsonl"));
  std::map<std::string, double> by_verdict;
  for (std::string line; std::getline(rewards, line);) {
    auto r = nlohmann::json::parse(line);
    by_verdict[r["verdict"]] = r["reward"];
  }
  EXPECT_DOUBLE_EQ(by_verdict["faster"], 1.0);
  EXPECT_DOUBLE_EQ(by_verdict["compile-error"], 0.0);
  EXPECT_EQ(by_verdict.count("rejected"), 0u) << "the reply without code was asked again and became a candidate";
  EXPECT_DOUBLE_EQ(by_verdict["incorrect"], 0.4);  // compiles, not correct
  std::istringstream rtg(read_text(dir / "export/rtg.jsonl"));
  std::string first_line;
  std::getline(rtg, first_line);
  EXPECT_GT(nlohmann::json::parse(first_line)["reward_to_go"].get<double>(), 1.0)
      << "the first sample's path reaches the winner";
}

TEST(LlmSearch, ARejectedKeyStopsTheRunAndNamesTheVariable) {
  LlmServer server;
  server.script("/v1/chat/completions", {testing::fixture_reply("openai_error_401.json", 401)});
  testing::ScopedEnv key(kKeyVariable, kKey);
  testing::TempDir dir;
  const fs::path repo = repo_with_llm(dir, server.url() + "/v1");
  Outcome o = maxcode("optimize " + repo.string() + " --out " + (dir / "out").string() + " -q");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.err.find(kKeyVariable), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find(kKey), std::string::npos) << "the key itself must never be printed";
  auto result = nlohmann::json::parse(read_text(dir / "out/result.json"));
  EXPECT_NE(result.value("fatal", "").find(kKeyVariable), std::string::npos);
  EXPECT_EQ(server.requests().size(), 2u) << "no retries on 401 (one request per proposal)";
}

}  // namespace
}  // namespace maxcode

namespace maxcode {
namespace {

using testing::LlmServer;
namespace fs = std::filesystem;

// Issue 11: a candidate that prints its environment, prints secrets it was given in its
// own code, reads a key file and writes outside its workspace. With model keys, a
// GitHub token and an App key file in maxcode's environment, no secret may reach any
// output file or any prompt, and no write outside the workspace may land, under each
// file-system isolation this machine runs.
TEST(LlmSearch, ACandidateThatLooksForSecretsFindsNoneAndCannotWriteOutside) {
  const std::string openai = "sk-openai-secret-7a1c9e0b55d2";
  const std::string anthropic = "sk-ant-secret-41f0a8c3bb97";
  const std::string github = "ghp_githubsecret2f9d1e77c0aa";
  const std::string key_line = "MIIEpAIBAAKCAQEA3kq9ZsecretkeylineQ7v0T1x2Y3z4";
  testing::TempDir keys;
  testing::write_file(keys / "app.pem",
                      "-----BEGIN RSA PRIVATE KEY-----\n" + key_line + "\n-----END RSA PRIVATE KEY-----\n");
  testing::ScopedEnv llm_key(kKeyVariable, kKey);
  testing::ScopedEnv openai_key("OPENAI_API_KEY", openai.c_str());
  testing::ScopedEnv anthropic_key("ANTHROPIC_API_KEY", anthropic.c_str());
  testing::ScopedEnv github_token("GITHUB_TOKEN", github.c_str());
  testing::ScopedEnv app_key("MAXCODE_APP_KEY_FILE", (keys / "app.pem").c_str());
  const std::vector<std::string> secrets = {kKey, openai, anthropic, github, key_line};

  const char* home_env = std::getenv("HOME");
  const std::string tag = "maxcode-leak-" + std::to_string(getpid());
  const std::string host_home = home_env && *home_env ? home_env : "/root";

  for (const char* mode : {"bubblewrap", "namespaces"}) {
    SCOPED_TRACE(mode);
    Command probe;
    probe.shell = "true";
    probe.isolate = true;
    if (!run_isolated(probe, std::string(mode) == "bubblewrap" ? Isolation::kBubblewrap : Isolation::kNamespaces).ok()) {
      std::printf("isolation %s: not available here, skipped\n", mode);
      continue;
    }
    testing::TempDir dir;
    LlmServer server;
    const fs::path repo = repo_with_llm(dir, server.url() + "/v1");
    const std::vector<std::string> outside = {host_home + "/" + tag, (repo / tag).string(), "/tmp/" + tag,
                                              testing::source_path(tag).string(), "/" + tag};
    // Output differences reach reports and prompts by their first tokens, so each
    // candidate prints what it found first: A its environment's keys (none, one hopes)
    // and the seed as a control, B secrets written into its own code (as if a model had
    // been shown one), which only redaction can catch.
    std::string script = "echo probe:$OPENAI_API_KEY:$ANTHROPIC_API_KEY:$GITHUB_TOKEN:$MAXCODE_APP_KEY_FILE:$" +
                         std::string(kKeyVariable) + ":$MAXCODE_SEED; cat " + (keys / "app.pem").string() +
                         " 2>/dev/null; for f in";
    for (const auto& path : outside) script += " " + path;
    script += "; do (echo x > $f) 2>/dev/null && echo wrote $f; done";
    auto candidate = [](const std::string& shell) {
      return "```cpp\nlong long sum_squares(const int* v, int n) {\n"
             "  extern int run_shell(const char*) __asm__(\"system\");\n"
             "  static bool done = false;\n"
             "  if (!done) { done = true; run_shell(\"" + shell + "\"); }\n"
             "  long long s = 0;\n  for (int i = 0; i < n; ++i) s += square(v[i]);\n  return s;\n}\n```\n";
    };
    const std::string leaky = candidate(script);
    const std::string given = candidate("echo given:" + github + ":" + key_line);
    server.script("/v1/chat/completions", {completion(leaky), completion(given), completion(kNoCode)});

    const fs::path out = dir / "out";
    Command c;
    c.shell = std::string(MAXCODE_BINARY) + " optimize " + repo.string() + " --max-evaluations 4 --out " +
              out.string() + " -q";
    c.timeout_s = 300;
    c.env = {{"MAXCODE_ISOLATION", mode}};
    Outcome o = run(c);
    ASSERT_EQ(o.exit_code, 0) << o.err;

    const nlohmann::json result = nlohmann::json::parse(read_text(out / "result.json"));
    EXPECT_EQ(result["environment"]["isolation"], mode);
    // The channel exists: the candidate ran and its environment dump reached the
    // feedback (so a secret in it would have too).
    std::string everything;
    for (const auto& entry : fs::recursive_directory_iterator(out)) {
      if (entry.is_regular_file()) everything += read_text(entry.path());
    }
    EXPECT_NE(everything.find("probe::::::1"), std::string::npos)
        << "candidate A's first token is in the outputs: "
        << everything.substr(std::min(everything.find("probe"), everything.size()), 300);
    EXPECT_NE(everything.find("given:[redacted]:[redacted]"), std::string::npos) << "candidate B's, redacted";
    for (const auto& entry : fs::recursive_directory_iterator(out)) {
      if (!entry.is_regular_file()) continue;
      const std::string text = read_text(entry.path());
      for (const auto& secret : secrets)
        EXPECT_EQ(text.find(secret), std::string::npos) << entry.path() << " holds " << secret;
    }
    const auto requests = server.requests();
    ASSERT_GE(requests.size(), 3u);
    bool feedback_seen = false;
    for (const auto& r : requests) {
      for (const auto& secret : secrets) EXPECT_EQ(r.body.find(secret), std::string::npos) << "a prompt holds " << secret;
      feedback_seen |= r.body.find("probe::::::") != std::string::npos;
    }
    EXPECT_TRUE(feedback_seen) << "the second step's prompt shows the candidate's output";
    for (const auto& path : outside) {
      EXPECT_FALSE(fs::exists(path)) << "the candidate wrote " << path;
      std::error_code ignored;
      fs::remove(path, ignored);
    }
  }
}

}  // namespace
}  // namespace maxcode
