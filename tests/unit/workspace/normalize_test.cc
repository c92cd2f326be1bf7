#include "runner/workspace/normalize.h"

#include <gtest/gtest.h>

namespace maxcode {
namespace {

TEST(Normalize, CommentsAndLayoutDoNotMatter) {
  EXPECT_EQ(normalize_code("int  f ( int x ) {\n  return x+1; // add\n}"),
            normalize_code("int f(int x){ /* same */ return x + 1;}"));
}

TEST(Normalize, CodeDifferencesDo) {
  EXPECT_NE(normalize_code("int f(int x){return x+1;}"), normalize_code("int f(int x){return x+2;}"));
  EXPECT_NE(normalize_code("unsigned int x;"), normalize_code("unsignedint x;"));
}

TEST(Normalize, LiteralsAreKeptExactly) {
  EXPECT_NE(normalize_code("s = \"a  b\";"), normalize_code("s = \"a b\";"));
  EXPECT_EQ(normalize_code("s = \"// not a comment\";"), "s=\"// not a comment\";");
  EXPECT_EQ(normalize_code("c = '\\'';"), "c='\\'';");
}

TEST(Normalize, DirectivesKeepTheirLineEnds) {
  EXPECT_NE(normalize_code("#define A 1\nint x = A;"), normalize_code("#define A 1 int x = A;"));
  EXPECT_EQ(normalize_code("#define A 1\n   int x;"), normalize_code("#define A 1\nint   x;"));
  // Inside a preprocessor line: comments and layout do not matter either; a continued
  // line is one directive, and a `#` that is not first on its line is no directive.
  EXPECT_EQ(normalize_code("int y;\n  #  define  A(x) /* twice */ ((x) + \\\n (x))\nint z;"),
            "int y;\n#define A(x)((x)+(x))\nint z;");
  EXPECT_EQ(normalize_code("a = b # c;"), "a=b#c;");
  EXPECT_EQ(normalize_code("#include <a/b.h> // why\n"), "#include<a/b.h>\n");
}

}  // namespace
}  // namespace maxcode
