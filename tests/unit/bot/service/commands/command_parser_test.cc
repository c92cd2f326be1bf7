#include "bot/service/commands/command_parser.h"

#include <gtest/gtest.h>

namespace maxcode::bot::service {
namespace {

using Kind = CommentCommand::Kind;

TEST(CommandParser, ReadsTheCommands) {
  auto c = parse_comment_command("/maxcode optimize histogram --policy replay");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->kind, Kind::kOptimize);
  EXPECT_EQ(c->function, "histogram");
  EXPECT_EQ(c->policy, "replay");
  c = parse_comment_command("Thanks!\r\n\r\n  /maxcode optimize\r\nmore text");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->kind, Kind::kOptimize);
  EXPECT_EQ(c->function, "");
  c = parse_comment_command("/maxcode optimize --policy=tune ns::f");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->function, "ns::f");
  EXPECT_EQ(c->policy, "tune");
  EXPECT_EQ(parse_comment_command("/maxcode status")->kind, Kind::kStatus);
  EXPECT_EQ(parse_comment_command("/maxcode   cancel ")->kind, Kind::kCancel);
}

TEST(CommandParser, OrdinaryCommentsAreNotCommands) {
  EXPECT_FALSE(parse_comment_command("Looks good to me"));
  EXPECT_FALSE(parse_comment_command("see `/maxcode optimize` in the docs"));
  EXPECT_FALSE(parse_comment_command("/maxcodefoo optimize"));
  EXPECT_FALSE(parse_comment_command(""));
}

TEST(CommandParser, SaysWhatIsWrong) {
  auto expect_invalid = [](const std::string& text, const std::string& part) {
    auto c = parse_comment_command(text);
    ASSERT_TRUE(c) << text;
    EXPECT_EQ(c->kind, Kind::kInvalid) << text;
    EXPECT_NE(c->error.find(part), std::string::npos) << c->error;
  };
  expect_invalid("/maxcode", "no command");
  expect_invalid("/maxcode deploy", "unknown command 'deploy'");
  expect_invalid("/maxcode optimize f --policy", "--policy needs a value");
  expect_invalid("/maxcode optimize f --policy fastest", "unknown policy 'fastest'");
  expect_invalid("/maxcode optimize f g", "one function at a time");
  expect_invalid("/maxcode optimize f --force", "unknown option '--force'");
  expect_invalid("/maxcode optimize $(rm -rf /)", "is not a function name");
  expect_invalid("/maxcode status now", "takes no arguments");
}

}  // namespace
}  // namespace maxcode::bot::service
