#include "runner/workspace/knobs.h"

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace maxcode {
namespace {

TEST(Knobs, CommentOnTheSameLine) {
  auto knobs = find_declared_knobs("#include <x>\n#define LANES 1  // maxcode: tune LANES 1 2 4 8\n", "a.cc");
  ASSERT_EQ(knobs.size(), 1u);
  EXPECT_EQ(knobs[0].name, "LANES");
  EXPECT_EQ(knobs[0].line, 2u);
  EXPECT_EQ(knobs[0].original_value, "1");
  EXPECT_EQ(knobs[0].values, (std::vector<std::string>{"1", "2", "4", "8"}));
}

TEST(Knobs, CommentAboveAConstexpr) {
  auto knobs = find_declared_knobs("// maxcode: tune kTile 8 16 32\nstatic constexpr int kTile = 16;\n", "a.cc");
  ASSERT_EQ(knobs.size(), 1u);
  EXPECT_EQ(knobs[0].line, 2u);
  EXPECT_EQ(knobs[0].original_value, "16");
}

TEST(Knobs, CommentWithoutDeclarationIsAnError) {
  try {
    find_declared_knobs("int x;\n// maxcode: tune BLOCK 1 2\nint y;\n", "k.cu");
    FAIL();
  } catch (const KnobError& e) {
    EXPECT_NE(std::string(e.what()).find("k.cu:2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("BLOCK"), std::string::npos);
  }
}

TEST(Knobs, ApplyRewritesOnlyTheValue) {
  const std::string text = "#define A 1 // maxcode: tune A 1 2\nconstexpr int B = 3; // maxcode: tune B 3 5\nint A_ = 1;\n";
  auto knobs = find_declared_knobs(text, "f.cc");
  ASSERT_EQ(knobs.size(), 2u);
  EXPECT_EQ(apply_knobs(text, "f.cc", knobs, {{"A", "2"}, {"B", "5"}}),
            "#define A 2 // maxcode: tune A 1 2\nconstexpr int B = 5; // maxcode: tune B 3 5\nint A_ = 1;\n");
  EXPECT_EQ(apply_knobs(text, "other.cc", knobs, {{"A", "2"}}), text);
}

TEST(Knobs, ConfigKnobIsLocatedOrNamedMissing) {
  KnobConfig config{"BLOCK", {"64", "128"}, ""};
  Knob k = locate_knob("int a;\n#define BLOCK 256\n", "k.cu", config);
  EXPECT_EQ(k.line, 2u);
  EXPECT_EQ(k.original_value, "256");
  EXPECT_THROW(locate_knob("int BLOCK = 3;\n", "k.cu", config), KnobError);
}

TEST(Knobs, ValueInLineIgnoresSimilarNames) {
  EXPECT_EQ(knob_value_in_line("#define LANES2 4", "LANES"), "");
  EXPECT_EQ(knob_value_in_line("#define LANES 4", "LANES"), "4");
  EXPECT_EQ(knob_value_in_line("constexpr unsigned kN = 128u;", "kN"), "128u");
}

// The knob lines are parsed by hand (issue 22, point 9): std::regex recursed once per
// character and a 60,000-character line overflowed the stack.
TEST(Knobs, LongLinesParseWithoutCrashing) {
  const std::string value(60'000, '1');
  auto define = parse_knob_line("#define LANES " + value + "  // maxcode: tune LANES 1 2");
  ASSERT_TRUE(define);
  EXPECT_EQ(define->name, "LANES");
  EXPECT_EQ(define->before, "#define LANES ");
  EXPECT_EQ(define->value, value);
  EXPECT_EQ(define->after, "  // maxcode: tune LANES 1 2");
  auto constant = parse_knob_line("static constexpr int kTile = " + value + ";" + std::string(60'000, ' '));
  ASSERT_TRUE(constant);
  EXPECT_EQ(constant->name, "kTile");
  EXPECT_EQ(constant->value, value);
  EXPECT_FALSE(parse_knob_line("#define " + std::string(60'000, 'X')));           // no value
  EXPECT_FALSE(parse_knob_line("constexpr int " + std::string(60'000, 'x') + ";"));  // no '='

  std::string values;
  for (int i = 0; i < 20'000; ++i) values += " " + std::to_string(i);
  auto knobs = find_declared_knobs("#define LANES 1  // maxcode: tune LANES" + values + "\n", "a.cc");
  ASSERT_EQ(knobs.size(), 1u);
  EXPECT_EQ(knobs[0].values.size(), 20'000u);
}

// The hand parser keeps the patterns it replaced, edge cases included.
TEST(Knobs, LineParserKeepsThePatterns) {
  auto parts = [](const std::string& line) {
    auto d = parse_knob_line(line);
    return d ? d->name + "|" + d->before + "|" + d->value + "|" + d->after : std::string("none");
  };
  EXPECT_EQ(parts("  #  define  N  8 /* eight */"), "N|  #  define  N  |8| /* eight */");
  EXPECT_EQ(parts("#define N 4\r"), "N|#define N |4|\r");
  EXPECT_EQ(parts("#define N 4 // c\r"), "N|#define N |4 // c|\r");  // `.` takes no \r
  EXPECT_EQ(parts("#define F(x) x"), "none");
  EXPECT_EQ(parts("#defineN 4"), "none");
  EXPECT_EQ(parts("__host__ __device__ constexpr unsigned kMask = 0xff ;  // mask"),
            "kMask|__host__ __device__ constexpr unsigned kMask = |0xff| ;  // mask");
  EXPECT_EQ(parts("inline constexpr auto x=1;"), "x|inline constexpr auto x=|1|;");
  EXPECT_EQ(parts("constexpr int 2x = 1;"), "none");
  EXPECT_EQ(parts("const constexpr int x = 1;"), "none");
  EXPECT_EQ(parts("constexpr int a = 1; int b = 2;"), "a|constexpr int a = |1|; int b = 2;");
}

TEST(Knobs, ARepositoryDeclaresKnobsOnlyInItsSources) {
  testing::TempDir dir;
  testing::write_file(dir / "src/a.cpp", "int f() { return 1; }  // maxcode: tuned by hand\n");
  testing::write_file(dir / "README.md", "// maxcode: tune N 1 2\n");
  testing::write_file(dir / "build/gen.h", "#define N 1  // maxcode: tune N 1 2\n");
  testing::write_file(dir / ".git/x.c", "#define N 1  // maxcode: tune N 1 2\n");
  EXPECT_FALSE(repository_declares_knobs(dir.path()));
  testing::write_file(dir / "src/deep/b.cu", "#define TILE 16 //maxcode:  tune TILE 8 16 32\n");
  EXPECT_TRUE(repository_declares_knobs(dir.path()));
}

}  // namespace
}  // namespace maxcode
