// Text from a model or a repository, made inert for a PR body: no mentions, no issue
// references, no HTML, fences that cannot swallow the rest of the body.
#include <gtest/gtest.h>

#include "bot/delivery/branch_name.h"
#include "bot/delivery/pr_metadata.h"
#include "bot/delivery/sanitize.h"

namespace maxcode::bot {
namespace {

const std::string zwj(kZeroWidthJoiner);

TEST(Sanitize, MentionsGetAZeroWidthJoiner) {
  EXPECT_EQ(sanitize_markdown("ask @octocat and @github/security"),
            "ask @" + zwj + "octocat and @" + zwj + "github/security");
  EXPECT_EQ(sanitize_markdown("mail me: a@b.com"), "mail me: a@" + zwj + "b.com");
  EXPECT_EQ(sanitize_markdown("a lone @ stays"), "a lone @ stays");
}

TEST(Sanitize, IssueReferencesAreBroken) {
  EXPECT_EQ(sanitize_markdown("fixes #123, closes GH-7, see org/repo#9"),
            "fixes #" + zwj + "123, closes GH-" + zwj + "7, see org/repo#" + zwj + "9");
  EXPECT_EQ(sanitize_markdown("## heading #x"), "## heading #x");  // not a reference
  EXPECT_EQ(sanitize_markdown("SIGH-1"), "SIGH-1");               // only GH- at a word start
}

TEST(Sanitize, HtmlIsEscapedAndImagesBecomeLinks) {
  EXPECT_EQ(sanitize_markdown("<img src=x onerror=alert(1)> <!-- maxcode: {} -->"),
            "&lt;img src=x onerror=alert(1)> &lt;!-- maxcode: {} -->");
  EXPECT_EQ(sanitize_markdown("![pixel](https://t.example/p.png)"), "\\![pixel](https://t.example/p.png)");
}

TEST(Sanitize, CodeIsLeftAlone) {
  EXPECT_EQ(sanitize_markdown("use `std::vector<int>` and `@cache`"), "use `std::vector<int>` and `@cache`");
  EXPECT_EQ(sanitize_markdown("```cpp\nx = a<b; // @me #1\n```\nafter @me"),
            "```cpp\nx = a<b; // @me #1\n```\nafter @" + zwj + "me");
  // An unmatched backtick is literal text: what follows is still sanitized.
  EXPECT_EQ(sanitize_markdown("a ` b @me"), "a ` b @" + zwj + "me");
}

TEST(Sanitize, AnUnclosedFenceIsClosed) {
  const std::string out = sanitize_markdown("text\n~~~~\ncode @me");
  EXPECT_EQ(out, "text\n~~~~\ncode @me\n~~~~\n");
}

TEST(Sanitize, InvisibleDirectionOverridesAreDropped) {
  EXPECT_EQ(sanitize_markdown("safe\xE2\x80\xAEtxt.exe\x07"), "safetxt.exe");
}

TEST(Sanitize, InlineTextFitsATableCell) {
  EXPECT_EQ(sanitize_inline("a | b\nc @d"), "a \\| b c @" + zwj + "d");
  const std::string cut = sanitize_inline(std::string(300, 'x'), 10);
  EXPECT_EQ(cut, std::string(10, 'x') + "…");
  // Never cuts inside a UTF-8 character.
  EXPECT_EQ(sanitize_inline("ééé", 3), "é…");
}

TEST(Sanitize, PlainTextForTitlesBreaksLinksButEscapesNothing) {
  EXPECT_EQ(sanitize_plain("operator<\n@x #1"), "operator< @" + zwj + "x #" + zwj + "1");
}

TEST(Sanitize, CodeBlocksAndSpansCannotBeClosedByTheirContent) {
  EXPECT_EQ(code_block("a\n```\nb"), "````\na\n```\nb\n````\n");
  EXPECT_EQ(code_span("x`y"), "``x`y``");
  EXPECT_EQ(code_span("`a"), "`` `a ``");
}

TEST(BranchName, IsDeterministicAndRefSafe) {
  EXPECT_EQ(branch_for("src/histogram.cpp", "histogram"), "maxcode/src-histogram-cpp/histogram");
  EXPECT_EQ(branch_for("a/b..c.lock", "ns::f<int>"), "maxcode/a-b-c-lock/ns-f-int");
  EXPECT_EQ(branch_for("../x", "operator()"), "maxcode/x/operator");
  EXPECT_EQ(slug("..."), "x");
  EXPECT_LE(slug(std::string(500, 'a')).size(), 80u);
}

TEST(Metadata, RoundTripsAndCannotEndTheCommentEarly) {
  const nlohmann::json meta{{"signature", "T* operator->() -->"}, {"target_hash", "abc"}};
  const std::string line = render_metadata(meta);
  EXPECT_EQ(line.find("-->"), line.size() - 3) << line;
  const auto back = parse_metadata("body text\n\n" + line + "\n");
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, meta);
  EXPECT_FALSE(parse_metadata("no metadata here"));
  EXPECT_FALSE(parse_metadata("<!-- maxcode: not json -->"));
}

TEST(Metadata, CodeHashIgnoresTrailingBlanksAndLineEndings) {
  EXPECT_EQ(code_hash("int f() {\r\n  return 1;  \n}\n"), code_hash("int f() {\n  return 1;\n}"));
  EXPECT_NE(code_hash("int f() { return 1; }"), code_hash("int f() { return 2; }"));
  EXPECT_EQ(lines_of("a\nb\nc\nd\n", 2, 3), "b\nc\n");
  EXPECT_EQ(lines_of("a\n", 5, 6), "");
}

}  // namespace
}  // namespace maxcode::bot
