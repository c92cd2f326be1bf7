// Replies in the shapes real models give, taken through everything that stands between
// a reply and a built candidate: reading the reply, taking out what the file already
// has, placing the code, the scope rule, and the compiler. Every usable shape must
// become a candidate that compiles; an unusable one must say why. The table printed at
// the end is the figure the closing note quotes (shapes x built or not).
#include <gtest/gtest.h>

#include <cstdio>

#include "runner/search/reply.h"
#include "runner/util/files.h"
#include "runner/util/process.h"
#include "runner/workspace/placement.h"
#include "runner/workspace/scope.h"
#include "runner/workspace/source_extent.h"
#include "runner/workspace/unchanged_text.h"
#include "runner/workspace/unit.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

const std::string kOriginal =
    "long long sum_squares(const int* v, int n) {\n"
    "  long long s = 0;\n"
    "  for (int pass = 0; pass < 4; ++pass) {\n"
    "    s = 0;\n"
    "    for (int i = 0; i < n; ++i) s += square(v[i]);\n"
    "  }\n"
    "  return s;\n"
    "}\n";

const std::string kFile =
    "#include <cstdint>\n"
    "#include <vector>\n"
    "\n"
    "// Squares, summed.\n"
    "struct Stats {\n"
    "  long long total;\n"
    "  int count;\n"
    "};\n"
    "\n"
    "static int square(int x) { return x * x; }\n"
    "\n" +
    kOriginal +
    "\n"
    "Stats stats(const int* v, int n) { return {sum_squares(v, n), n}; }\n";

const std::string kNew =
    "long long sum_squares(const int* v, int n) {\n"
    "  long long s = 0;\n"
    "  for (int i = 0; i < n; ++i) s += square(v[i]);\n"
    "  return s;\n"
    "}\n";

std::string whole_file(const std::string& target) {
  std::string file = kFile;
  file.replace(file.find(kOriginal), kOriginal.size(), target);
  return file;
}

std::string block(const std::string& code, const std::string& fence = "```cpp") {
  return fence + "\n" + code + fence.substr(0, 3) + "\n";
}

struct Shape {
  std::string name;
  std::string reply;
  bool usable = true;
  std::string finish = "stop";
  std::string expected_error;  // for unusable shapes: part of the reason
};

std::vector<Shape> shapes() {
  const std::string neighbours_reformatted =
      "#include <cstdint>\n#include <vector>\n\n// Squares, summed.\nstruct Stats { long long total; int count; };\n\n"
      "static int square(int x) {\n  return x * x;\n}\n\n" + kNew +
      "\n// Totals and count together.\nStats stats(const int* v, int n) {\n  return {sum_squares(v, n), n};\n}\n";
  std::string crlf;
  for (char c : "Here it is:\n" + block(kNew)) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  return {
      {"definition alone", "One pass is enough.\n\n" + block(kNew)},
      {"helper before it",
       block("static inline long long square64(int x) { return static_cast<long long>(x) * x; }\n\n"
             "long long sum_squares(const int* v, int n) {\n  long long s = 0;\n"
             "  for (int i = 0; i < n; ++i) s += square64(v[i]);\n  return s;\n}\n")},
      {"whole file", "Here is the whole file:\n\n" + block(whole_file(kNew))},
      {"whole file, neighbours reformatted", block(neighbours_reformatted)},
      {"whole file with a test main",
       block(whole_file(kNew) + "\nint main() {\n  int v[3] = {1, 2, 3};\n  return sum_squares(v, 3) == 14 ? 0 : 1;\n}\n")},
      {"<think> draft, then the answer",
       "<think>\nA first try:\n" + block("long long sum_squares(const int* v, int n) { return 0; }\n") +
           "No, that is wrong.\n</think>\n\nOne pass suffices:\n" + block(kNew)},
      {"<thinking> section", "<thinking>The passes repeat.</thinking>\n" + block(kNew)},
      {"original quoted, then the new one", "Before:\n" + block(kOriginal) + "\nAfter:\n" + block(kNew)},
      {"two versions, the last is final",
       "A first version:\n" +
           block("long long sum_squares(const int* v, int n) {\n  long long s = 0;\n"
                 "  for (int i = 0; i < n; ++i) s += (long long)v[i] * v[i];\n  return s;\n}\n") +
           "\nEven simpler, keeping the helper:\n" + block(kNew)},
      {"the answer, then a recap of it", block(kNew) + "\nTo recap, the final code:\n" + block(kNew)},
      {"fence without a language", block(kNew, "```")},
      {"tilde fence", block(kNew, "~~~cpp")},
      {"CRLF line endings", crlf},
      {"an #include the file has", block("#include <cstdint>\n\n" + kNew)},
      {"markdown headings and lists",
       "## Analysis\n- four passes recompute `s`\n- only the last counts\n\n## Code\n" + block(kNew) +
           "\n## Expected gain\nAbout 4x.\n"},
      {"refusal", "I'm sorry, but I can't help with that.", false, "stop", "declined"},
      {"advice without code", "You could remove the outer loop.", false, "stop", "no fenced code block"},
      {"cut off by the token limit", "```cpp\nlong long sum_squares(const int* v, int n) {\n  long long s = 0;\n",
       false, "length", "cut off"},
      {"all reasoning, never answered", "<think>\nThe outer loop repeats the work, so", false, "length",
       "still reasoning"},
  };
}

