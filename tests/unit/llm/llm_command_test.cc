// The command provider: the prompt on a program's standard input, its standard output
// as the reply, its failures as kCommand errors with the tail of what it printed.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "runner/llm/provider.h"

namespace maxcode::llm {
namespace {

ProviderConfig command_config(const std::string& command, double timeout_s = 10) {
  ProviderConfig config;
  config.provider = "command";
  config.command = command;
  config.timeout_s = timeout_s;
  return config;
}

Request sample_request() {
  Request request;
  request.purpose = "propose";
  request.messages = {{"system", "You optimize C++."}, {"user", "Make it fast."}};
  return request;
}

template <class Call>
std::string expect_error(ErrorKind kind, Call&& call) {
  try {
    call();
  } catch (const LlmError& error) {
    EXPECT_EQ(error_kind_name(error.kind()), std::string(error_kind_name(kind))) << error.what();
    return error.what();
  }
  ADD_FAILURE() << "expected an LlmError of kind " << error_kind_name(kind);
  return "";
}

TEST(CommandProvider, ThePromptGoesToStdinAndStdoutIsTheReply) {
  Reply reply = make_provider(command_config("cat"))->complete(sample_request());
  EXPECT_EQ(reply.text, "### system\nYou optimize C++.\n\n### user\nMake it fast.");
  EXPECT_EQ(reply.finish_reason, "stop");
  EXPECT_EQ(reply.model, "command");
  EXPECT_EQ(reply.usage.input_tokens, 0);
  EXPECT_EQ(reply.attempts, 1);
}

TEST(CommandProvider, TheProgramLearnsPurposeModelAndLimits) {
  ProviderConfig config = command_config(
      "echo \"$MAXCODE_LLM_PURPOSE $MAXCODE_LLM_MODEL $MAXCODE_LLM_TEMPERATURE "
      "$MAXCODE_LLM_MAX_TOKENS\"");
  config.model = "local-7b";
  Request request = sample_request();
  request.temperature = 0.25;
  Reply reply = make_provider(config)->complete(request);
  EXPECT_EQ(reply.text, "propose local-7b 0.25 4096\n");
  EXPECT_EQ(reply.model, "local-7b");
}

TEST(CommandProvider, ALargePromptIsFedWhole) {
  Request request;
  request.messages = {{"user", std::string(1 << 20, 'x')}};
  Reply reply = make_provider(command_config("wc -c"))->complete(request);
  EXPECT_EQ(std::stol(reply.text), (1 << 20) + std::string("### user\n").size());
}

TEST(CommandProvider, AProgramThatIgnoresItsInputStillAnswers) {
  Request request;
  request.messages = {{"user", std::string(1 << 20, 'x')}};
  Reply reply = make_provider(command_config("echo ignored"))->complete(request);
  EXPECT_EQ(reply.text, "ignored\n");
}

TEST(CommandProvider, AFailingProgramIsACommandErrorWithItsStderr) {
  auto provider = make_provider(command_config("echo 'model not loaded' >&2; exit 3"));
  std::string message = expect_error(ErrorKind::kCommand, [&] { provider->complete(sample_request()); });
  EXPECT_NE(message.find("exit code 3"), std::string::npos) << message;
  EXPECT_NE(message.find("model not loaded"), std::string::npos) << message;
  EXPECT_EQ(message.rfind("propose: command `", 0), 0u) << message;
}

TEST(CommandProvider, AProgramThatHangsIsStoppedAtTheTimeout) {
  auto provider = make_provider(command_config("cat >/dev/null; sleep 30", 1));
  auto start = std::chrono::steady_clock::now();
  std::string message = expect_error(ErrorKind::kCommand, [&] { provider->complete(sample_request()); });
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(elapsed, 2.0);
  EXPECT_NE(message.find("timed out"), std::string::npos) << message;
}

TEST(CommandProvider, NoOutputIsABadReply) {
  auto provider = make_provider(command_config("cat >/dev/null"));
  std::string message = expect_error(ErrorKind::kBadReply, [&] { provider->complete(sample_request()); });
  EXPECT_NE(message.find("printed nothing"), std::string::npos) << message;
}

TEST(CommandProvider, DescribeShowsTheCommand) {
  EXPECT_EQ(make_provider(command_config("./llm.sh --fast"))->describe(), "command `./llm.sh --fast`");
}

}  // namespace
}  // namespace maxcode::llm
