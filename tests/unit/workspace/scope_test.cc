#include "runner/workspace/scope.h"

#include <gtest/gtest.h>

#include <string>

#include "runner/workspace/source_extent.h"

namespace maxcode {
namespace {

const std::string kTarget =
    "int target(const std::vector<int>& v) {\n"
    "  int s = 0;\n"
    "  for (int x : v) s += x;\n"
    "  return s;\n"
    "}\n";

const std::string kBefore =
    "#include <vector>\n"                                     // 1
    "\n"                                                      // 2
    "#define BLOCK 128  // maxcode: tune BLOCK 64 128 256\n"  // 3
    "static constexpr int kLanes = 4;\n"                      // 4
    "\n"                                                      // 5
    "static int other(int x) {\n"                             // 6
    "  return x + 1;\n"                                       // 7
    "}\n"                                                     // 8
    "\n"                                                      // 9
    "// Sums the values.\n";                                  // 10, target at 11-15

const std::string kAfter =
    "\n"                    // 16
    "int after(int y) {\n"  // 17
    "  return y * 2;\n"     // 18
    "}\n";                  // 19

const std::string kOriginal = kBefore + kTarget + kAfter;

const std::string kFaster =
    "int target(const std::vector<int>& v) {\n"
    "  return std::accumulate(v.begin(), v.end(), 0);\n"
    "}\n";

const std::string kHelper = "static int twice(int a) { return 2 * a; }\n";

const std::vector<KnobLine> kKnobs = {{"BLOCK", {"64", "128", "256"}}, {"kLanes", {"2", "4", "8"}}};

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

ScopeVerdict check(const std::string& candidate, const std::vector<KnobLine>& knobs = kKnobs) {
  const Extent extent = find_definition(kOriginal, "target", "src/a.cpp");
  return check_target_file(kOriginal, candidate, extent, "target", "src/a.cpp", knobs);
}

void expect_ok(const ScopeVerdict& v) { EXPECT_TRUE(v.ok) << v.reason; }

void expect_rejected(const ScopeVerdict& v, const std::string& reason) {
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.reason, reason);
}

TEST(Scope, TheExtentUnderTestIsTheTarget) {
  const Extent extent = find_definition(kOriginal, "target", "src/a.cpp");
  EXPECT_EQ(extent.line_begin, 11u);
  EXPECT_EQ(extent.line_end, 15u);
}

TEST(Scope, UnchangedFileIsAllowed) { expect_ok(check(kOriginal)); }

TEST(Scope, BodyChangeIsAllowed) { expect_ok(check(kBefore + kFaster + kAfter)); }

TEST(Scope, HelperInsertedBefore) { expect_ok(check(kBefore + kHelper + "\n" + kFaster + kAfter)); }

TEST(Scope, HelperInsertedAboveTheDocComment) {
  const std::string before = replaced(kBefore, "// Sums the values.\n", "");
  expect_ok(check(before + kHelper + "// Sums the values, faster.\n" + kFaster + kAfter));
}

TEST(Scope, HelperInsertedAfter) { expect_ok(check(kBefore + kFaster + "\n" + kHelper + kAfter)); }

TEST(Scope, BlankLinesNextToTheTargetMayChange) {
  const std::string before = replaced(kBefore, "}\n\n// Sums", "}\n// Sums");
  expect_ok(check(before + kFaster + "\n\n" + kAfter));
}

TEST(Scope, KnobValuesFromTheirListsAreAllowed) {
  std::string candidate = replaced(kOriginal, "#define BLOCK 128", "#define BLOCK 256");
  candidate = replaced(candidate, "kLanes = 4;", "kLanes = 8;");
  expect_ok(check(candidate));
}

TEST(Scope, KnobValueOutsideItsListIsRejected) {
  expect_rejected(check(replaced(kOriginal, "#define BLOCK 128", "#define BLOCK 100")),
                  "src/a.cpp:3: knob BLOCK set to `100`, which is not one of its values "
                  "(64, 128, 256)");
}

TEST(Scope, KnobLineChangeWithoutKnobsIsRejected) {
  expect_rejected(check(replaced(kOriginal, "kLanes = 4;", "kLanes = 8;"), {}),
                  "src/a.cpp:4: line outside the target function changed: "
                  "`static constexpr int kLanes = 8;` (was `static constexpr int kLanes = 4;`)");
}

TEST(Scope, KnobLineWithAnotherChangeIsRejected) {
  expect_rejected(
      check(replaced(kOriginal, "static constexpr int kLanes = 4;", "constexpr int kLanes = 8;")),
      "src/a.cpp:4: line outside the target function changed: `constexpr int kLanes = 8;` "
      "(was `static constexpr int kLanes = 4;`)");
}

TEST(Scope, EditOfAnotherFunctionAboveIsRejected) {
  expect_rejected(check(replaced(kOriginal, "return x + 1;", "return x + 2;")),
                  "src/a.cpp:7: line outside the target function changed: `return x + 2;` "
                  "(was `return x + 1;`)");
}

TEST(Scope, EditOfAnotherFunctionBelowIsRejected) {
  expect_rejected(check(kBefore + kFaster + replaced(kAfter, "y * 2", "y * 3")),
                  "src/a.cpp:16: line outside the target function changed: `return y * 3;` "
                  "(was `return y * 2;`)");
}

TEST(Scope, EditBelowIsReportedAfterAHelperInsertedAfter) {
  // Helper lines come first and are fine; the changed line is the one reported.
  const std::string candidate =
      kBefore + kFaster + "\n" + kHelper + replaced(kAfter, "y * 2", "y * 3");
  expect_rejected(check(candidate),
                  "src/a.cpp:18: line outside the target function changed: `return y * 3;` "
                  "(was `return y * 2;`)");
}

TEST(Scope, FirstOfTwoEditsBelowIsReported) {
  const std::string after =
      "\nint after(int y) {\n  return y * 2;\n}\n\nint last() {\n  return 7;\n}\n";
  const std::string original = kBefore + kTarget + after;
  std::string candidate = replaced(original, "y * 2", "y * 5");
  candidate = replaced(candidate, "return 7;", "return 8;");
  const Extent extent = find_definition(original, "target", "src/a.cpp");
  expect_rejected(check_target_file(original, candidate, extent, "target", "src/a.cpp"),
                  "src/a.cpp:18: line outside the target function changed: `return y * 5;` "
                  "(was `return y * 2;`)");
}

TEST(Scope, LineAddedBelowIsRejected) {
  expect_rejected(check(kBefore + kFaster + replaced(kAfter, "  return", "  y += 1;\n  return")),
                  "src/a.cpp:16: line added outside the target function: `y += 1;`");
}

TEST(Scope, IncludeAddedAtTopIsRejected) {
  expect_rejected(check("#include <numeric>\n" + kBefore + kFaster + kAfter),
                  "src/a.cpp:1: line added outside the target function: `#include <numeric>`");
}

TEST(Scope, LineDeletedAboveIsRejected) {
  expect_rejected(check(replaced(kOriginal, "static constexpr int kLanes = 4;\n", "")),
                  "src/a.cpp:4: line outside the target function removed: "
                  "`static constexpr int kLanes = 4;`");
}

TEST(Scope, LineDeletedBelowIsRejected) {
  expect_rejected(check(kBefore + kFaster + replaced(kAfter, "  return y * 2;\n", "")),
                  "src/a.cpp:18: line outside the target function removed: `return y * 2;`");
}

TEST(Scope, TextGluedToTheNextFunctionIsRejected) {
  expect_rejected(check(kBefore + kFaster + replaced(kAfter, "int after", "static int after")),
                  "src/a.cpp:15: line outside the target function changed: "
                  "`static int after(int y) {` (was `int after(int y) {`)");
}

TEST(Scope, FunctionRemovedIsRejected) {
  expect_rejected(check(kBefore + kHelper + kAfter),
                  "src/a.cpp:11: candidate no longer defines 'target'");
}

TEST(Scope, FunctionRenamedIsRejected) {
  expect_rejected(check(replaced(kOriginal, "int target(", "int target2(")),
                  "src/a.cpp:11: candidate no longer defines 'target'");
}

TEST(Scope, OverloadElsewhereDoesNotCountAsTheTarget) {
  const std::string original = kOriginal + "int target(int x) { return x; }\n";
  const Extent extent = find_definition(original, "target", "src/a.cpp", "std::vector<int>");
  EXPECT_EQ(extent.line_begin, 11u);
  const std::string without = kBefore + kHelper + kAfter + "int target(int x) { return x; }\n";
  expect_rejected(check_target_file(original, without, extent, "target", "src/a.cpp", {}),
                  "src/a.cpp:11: candidate no longer defines 'target'");
  const std::string faster = kBefore + kFaster + kAfter + "int target(int x) { return x; }\n";
  expect_ok(check_target_file(original, faster, extent, "target", "src/a.cpp", {}));
}

TEST(Scope, FunctionAndNextLineRemovedIsRejected) {
  expect_rejected(check(kBefore + replaced(kAfter, "int after(int y) {\n", "")),
                  "src/a.cpp:17: line outside the target function removed: `int after(int y) {`");
}

TEST(Scope, EmptyCandidateIsRejected) {
  expect_rejected(check(""),
                  "src/a.cpp:1: line outside the target function removed: "
                  "`#include <vector>`");
}

TEST(Scope, QualifiedTargetInNamespace) {
  const std::string original =
      "namespace ns {\n\nvoid fn(float* p) {\n  p[0] = 1;\n}\n\n}  // namespace ns\n";
  const Extent extent = find_definition(original, "ns::fn", "k.cu");
  const std::string faster = replaced(original, "p[0] = 1;", "*p = 1;");
  expect_ok(check_target_file(original, faster, extent, "ns::fn", "k.cu", {}));
  expect_rejected(
      check_target_file(original, replaced(faster, "}  // namespace ns", "}"), extent, "ns::fn",
                        "k.cu", {}),
      "k.cu:7: line outside the target function changed: `}` (was `}  // namespace ns`)");
}

TEST(Scope, TargetSharingALineWithOtherCode) {
  const std::string original = "int a = 1; int fn() { return a; } int b = 2;\nint c;\n";
  const Extent extent = find_definition(original, "fn", "x.c");
  expect_ok(check_target_file(original, replaced(original, "return a;", "return 1;"), extent, "fn",
                              "x.c", {}));
  EXPECT_FALSE(
      check_target_file(original, replaced(original, "b = 2", "b = 3"), extent, "fn", "x.c", {})
          .ok);
  EXPECT_FALSE(
      check_target_file(original, replaced(original, "a = 1", "a = 3"), extent, "fn", "x.c", {})
          .ok);
}

TEST(Scope, InsertedMacroThatChangesCodeOutsideIsRejected) {
  expect_rejected(check(kBefore + "#undef BLOCK\n#define BLOCK 7\n" + kFaster + kAfter),
                  "src/a.cpp:11: `#undef BLOCK` would change code outside the target function, "
                  "which uses BLOCK");
  expect_rejected(check(kBefore + kFaster + "#define after(y) 0\n" + kAfter),
                  "src/a.cpp:14: `#define after(y) 0` would change code outside the target "
                  "function, which uses after");
}

TEST(Scope, InsertedMacroOfItsOwnIsAllowed) {
  const std::string helper =
      "#define SQ(x) ((x) * (x))\nstatic int sq(int a) { return SQ(a); }\n#undef SQ\n";
  expect_ok(check(kBefore + helper + kFaster + kAfter));
}

// A 60,000-character #define (issue 22, point 9): the macro scan used std::regex, which
// recursed once per character and overflowed the stack.
TEST(Scope, LongMacroLinesAreCheckedWithoutCrashing) {
  const std::string value(60'000, '7');
  expect_rejected(check(kBefore + "#define BLOCK " + value + "\n" + kFaster + kAfter),
                  "src/a.cpp:11: `#define BLOCK " + std::string(157 - 14, '7') +
                      "...` would change code outside the target function, which uses BLOCK");
  expect_ok(check(kBefore + "#define MINE " + value + "\n" + kFaster + kAfter));
  expect_ok(check(kBefore + "#define " + std::string(60'000, 'M') + " 1\n" + kFaster + kAfter));
  expect_rejected(check(kBefore + "#undef " + std::string(60'000, ' ') + "BLOCK\n" + kFaster + kAfter),
                  "src/a.cpp:11: `#undef " + std::string(157 - 7, ' ') +
                      "...` would change code outside the target function, which uses BLOCK");
}

TEST(Scope, InsertedTextMayNotSpliceOntoTheNextLine) {
  // The comment would swallow `int after(int y) {`.
  expect_rejected(check(kBefore + kFaster + "// see below \\\n" + kAfter.substr(1)),
                  "src/a.cpp:14: the new text ends with a backslash that splices it onto the "
                  "line after it");
}

TEST(Scope, LineSplicedOntoAMacroAboveIsNotPartOfTheRegion) {
  const std::string original = "#define FOO 1 \\\n\nint fn() { return FOO; }\n";
  const Extent extent = find_definition(original, "fn", "x.c");
  EXPECT_EQ(extent.line_begin, 3u);
  const std::string candidate = "#define FOO 1 \\\n+ 2\nint fn() { return FOO; }\n";
  EXPECT_FALSE(check_target_file(original, candidate, extent, "fn", "x.c", {}).ok);
  expect_ok(check_target_file(original, replaced(original, "return FOO;", "return 1;"), extent,
                              "fn", "x.c", {}));
}

TEST(Scope, ReplaceDefinition) {
  const Extent extent = find_definition(kOriginal, "target", "src/a.cpp");
  const std::string body = "int target(const std::vector<int>& v) { return 0; }";
  const std::string out = replace_definition(kOriginal, extent, body);
  EXPECT_EQ(out, kBefore + body + "\n" + kAfter);
  expect_ok(check(out));
}

// libpopcnt's shape: a function whose body ends its own `#if` with `#endif`, then an
// `#endif` line between it and the next function of the unit. That one-line gap also
// stands inside the body above; matched there, it cut get_xcr0 in two and every candidate,
// the unchanged text included, was "no longer defines 'get_xcr0'".
TEST(Scope, AGapOfOneEndifIsNotFoundInsideTheBodyAboveIt) {
  const std::string original =
      "#include <stdint.h>\n"
      "#if defined(__x86_64__)\n"
      "static inline int get_xcr0(void) {\n"
      "  int xcr0;\n"
      "#if defined(_MSC_VER)\n"
      "  xcr0 = 1;\n"
      "#else\n"
      "  xcr0 = 2;\n"
      "#endif\n"
      "  return xcr0;\n"
      "}\n"
      "#endif\n"
      "static inline int popcnt(const uint8_t* p, int n) {\n"
      "  int c = get_xcr0() - 2;\n"
      "  for (int i = 0; i < n; ++i) c += __builtin_popcount(p[i]);\n"
      "  return c;\n"
      "}\n";
  const Unit unit = find_unit(original, "popcnt.h", find_definition(original, "popcnt", "popcnt.h"), {});
  ASSERT_EQ(unit.names(), (std::vector<std::string>{"popcnt", "get_xcr0"}));
  expect_ok(check_unit_file(original, original, unit, "popcnt.h", {}));
  expect_ok(check_unit_file(original, replaced(original, "c += __builtin_popcount(p[i]);", "c += __builtin_popcount(p[i]) ;"),
                            unit, "popcnt.h", {}));
  // The gap itself still may not change.
  EXPECT_FALSE(check_unit_file(original, replaced(original, "}\n#endif\nstatic", "}\n#endif // x86\nstatic"), unit,
                               "popcnt.h", {}).ok);
}

// One name defined once per `#if` branch (libpopcnt's popcnt64), each definition a region
// of the unit: the gap after a region is looked for after that region's definition, not
// after the name's last one further down.
TEST(Scope, ANameDefinedInEachBranchOfAnIfIsOneRegionPerBranch) {
  const std::string original =
      "#if defined(A)\n"
      "static inline int pc64(int x) { return x + 1; }\n"
      "#elif defined(B)\n"
      "static inline int pc64(int x) { return x + 2; }\n"
      "#else\n"
      "static inline int pc64(int x) { return x + 3; }\n"
      "#endif\n"
      "static inline int target(int x) { return pc64(x); }\n";
  const Unit unit = find_unit(original, "pc.h", find_definition(original, "target", "pc.h"), {});
  expect_ok(check_unit_file(original, original, unit, "pc.h", {}));
  expect_ok(check_unit_file(original, replaced(original, "return pc64(x);", "return pc64(x) + 0;"), unit, "pc.h", {}));
  EXPECT_FALSE(check_unit_file(original, replaced(original, "#elif defined(B)", "#elif defined(C)"), unit, "pc.h", {}).ok);
}

// A unit of three: `target` calls `other` (above it) and `after` (below it); the knob
// lines and kLanes stand apart from them.
TEST(Scope, EveryFunctionOfTheUnitMayChangeInPlace) {
  const std::string original =
      replaced(kOriginal, "for (int x : v) s += x;", "for (int x : v) s += other(x) + after(x);");
  const Unit unit = find_unit(original, "src/a.cpp", find_definition(original, "target", "src/a.cpp"), {});
  ASSERT_EQ(unit.names(), (std::vector<std::string>{"target", "other", "after"}));
  const std::string both = replaced(replaced(original, "return x + 1;", "return 1 + x;"), "return y * 2;", "return y + y;");
  expect_ok(check_unit_file(original, both, unit, "src/a.cpp", kKnobs));
  // A helper beside the first and a knob's value changed between them.
  expect_ok(check_unit_file(original,
                            replaced(replaced(both, "static int other", kHelper + "static int other"),
                                     "#define BLOCK 128 ", "#define BLOCK 256 "),
                            unit, "src/a.cpp", kKnobs));

  // Between the unit's functions nothing else may change, and the message says whose unit.
  expect_rejected(check_unit_file(original, replaced(both, "kLanes = 4", "kLanes = 5"), unit, "src/a.cpp", kKnobs),
                  "src/a.cpp:4: knob kLanes set to `5`, which is not one of its values (2, 4, 8)");
  const std::string gap_line = "static int between = 0;\n";
  const std::string with_gap = replaced(original, "// Sums the values.\n", gap_line + "\n// Sums the values.\n");
  const Unit gap_unit =
      find_unit(with_gap, "src/a.cpp", find_definition(with_gap, "target", "src/a.cpp"), {});
  expect_rejected(check_unit_file(with_gap, replaced(with_gap, gap_line, "static int between = 1;\n"), gap_unit,
                                  "src/a.cpp", kKnobs),
                  "src/a.cpp:10: line outside the unit of 'target' changed: `static int between = 1;` "
                  "(was `static int between = 0;`)");
  // Every function of the unit stays defined.
  expect_rejected(check_unit_file(original, replaced(original, "static int other(int x) {\n  return x + 1;\n}\n", ""),
                                  unit, "src/a.cpp", kKnobs),
                  "src/a.cpp:6: candidate no longer defines 'other'");
}

}  // namespace
}  // namespace maxcode
