#include "runner/search/reply.h"

#include <gtest/gtest.h>

#include "runner/search/policy.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

const char* kDefinition = "int f(int x) {\n  return x + 1;\n}";

TEST(Reply, OneBlockWithProseAround) {
  ParsedReply p = parse_reply(std::string("I unrolled it.\n```cpp\n") + kDefinition + "\n```\nDone.", "f");
  ASSERT_TRUE(p.code) << p.error;
  EXPECT_EQ(*p.code, kDefinition);
  EXPECT_EQ(p.rationale, "I unrolled it.\nDone.");
}

TEST(Reply, HelpersBeforeTheDefinitionStayInTheBlock) {
  ParsedReply p = parse_reply("```c++\n#include <cstring>\nstatic int g() { return 2; }\nint f(int x) { return x + g(); }\n```", "f");
  ASSERT_TRUE(p.code) << p.error;
  EXPECT_NE(p.code->find("#include <cstring>"), std::string::npos);
  EXPECT_NE(p.code->find("static int g()"), std::string::npos);
}

TEST(Reply, NoCodeBlock) {
  ParsedReply p = parse_reply("You could unroll the loop.", "f");
  EXPECT_FALSE(p.code);
  EXPECT_EQ(p.error, "the reply has no fenced code block");
}

TEST(Reply, Refusal) {
  ParsedReply p = parse_reply("I'm sorry, but I can't help with that.", "f");
  EXPECT_FALSE(p.code);
  EXPECT_NE(p.error.find("declined"), std::string::npos) << p.error;
}

// Two versions: the last is the model's final word, and the rationale says one was
// passed over.
TEST(Reply, OfTwoDifferentVersionsTheLastIsTaken) {
  ParsedReply p = parse_reply("```cpp\nint f(int x) { return x + 1; }\n```\nor\n```cpp\nint f(int x) { return 1 + x; }\n```", "f");
  ASSERT_TRUE(p.code) << p.error;
  EXPECT_EQ(*p.code, "int f(int x) { return 1 + x; }");
  EXPECT_NE(p.rationale.find("2 versions of 'f'; the last was taken"), std::string::npos) << p.rationale;
}

// The original quoted back is not a version: the other block is the answer, even first.
TEST(Reply, TheOriginalQuotedBackIsPassedOver) {
  ParsedReply p = parse_reply("```cpp\nint f(int x) { return x * 2; }\n```\nwas\n```cpp\nint f(int x) {\n  return x + x;\n}\n```",
                              "f", "stop", "int f(int x) {\n  return x + x;\n}\n");
  ASSERT_TRUE(p.code) << p.error;
  EXPECT_EQ(*p.code, "int f(int x) { return x * 2; }");
  EXPECT_EQ(p.rationale.find("versions"), std::string::npos) << p.rationale;
}

// A reasoning model's drafts inside <think> are not the answer; an answer that never
// comes says so.
TEST(Reply, ReasoningSectionsAreNotTheAnswer) {
  ParsedReply p = parse_reply("<think>\n```cpp\nint f(int x) { return 0; }\n```\n</think>\n```cpp\nint f(int x) { return x; }\n```", "f");
  ASSERT_TRUE(p.code) << p.error;
  EXPECT_EQ(*p.code, "int f(int x) { return x; }");
  ParsedReply open = parse_reply("<think>\n```cpp\nint f(int x) { return 0; }\n```\nhmm", "f");
  EXPECT_FALSE(open.code);
  EXPECT_NE(open.error.find("all reasoning"), std::string::npos) << open.error;
}

TEST(Reply, TheSameBlockTwiceIsFine) {
  ParsedReply p = parse_reply("```cpp\nint f(int x) { return x + 1; }\n```\nAgain:\n```cpp\nint f(int x) {\n  return x + 1;  // same\n}\n```", "f");
  EXPECT_TRUE(p.code) << p.error;
}

TEST(Reply, BlockCutOffMidDefinition) {
  ParsedReply p = parse_reply("```cpp\nint f(int x) {\n  for (int i = 0; i < x; ++i) {\n", "f", "length");
  EXPECT_FALSE(p.code);
  EXPECT_NE(p.error.find("cut off"), std::string::npos) << p.error;
  EXPECT_NE(p.error.find("token limit"), std::string::npos) << p.error;
}

TEST(Reply, UnclosedFenceWithoutLimitIsStillCutOff) {
  ParsedReply p = parse_reply("```cpp\nint f(int x) {\n  return x;\n", "f");
  EXPECT_FALSE(p.code);
  EXPECT_NE(p.error.find("cut off"), std::string::npos) << p.error;
}

TEST(Reply, BlocksThatDefineSomethingElse) {
  ParsedReply p = parse_reply("```cpp\nint g(int x) { return x; }\n```", "f");
  EXPECT_FALSE(p.code);
  EXPECT_EQ(p.error, "no code block defines 'f'");
}

TEST(Reply, TildeFencesAndLongerFences) {
  EXPECT_TRUE(parse_reply("~~~\nint f(int x) { return x; }\n~~~", "f").code);
  EXPECT_TRUE(parse_reply("````cpp\nint f(int x) { return x; } // ``` inside\n````", "f").code);
}

// A reply or a replay file of megabytes (issue 22, point 9) is a rejected candidate
// with its size, not text carried through every record.
TEST(Reply, OverFourMebibytesIsRejected) {
  const std::string huge = "```cpp\n" + std::string(kDefinition) + "\n// " + std::string(5 << 20, 'x') + "\n```\n";
  ParsedReply p = parse_reply(huge, "f");
  EXPECT_FALSE(p.code);
  EXPECT_EQ(p.error, "the reply is " + std::to_string(huge.size()) + " bytes; a candidate is at most 4 MiB");

  testing::TempDir dir;
  testing::write_file(dir / "big.cpp", huge);
  const Candidate c = read_candidate_file(dir / "big.cpp", "replay");
  EXPECT_FALSE(c.definition);
  ASSERT_TRUE(c.error);
  EXPECT_EQ(*c.error, "the file is " + std::to_string(huge.size()) + " bytes; a candidate is at most 4 MiB");
  testing::write_file(dir / "small.cpp", kDefinition);
  EXPECT_EQ(*read_candidate_file(dir / "small.cpp", "replay").definition, kDefinition);
}

}  // namespace
}  // namespace maxcode
