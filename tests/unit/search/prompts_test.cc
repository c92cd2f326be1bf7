#include "runner/search/prompts.h"

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace maxcode {
namespace {

TEST(Prompts, RenderReplacesEveryPlaceholderOnce) {
  EXPECT_EQ(render_template("{{a}} and {{b}}; {{a}}", {{"a", "x"}, {"b", "{{a}}"}}), "x and {{a}}; x");
}

TEST(Prompts, UnknownPlaceholderIsAnError) {
  try {
    render_template("Hello {{nmae}}", {{"name", "x"}});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("{{nmae}}"), std::string::npos);
  }
}

TEST(Prompts, DefaultsFollowThePaper) {
  Prompts p = default_prompts();
  EXPECT_NE(p.propose.find("{{best}}"), std::string::npos);
  EXPECT_NE(p.propose.find("{{trajectory}}"), std::string::npos);
  EXPECT_NE(p.propose.find("{{instruction}}"), std::string::npos);
  EXPECT_NE(p.critique.find("memory bandwidth"), std::string::npos);
  EXPECT_NE(p.rerank.find("one number"), std::string::npos);
}

TEST(Prompts, RepositoryOverridesOneTemplate) {
  testing::TempDir dir;
  testing::write_file(dir / ".maxcode/prompts/critique.md", "Be brief about {{function}}.");
  Prompts p = load_prompts(dir.path());
  EXPECT_EQ(p.critique, "Be brief about {{function}}.");
  EXPECT_EQ(p.propose, default_prompts().propose);
}

}  // namespace
}  // namespace maxcode