TEST(ReplyShapes, EveryUsableShapeBecomesACandidateThatCompiles) {
  const Unit unit = find_unit(kFile, "src/sum.cc", find_definition(kFile, "sum_squares", "src/sum.cc"), {});
  testing::TempDir dir;
  int usable = 0, built = 0;
  std::string table = "| reply shape | usable | built | reason when not |\n| --- | --- | --- | --- |\n";
  for (const Shape& shape : shapes()) {
    SCOPED_TRACE(shape.name);
    std::string why;
    bool ok = false;
    const ParsedReply parsed = parse_reply(shape.reply, "sum_squares", shape.finish, kOriginal);
    if (!parsed.code) {
      why = parsed.error;
    } else {
      std::vector<std::string> unit_names;
      for (const UnitFunction& f : unit.functions) unit_names.push_back(f.base_name);
      const Placement placed = place_definitions(kFile, unit, drop_unchanged(kFile, *parsed.code, unit_names));
      const ScopeVerdict scope =
          placed.error.empty() ? check_unit_file(kFile, placed.text, unit, "src/sum.cc") : ScopeVerdict{false, placed.error};
      if (!scope.ok) {
        why = scope.reason;
      } else {
        write_text(dir / "sum.cc", placed.text);
        Command compile;
        compile.shell = "g++ -std=c++17 -c -o /dev/null " + (dir / "sum.cc").string() + " 2>&1";
        const Outcome out = run(compile);
        ok = out.ok();
        if (!ok) why = "does not compile: " + out.tail(300);
      }
    }
    usable += shape.usable;
    built += shape.usable && ok;
    if (shape.usable) EXPECT_TRUE(ok) << why;
    else {
      EXPECT_FALSE(ok);
      EXPECT_NE(why.find(shape.expected_error), std::string::npos) << why;
    }
    table += "| " + shape.name + " | " + (shape.usable ? "yes" : "no") + " | " + (ok ? "yes" : "no") + " | " +
             why.substr(0, 90) + " |\n";
  }
  std::printf("%s\nusable replies built: %d of %d\n", table.c_str(), built, usable);
  EXPECT_EQ(built, usable);
}

// What is taken out and what stays, piece by piece.
TEST(ReplyShapes, OnlyWhatTheFileHoldsUnchangedIsTakenOut) {
  const std::string header =
      "#ifndef SUM_H\n#define SUM_H\n#include <cstdint>\n#define PASSES 4\n\n"
      "inline int square(int x) { return x * x; }\n\n"
      "inline long long sum_squares(const int* v, int n) {\n  long long s = 0;\n"
      "#pragma GCC unroll 4\n  for (int i = 0; i < n; ++i) s += square(v[i]);\n  return s;\n}\n#endif\n";
  const std::string reply =
      "#ifndef SUM_H\n#define SUM_H\n#include <cstdint>\n#define PASSES 4\n\n"
      "inline int square(int x) {\n  return x * x;  // unchanged but for this comment\n}\n\n"
      "inline long long sum_squares(const int* v, int n) {\n  long long s = 0;\n"
      "#pragma GCC unroll 4\n  for (int i = 0; i < n; ++i) s += (long long)v[i] * v[i];\n  return s;\n}\n#endif\n";
  const std::string kept = drop_unchanged(header, reply);
  EXPECT_EQ(kept.find("SUM_H"), std::string::npos) << kept;       // the guard the file has
  EXPECT_EQ(kept.find("#include"), std::string::npos) << kept;     // a line the file has
  EXPECT_EQ(kept.find("#define PASSES"), std::string::npos) << kept;
  EXPECT_EQ(kept.find("inline int square"), std::string::npos) << kept;  // unchanged, comments aside
  EXPECT_NE(kept.find("(long long)v[i] * v[i]"), std::string::npos) << kept;  // the change stays
  EXPECT_NE(kept.find("#pragma GCC unroll 4"), std::string::npos) << kept;  // inside the body: stays

  // A neighbour changed by one character stays, and the scope rule then names it.
  const std::string file = "int helper(int x) { return x + 1; }\n\nint f(int x) { return helper(x) * 2; }\n";
  const std::string changed = drop_unchanged(file, "int helper(int x) { return x + 2; }\n\nint f(int x) { return helper(x) << 1; }\n");
  EXPECT_NE(changed.find("x + 2"), std::string::npos) << changed;
  // Code with nothing the file has comes back as it was.
  const std::string fresh = "int f(int x) { return x << 1; }\n";
  EXPECT_EQ(drop_unchanged(file, fresh), fresh);
  // A definition of the unit's function stays though unchanged: the original as a
  // candidate is the original, not nothing.
  EXPECT_NE(drop_unchanged(file, "int helper(int x) { return x + 1; }\n", {"helper"}).find("x + 1"), std::string::npos);
  // A `main` is kept where the file has one (it is then the file's, and out of scope).
  const std::string with_main = "int main() { return 0; }\nint f(int x) { return x; }\n";
  EXPECT_NE(drop_unchanged("int main() { return 1; }\nint f(int x) { return x + 0; }\n", with_main).find("main"),
            std::string::npos);
}

}  // namespace
}  // namespace maxcode
